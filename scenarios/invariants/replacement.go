// podReplacementPolicy (KEP-3939): when a replacement may appear, and what
// status.terminating says meanwhile.

package invariants

import (
	"sort"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
	"github.com/jobconform/jobconform/scenarios/bugs"
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
		// Kept as the replay goes: judging each new pod against all the
		// Job's pods so far was quadratic (a 10,000-pod Job under a pod
		// failure policy took 3 minutes to judge).
		live := ownedCount{pred: func(p *corev1.Pod) bool { return !podTerminal(p) }}
		byIndex := podsByIndex{} // before's pods by completion index
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			defer byIndex.apply(e)
			p, n := newPod(e, before, after, &live, live.update(e, before, after))
			if p == nil || !replacementPolicyFailed(before.job) || during(ctx.PolicyOff, e.Time) {
				return
			}
			if par := ptr.Deref(before.job.Spec.Parallelism, 1); n+1 > par {
				out = append(out, violation("replacement-waits-under-failed", e, "pod %s created while %d pods were not terminal (parallelism %d)", p.Name, n, par))
			}
			if ix := indexOf(p); ix != "" {
				for _, q := range byIndex.of(before, ix, before.job.UID) {
					if !podTerminal(q) {
						out = append(out, violation("replacement-waits-under-failed", e, "pod %s of index %s created while %s of the same index was not terminal", p.Name, ix, q.Name))
					}
				}
			}
		})
		return out
	},
}

// ActiveWithinParallelism: whatever the replacement policy, the controller
// creates a pod only while the Job's active pods (not terminal, not being
// deleted: upstream's FilterActivePods) stay within parallelism. Under
// TerminatingOrFailed a terminating pod is replaced at once, but the new
// pod takes the terminating one's place, not a place beyond parallelism. A
// controller that over-creates and deletes the surplus on its next sync
// shows here, at the surplus pod's creation, whatever its final counts.
// The parallelism is the Job's as recorded before the creation; pods the
// controller did not create (orphans it adopts) are counted once adopted,
// never judged at their creation.
var ActiveWithinParallelism = Invariant{
	Name:        "active-within-parallelism",
	Description: "a pod is created only while the Job's active pods (not terminal, not terminating) stay within parallelism, under either replacement policy",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		active := ownedCount{pred: func(p *corev1.Pod) bool { return !podTerminal(p) && p.DeletionTimestamp == nil }}
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			p, n := newPod(e, before, after, &active, active.update(e, before, after))
			if p == nil {
				return
			}
			if par := ptr.Deref(before.job.Spec.Parallelism, 1); n+1 > par {
				out = append(out, violation("active-within-parallelism", e, "pod %s created while %d pods were active (parallelism %d)", p.Name, n, par))
			}
		})
		return out
	},
}

// newPod is the pod e adds that the Job of before controls and the replay
// had not seen (nil otherwise), and counted — c's count as of after — as it
// was just before that pod.
func newPod(e timeline.Entry, before, after *world, c *ownedCount, counted int32) (*corev1.Pod, int32) {
	if e.Kind != "Pod" || e.Type != timeline.Added || before.job == nil {
		return nil, counted
	}
	p := e.Pod()
	if !ownedBy(p, before.job) {
		return nil, counted
	}
	if _, seen := before.pods[p.UID]; seen {
		return nil, counted
	}
	if c.accepts(after.pods[p.UID]) {
		counted--
	}
	return p, counted
}

// countSettleWindow is how quiet a timeline must stay before status.active
// and status.terminating are held to the pods: twice SettleWindow, as every
// pod's end changes them (seen on a saturated machine: a reference controller
// counting a succeeded pod 5.7s after it ended; the CI's built-in, v1.37.1,
// dropping a force-deleted pod from terminating 6.0s after it was gone).
var countSettleWindow = 2 * SettleWindow

// TerminatingSettles: once the cluster has been quiet for countSettleWindow,
// status.terminating equals the Job's pods that are being deleted and not terminal.
var TerminatingSettles = Invariant{
	Name:        "terminating-settles",
	Late:        true,
	Description: "status.terminating equals the observed terminating pods in every write more than 5s after they changed, and once the controller settles",
	// Releases with it keep a stale count until a backoff ends (seen on v1.34.3).
	KnownBugs: []string{bugs.StaleStatusDuringBackoff.ID},
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		return settledCount(ctx, t, countSettleWindow, "terminating-settles", "terminating", func(s batchv1.JobStatus) *int32 { return s.Terminating },
			func(p *corev1.Pod) bool { return p.DeletionTimestamp != nil && !podTerminal(p) })
	},
}

// ActiveSettles: once the cluster has been quiet for countSettleWindow,
// status.active equals the Job's pods that are neither terminal nor being
// deleted (pkg/controller/job's FilterActivePods, v1.31.4 to v1.37.1).
var ActiveSettles = Invariant{
	Name:        "active-settles",
	Late:        true,
	Description: "status.active equals the observed pods that are neither finished nor terminating in every write more than 5s after they changed, and once the controller settles",
	// Releases with it report active=0 while a backoff defers a replacement.
	KnownBugs: []string{bugs.StaleStatusDuringBackoff.ID},
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		if ctx.ForeignManagedBy {
			return nil // nobody here owes this Job a status
		}
		return settledCount(ctx, t, countSettleWindow, "active-settles", "active", func(s batchv1.JobStatus) *int32 { return &s.Active },
			func(p *corev1.Pod) bool { return p.DeletionTimestamp == nil && !podTerminal(p) })
	},
}

// settledCount compares a status counter (reported; nil: not written, no
// verdict) with the number of the Job's pods counts accepts, first by the
// controller's own acts (staleWrites), then in every settled state: one
// after which nothing of any kind changed for window, outside recording
// gaps, unknown revisions and restarts.
func settledCount(ctx Context, t timeline.Timeline, window time.Duration, name, field string, reported func(batchv1.JobStatus) *int32, counts func(*corev1.Pod) bool) []Violation {
	var out []Violation
	unknown := unknownSpans(t)
	end := recordingEnd(ctx, t)
	type state struct {
		e     timeline.Entry
		count int32
		job   *batchv1.Job
	}
	var states []state
	owned := ownedCount{pred: counts}
	stale := staleWrites{ctx: ctx, name: name, field: field, reported: reported, unknown: unknown}
	replay(ctx, t, func(e timeline.Entry, before, after *world) {
		n := owned.update(e, before, after)
		if after.job == nil || after.job.DeletionTimestamp != nil {
			return // a Job being deleted owes no status
		}
		stale.visit(e, before, after, n)
		states = append(states, state{e, n, after.job})
	})
	out = append(out, stale.out...)
	caught := map[int]bool{} // states already proven stale by a write
	for _, v := range stale.out {
		caught[v.Seq] = true
	}
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
		got := reported(s.job.Status)
		if nextChange(s.e.Time).Sub(s.e.Time) < window || got == nil || inUnknownRV(unknown, s.e.Revision()) || disturbed(ctx, s.e.Time) {
			continue
		}
		if *got != s.count && !caught[s.e.Seq] {
			out = append(out, violation(name, s.e, "status.%s=%d but %d pods were %s (settled for %s)", field, *got, s.count, field, window))
		}
	}
	return out
}
