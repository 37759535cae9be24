// The pod-failure backoff from below: no replacement before the backoff allows it.

package invariants

import (
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/internal/timeline"
)

// backoffEarlyTolerance covers clocks read at different moments; the
// timestamps compared are the API's own (second resolution, truncated), so a
// controller that waits its backoff is never earlier than the bound.
const backoffEarlyTolerance = time.Second

// outcome is a pod of the Job that stopped being active, in the order the
// API recorded it: a failure (Failed, or deleted where the policy counts a
// deletion) or a success.
type outcome struct {
	uid     types.UID
	success bool
	finish  time.Time // the earliest time a controller can take as its finish
}

// BackoffRespected: a pod that replaces failed ones is not created before the
// backoff allows it — 10s·2^(n−1) after the last failure, n the failures since
// the last success (pkg/controller/job backoff_utils.go, v1.31 to v1.37: one
// record per Job, kept in memory). The bound is the weakest any controller
// view allows: a controller's pod cache is a prefix of the pod changes in
// revision order, and it must have seen enough pods finish to want a new
// one (NonIndexed: all created before, less parallelism; Indexed: the
// predecessor of that index), so the bound is the smallest over every such
// prefix, taking each failure's earliest possible finish time (upstream's
// getFinishedTime over every state seen: Ready=False transition, container
// finishedAt, deletion request). A prefix holding a success gives no bound
// (a success resets the record, and the order of finish times then decides).
// Not bounded here: Jobs with backoffLimitPerIndex (a record per index,
// IndexBackoffRespected), pods
// created after a rescale or a suspension, after the controller restarted
// (its record is gone), or inside a stretch the recording does not know.
var BackoffRespected = Invariant{
	Name:        "backoff-respected",
	Description: "no replacement pod before the pod-failure backoff (10s doubled per failure since the last success) allows it",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		var outcomes []outcome
		at := map[types.UID]int{}             // uid → index in outcomes
		created := 0                          // pods of the Job created so far
		lastOfIndex := map[string]types.UID{} // the latest pod created per completion index
		var spec *batchv1.JobSpec
		unbounded := false // rescaled, suspended or per-index: no lower bound from here on
		unboundedWhy := ""
		unknownPod := ""                 // the first pod left unjudged by an unknown stretch: one note, not one per pod
		released := map[types.UID]bool{} // releasedUncounted: its end is no failure
		spans := unknownSpans(t)
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			j := after.job
			if j == nil {
				return
			}
			if e.Kind == "Job" {
				if spec != nil && (ptr.Deref(spec.Parallelism, 1) != ptr.Deref(j.Spec.Parallelism, 1) ||
					ptr.Deref(spec.Completions, -1) != ptr.Deref(j.Spec.Completions, -1)) && !unbounded {
					unbounded, unboundedWhy = true, "the Job's rescale at "+e.Time.Format("15:04:05")
				}
				switch {
				case unbounded:
				case j.Spec.BackoffLimitPerIndex != nil:
					unbounded, unboundedWhy = true, "backoffLimitPerIndex (index-backoff-respected judges each index's backoff)"
				case ptr.Deref(j.Spec.Suspend, false) || kube.JobCondition(j.Status, batchv1.JobSuspended) != nil:
					unbounded, unboundedWhy = true, "the Job's suspension at "+e.Time.Format("15:04:05")
				}
				s := j.Spec
				spec = &s
				return
			}
			p := e.Pod()
			if !ownedBy(p, j) {
				return
			}
			if _, known := before.pods[p.UID]; e.Type == timeline.Added && !known {
				switch {
				case len(outcomes) == 0:
				case unbounded && !strings.HasPrefix(unboundedWhy, "backoffLimitPerIndex"):
					ctx.skip("pods created after %s: their backoff depends on which pods the controller let go uncounted", unboundedWhy)
				case restartedBefore(ctx, e.Time):
					ctx.skip("pods created after a restart of the controller: its backoff record starts empty")
				case overlapsUnknownTime(spans, firstFinish(outcomes, e.Time), e.Time):
					if unknownPod == "" {
						unknownPod = p.Name
					}
					ctx.skip("pods whose predecessors' failures fall in a stretch the recording does not know (the first: %s)", unknownPod)
				}
				if !unbounded && !restartedBefore(ctx, e.Time) && !overlapsUnknownTime(spans, firstFinish(outcomes, e.Time), e.Time) {
					if lb, n, ok := backoffBound(p, created, lastOfIndex, outcomes, at, ptr.Deref(j.Spec.Parallelism, 1)); ok && e.Time.Before(lb.Add(-backoffEarlyTolerance)) {
						out = append(out, violation("backoff-respected", e, "pod %s created %s before its backoff ended (%s after %d failures since the last success: not before %s)",
							p.Name, lb.Sub(e.Time).Round(100*time.Millisecond), Backoff(n), n, lb.UTC().Format("15:04:05")))
					}
				}
				created++
				if ix := indexOf(p); ix != "" {
					lastOfIndex[ix] = p.UID
				}
			}
			released[p.UID] = released[p.UID] || releasedUncounted(ctx, p)
			i, seen := at[p.UID]
			switch {
			case seen:
				if p.Status.Phase == corev1.PodSucceeded && !outcomes[i].success {
					// Counted a failure at its deletion, yet it succeeded: a
					// controller that saw it only now counts a success.
					at[p.UID] = len(outcomes)
					outcomes = append(outcomes, outcome{uid: p.UID, success: true})
					return
				}
				outcomes[i].finish = earliest(outcomes[i].finish, finishCandidates(p))
			case p.Status.Phase == corev1.PodSucceeded:
				at[p.UID] = len(outcomes)
				outcomes = append(outcomes, outcome{uid: p.UID, success: true})
			case replaceable(p, replacementPolicyFailed(j) && !during(ctx.PolicyOff, e.Time)) && !released[p.UID]:
				// Not a pod that merely vanished: one let go uncounted (an
				// excess pod; a pod of a duplicate index, its finalizer
				// released before its deletion: explore-2-36) is no
				// failure, and counting it would raise the bound.
				at[p.UID] = len(outcomes)
				outcomes = append(outcomes, outcome{uid: p.UID, finish: earliest(e.Time, finishCandidates(p))})
			}
		})
		return out
	},
}

