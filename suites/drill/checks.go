package drill

import (
	"fmt"
	"sort"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// snapshot is what a drill holds of every Job at one moment.
type snapshot map[string]batchv1.Job // namespace/name → Job

// survival lists what of a Job known before a change is gone after it: spec
// fields (the ones a flight changes itself, suspend and parallelism, aside)
// and status fields that were set (a controller that does not know a field
// drops it when it writes the whole status). Both releases of the drills
// know every field compared; a path through a release without one of them
// reports it by name.
func survival(before, after snapshot, when string) []string {
	var out []string
	var keys []string
	for k := range before {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b, ok := after[k]
		if !ok {
			continue // finished and deleted with its namespace
		}
		a := before[k]
		as, bs := *a.Spec.DeepCopy(), *b.Spec.DeepCopy()
		as.Suspend, bs.Suspend = nil, nil
		as.Parallelism, bs.Parallelism = nil, nil
		if !equality.Semantic.DeepEqual(as, bs) {
			out = append(out, fmt.Sprintf("%s: Job %s: spec changed across the change: %s", when, k, specDiff(as, bs)))
		}
		st, nt := a.Status, b.Status
		lost := func(field string, had, has bool) {
			if had && !has {
				out = append(out, fmt.Sprintf("%s: Job %s: status.%s was set before and is gone after", when, k, field))
			}
		}
		lost("ready", st.Ready != nil, nt.Ready != nil)
		lost("terminating", st.Terminating != nil, nt.Terminating != nil)
		lost("startTime", st.StartTime != nil, nt.StartTime != nil)
		lost("completionTime", st.CompletionTime != nil, nt.CompletionTime != nil)
		lost("failedIndexes", st.FailedIndexes != nil, nt.FailedIndexes != nil)
		lost("completedIndexes", st.CompletedIndexes != "", nt.CompletedIndexes != "")
		have := map[batchv1.JobConditionType]bool{}
		for _, c := range nt.Conditions {
			have[c.Type] = true
		}
		for _, c := range st.Conditions {
			lost("conditions["+string(c.Type)+"]", true, have[c.Type])
		}
		if nt.Failed < st.Failed || nt.Succeeded < st.Succeeded {
			out = append(out, fmt.Sprintf("%s: Job %s: counters went back across the change (failed %d → %d, succeeded %d → %d): finished pods lost in the handover",
				when, k, st.Failed, nt.Failed, st.Succeeded, nt.Succeeded))
		}
	}
	return out
}

// specDiff names the top-level spec fields that differ.
func specDiff(a, b batchv1.JobSpec) string {
	var fields []string
	check := func(name string, x, y any) {
		if !equality.Semantic.DeepEqual(x, y) {
			fields = append(fields, name)
		}
	}
	check("completions", a.Completions, b.Completions)
	check("activeDeadlineSeconds", a.ActiveDeadlineSeconds, b.ActiveDeadlineSeconds)
	check("podFailurePolicy", a.PodFailurePolicy, b.PodFailurePolicy)
	check("successPolicy", a.SuccessPolicy, b.SuccessPolicy)
	check("backoffLimit", a.BackoffLimit, b.BackoffLimit)
	check("backoffLimitPerIndex", a.BackoffLimitPerIndex, b.BackoffLimitPerIndex)
	check("maxFailedIndexes", a.MaxFailedIndexes, b.MaxFailedIndexes)
	check("selector", a.Selector, b.Selector)
	check("manualSelector", a.ManualSelector, b.ManualSelector)
	check("template", a.Template, b.Template)
	check("ttlSecondsAfterFinished", a.TTLSecondsAfterFinished, b.TTLSecondsAfterFinished)
	check("completionMode", a.CompletionMode, b.CompletionMode)
	check("podReplacementPolicy", a.PodReplacementPolicy, b.PodReplacementPolicy)
	check("managedBy", a.ManagedBy, b.ManagedBy)
	if len(fields) == 0 {
		return "a field jobconform does not name"
	}
	return strings.Join(fields, ", ")
}

// twoControllerRisk rewrites the failures of a delegated Job's run in a
// state where the built-in controller's JobManagedBy gate is off: there the
// built-in reconciles every Job whatever its spec.managedBy says (KEP-4368's
// stated risk of such a downgrade), so what it wrote is reported as exactly
// that, naming the Job and the step.
func twoControllerRisk(failures []string, job, step string) []string {
	out := make([]string, 0, len(failures))
	for _, f := range failures {
		out = append(out, fmt.Sprintf("two-controller risk (KEP-4368): Job %s is delegated, but in %s the built-in controller's JobManagedBy gate is off and it acts on the Job too: %s", job, step, f))
	}
	return out
}
