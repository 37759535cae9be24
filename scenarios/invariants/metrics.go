package invariants

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobconform/jobconform/internal/timeline"
)

// MetricSamples are the controller's counters read just before the Job was
// created and once the run settled, on a cluster where nothing else moved
// them (a serial scenario), keyed by MetricKey.
type MetricSamples struct {
	Before, After map[string]float64
	// Manager is the controller's own spec.managedBy value
	// (kubernetes.io/job-controller for the built-in one): a Job naming
	// another counts in jobs_by_external_controller_total.
	Manager string
}

// The Job controller metrics the recording can account for, as the built-in
// one names them (v1.36.3 and v1.37.1 pkg/controller/job/metrics; the
// reference controller exposes the same).
const (
	MetricJobsFinished         = "job_controller_jobs_finished_total"
	MetricPodsFinished         = "job_controller_job_pods_finished_total"
	MetricFailuresByPolicy     = "job_controller_pod_failures_handled_by_failure_policy_total"
	MetricFinishedIndexes      = "job_controller_job_finished_indexes_total"
	MetricByExternalController = "job_controller_jobs_by_external_controller_total"
)

// JudgedMetrics are the counters MetricsAgree compares.
var JudgedMetrics = []string{MetricJobsFinished, MetricPodsFinished, MetricFailuresByPolicy, MetricFinishedIndexes, MetricByExternalController}

// MetricKey is a sample's key: name{label="value",...}, labels sorted.
func MetricKey(name string, labels map[string]string) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(labels)) {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%q", k, labels[k])
	}
	b.WriteByte('}')
	return b.String()
}

// MetricsAgree: the controller's counters rose by what the recording says
// happened to the Job — it finished once, with the reason of its terminal
// condition (jobs_finished_total); its status counted the pods the counters
// say (job_pods_finished_total; for an Indexed Job the completed indexes,
// as upstream's recordJobPodFinished); each failed pod whose finalizer went
// is counted once under the action of the pod failure policy's rule it
// matched (pod_failures_handled_by_failure_policy_total); an Indexed Job's
// finished indexes (job_finished_indexes_total); and a Job naming another
// manager is counted once (jobs_by_external_controller_total). Read in
// v1.36.3 and v1.37.1 (pkg/controller/job/job_controller.go), which agree.
// Judged only where the run read the controller's metrics (Context.Metrics).
var MetricsAgree = Invariant{
	Name:        "metrics-agree",
	Description: "the controller's job_controller_* counters rose by what the recording shows (serial scenarios whose controller exposes /metrics)",
	Applies:     func(ctx Context) bool { return ctx.Metrics != nil },
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		want, last := expectedMetrics(ctx, t)
		if last.Kind == "" {
			return nil
		}
		got := ctx.Metrics.Rises()
		var out []Violation
		for _, k := range slices.Sorted(maps.Keys(joinKeys(want, got))) {
			if got[k] != want[k] {
				out = append(out, violation("metrics-agree", last, "%s rose by %s; the recording shows %s", k, num(got[k]), num(want[k])))
			}
		}
		return out
	},
}

// Rises is how much each series of the judged counters rose over the run
// (the series that did not rise left out).
func (m *MetricSamples) Rises() map[string]float64 {
	out := map[string]float64{}
	for k, v := range m.After {
		if judged(k) {
			if d := v - m.Before[k]; d != 0 {
				out[k] = d
			}
		}
	}
	return out
}

func judged(key string) bool {
	name, _, _ := strings.Cut(key, "{")
	return slices.Contains(JudgedMetrics, name)
}