// backoffBound is the earliest moment p may be created if it replaces failed
// pods, and the failure count that gives it; ok is false when p needs no
// backoff (it replaces nothing, or a success reset the record).
// created counts the Job's pods created before p; lastOfIndex is the latest
// of them per completion index.
func backoffBound(p *corev1.Pod, created int, lastOfIndex map[string]types.UID, outcomes []outcome, at map[types.UID]int, parallelism int32) (lb time.Time, n int, ok bool) {
	need := created - int(parallelism) + 1 // outcomes the controller must have seen
	if ix := indexOf(p); ix != "" {
		need = 0
		if prev, ok := lastOfIndex[ix]; ok {
			if k, seen := at[prev]; seen {
				need = k + 1
			}
		}
	}
	if need <= 0 || need > len(outcomes) {
		return time.Time{}, 0, false
	}
	failures := 0
	for l := 1; l <= len(outcomes); l++ {
		o := outcomes[l-1]
		if o.success {
			return time.Time{}, 0, false // every longer view holds a success too
		}
		failures++
		if l < need {
			continue
		}
		if b := o.finish.Add(Backoff(failures)); !ok || b.Before(lb) {
			lb, n, ok = b, failures, true
		}
	}
	return lb, n, ok
}

// finishCandidates are the times upstream's getFinishedTime may read off p:
// the Ready=False transition, the containers' finishedAt, the deletion request.
func finishCandidates(p *corev1.Pod) []time.Time {
	var out []time.Time
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionFalse && !c.LastTransitionTime.IsZero() {
			out = append(out, c.LastTransitionTime.Time)
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if term := cs.State.Terminated; term != nil && !term.FinishedAt.IsZero() {
			out = append(out, term.FinishedAt.Time)
		}
	}
	if p.DeletionTimestamp != nil {
		out = append(out, p.DeletionTimestamp.Add(-time.Duration(ptr.Deref(p.DeletionGracePeriodSeconds, 0))*time.Second))
	}
	if len(out) == 0 {
		out = append(out, p.CreationTimestamp.Time)
	}
	return out
}

func earliest(t time.Time, more []time.Time) time.Time {
	for _, m := range more {
		if !m.IsZero() && (t.IsZero() || m.Before(t)) {
			t = m
		}
	}
	return t
}

func firstFinish(outcomes []outcome, fallback time.Time) time.Time {
	if len(outcomes) == 0 {
		return fallback
	}
	return outcomes[0].finish
}

// restartedBefore tells whether the controller under test restarted before t
// (its in-memory backoff record starts empty again).
func restartedBefore(ctx Context, t time.Time) bool {
	for _, r := range ctx.Restarts {
		if r.Before(t) {
			return true
		}
	}
	return false
}
