// podReplacementPolicy (KEP-3939): when a replacement may appear, and what
// status.terminating says meanwhile.

package invariants

import (
	"sort"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/scenarios/bugs"
	"github.com/jobconform/jobconform/scenarios/timeline"
)

func replacementPolicyFailed(j *batchv1.Job) bool {
	if j.Spec.PodReplacementPolicy != nil {
		return *j.Spec.PodReplacementPolicy == batchv1.Failed
	}
	return j.Spec.PodFailurePolicy != nil
}

func indexOf(p *corev1.Pod) string { return p.Annotations[batchv1.JobCompletionIndexAnnotation] }

// ReplacementWaitsUnderFailed: under podReplacementPolicy Failed a new pod is
// created only when the non-terminal pods (terminating ones included) stay
// within parallelism, and, for Indexed Jobs, only when no other pod of its
// index is non-terminal.
var ReplacementWaitsUnderFailed = Invariant{
	Name:        "replacement-waits-under-failed",
	Description: "podReplacementPolicy=Failed: no replacement while its predecessor is not terminal; non-terminal pods never exceed parallelism",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			if e.Kind != "Pod" || e.Type != timeline.Added || before.job == nil || !replacementPolicyFailed(before.job) || during(ctx.PolicyOff, e.Time) {
				return
			}
			p := e.Pod()
			if ref := metav1.GetControllerOf(p); ref == nil || ref.UID != before.job.UID {
				return
			}
			if _, seen := before.pods[p.UID]; seen {
				return
			}
			var live []*corev1.Pod
			for _, q := range before.podsOf(before.job.UID) {
				if !podTerminal(q) {
					live = append(live, q)
				}
			}
			if par := ptr.Deref(before.job.Spec.Parallelism, 1); int32(len(live))+1 > par {
				out = append(out, violation("replacement-waits-under-failed", e, "pod %s created while %d pods were not terminal (parallelism %d)", p.Name, len(live), par))
			}
			if ix := indexOf(p); ix != "" {
				for _, q := range live {
					if indexOf(q) == ix {
						out = append(out, violation("replacement-waits-under-failed", e, "pod %s of index %s created while %s of the same index was not terminal", p.Name, ix, q.Name))
					}
				}
			}
		})
		return out
	},
}

// TerminatingSettles: once the cluster has been quiet for SettleWindow,
// status.terminating equals the Job's pods that are being deleted and not terminal.
var TerminatingSettles = Invariant{
	Name:        "terminating-settles",
	Description: "once the controller settles, status.terminating equals the observed terminating pods",
	// Releases with it keep a stale count until a backoff ends (seen on v1.34.3).
	KnownBugs: []string{bugs.StaleStatusDuringBackoff.ID},
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		unknown := unknownSpans(t)
		end := recordingEnd(ctx, t)
		type state struct {
			e     timeline.Entry
			count int32
			job   *batchv1.Job
		}
		var states []state
		replay(ctx, t, func(e timeline.Entry, _, after *world) {
			if after.job == nil {
				return
			}
			n := int32(0)
			for _, p := range after.podsOf(after.job.UID) {
				if p.DeletionTimestamp != nil && !podTerminal(p) {
					n++
				}
			}
			states = append(states, state{e, n, after.job})
		})
		// A state is settled if nothing (of any kind) changed for SettleWindow after it.
		times := make([]time.Time, 0, len(t))
		for _, e := range t {
			times = append(times, e.Time)
		}
		sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
		nextChange := func(after time.Time) time.Time {
			i := sort.Search(len(times), func(i int) bool { return times[i].After(after) })
			if i == len(times) {
				return end
			}
			return times[i]
		}
		for i, s := range states {
			if i+1 < len(states) && !states[i+1].e.Time.After(s.e.Time) {
				continue // more changes at the same moment
			}
			if nextChange(s.e.Time).Sub(s.e.Time) < SettleWindow || s.job.Status.Terminating == nil || inUnknownRV(unknown, s.e.Revision()) || disturbed(ctx, s.e.Time) {
				continue
			}
			if got := *s.job.Status.Terminating; got != s.count {
				out = append(out, violation("terminating-settles", s.e, "status.terminating=%d but %d pods were terminating (settled for %s)", got, s.count, SettleWindow))
			}
		}
		return out
	},
}