func joinKeys(a, b map[string]float64) map[string]float64 {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// expectedMetrics are the counters' rises the recording accounts for (zero
// rises left out), and the Job's last entry.
func expectedMetrics(ctx Context, t timeline.Timeline) (map[string]float64, timeline.Entry) {
	want := map[string]float64{}
	add := func(name string, v float64, labels map[string]string) {
		if v != 0 {
			want[MetricKey(name, labels)] += v
		}
	}
	jobs := jobEntries(ctx, t)
	if len(jobs) == 0 {
		return want, timeline.Entry{}
	}
	last := jobs[len(jobs)-1]
	j := last.Job()
	mode := string(batchv1.NonIndexedCompletion)
	if isIndexedJob(j) {
		mode = string(batchv1.IndexedCompletion)
	}
	if mb := j.Spec.ManagedBy; mb != nil && *mb != ctx.Metrics.Manager && *mb != batchv1.JobControllerName {
		// Another controller's Job: counted once, and nothing else moves.
		add(MetricByExternalController, 1, map[string]string{"controller_name": *mb})
		return want, last
	}
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			add(MetricJobsFinished, 1, map[string]string{"completion_mode": mode, "result": "succeeded", "reason": c.Reason})
		case batchv1.JobFailed:
			add(MetricJobsFinished, 1, map[string]string{"completion_mode": mode, "result": "failed", "reason": c.Reason})
		}
	}
	succeeded := float64(j.Status.Succeeded)
	if isIndexedJob(j) {
		completions := int(*j.Spec.Completions)
		inRange := func(list string) float64 {
			n := 0
			for _, ix := range indexList(list) {
				if ix < completions {
					n++
				}
			}
			return float64(n)
		}
		succeeded = inRange(j.Status.CompletedIndexes)
		label := "global"
		if j.Spec.BackoffLimitPerIndex != nil {
			label = "perIndex"
			if j.Status.FailedIndexes != nil {
				add(MetricFinishedIndexes, inRange(*j.Status.FailedIndexes), map[string]string{"status": "failed", "backoffLimit": label})
			}
		}
		add(MetricFinishedIndexes, succeeded, map[string]string{"status": "succeeded", "backoffLimit": label})
	}
	add(MetricPodsFinished, succeeded, map[string]string{"completion_mode": mode, "result": "succeeded"})
	add(MetricPodsFinished, float64(j.Status.Failed), map[string]string{"completion_mode": mode, "result": "failed"})
	if j.Spec.PodFailurePolicy != nil {
		for action, n := range policyActions(ctx, t) {
			add(MetricFailuresByPolicy, float64(n), map[string]string{"action": string(action)})
		}
	}
	return want, last
}

// policyActions counts, by the action of the rule each matched, the Job's
// pods that lost the tracking finalizer as failed: Failed, or not succeeded
// when deleted (unless only failed pods are replaced) or when the Job was
// failing (upstream's trackJobStatusAndRemoveFinalizers). A pod is matched
// as it was when its finalizer went.
func policyActions(ctx Context, t timeline.Timeline) map[batchv1.PodFailurePolicyAction]int {
	out := map[batchv1.PodFailurePolicyAction]int{}
	done := map[types.UID]bool{}
	replay(ctx, t, func(e timeline.Entry, before, after *world) {
		if e.Kind != "Pod" || before.job == nil {
			return
		}
		p := e.Pod()
		old, ok := before.pods[p.UID]
		if !ok || done[p.UID] || !hasFinalizer(old, ctx.Finalizer) || hasFinalizer(p, ctx.Finalizer) {
			return
		}
		done[p.UID] = true
		j := before.job
		if p.Status.Phase == corev1.PodSucceeded || !(countsAsFailed(p, j) || failing(j)) {
			return
		}
		if isIndexedJob(j) {
			if ix, err := strconv.Atoi(indexOf(p)); err != nil || ix < 0 || ix >= int(*j.Spec.Completions) {
				return
			}
		}
		if a := policyAction(j.Spec.PodFailurePolicy, p); a != "" {
			out[a]++
		}
	})
	return out
}

func hasFinalizer(p *corev1.Pod, f string) bool { return slices.Contains(p.Finalizers, f) }

// failing: the Job has a FailureTarget or Failed condition.
func failing(j *batchv1.Job) bool {
	return slices.ContainsFunc(j.Status.Conditions, func(c batchv1.JobCondition) bool {
		return (c.Type == batchv1.JobFailureTarget || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue
	})
}

// policyAction is the action of the first rule p matches ("" for none), as
// upstream's matchPodFailurePolicy: a rule on exit codes looks at terminated
// containers (then init containers) with a non-zero code, one on conditions
// at the pod's conditions.
func policyAction(policy *batchv1.PodFailurePolicy, p *corev1.Pod) batchv1.PodFailurePolicyAction {
	for _, r := range policy.Rules {
		switch {
		case r.OnExitCodes != nil:
			if exitCodeMatches(p.Status.ContainerStatuses, r.OnExitCodes) || exitCodeMatches(p.Status.InitContainerStatuses, r.OnExitCodes) {
				return r.Action
			}
		case r.OnPodConditions != nil:
			for _, c := range p.Status.Conditions {
				for _, want := range r.OnPodConditions {
					if c.Type == want.Type && c.Status == want.Status {
						return r.Action
					}
				}
			}
		}
	}
	return ""
}

func exitCodeMatches(statuses []corev1.ContainerStatus, req *batchv1.PodFailurePolicyOnExitCodesRequirement) bool {
	for _, cs := range statuses {
		term := cs.State.Terminated
		if term == nil || term.ExitCode == 0 || (req.ContainerName != nil && *req.ContainerName != cs.Name) {
			continue
		}
		in := slices.Contains(req.Values, term.ExitCode)
		if (req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && in) || (req.Operator == batchv1.PodFailurePolicyOnExitCodesOpNotIn && !in) {
			return true
		}
	}
	return false
}
