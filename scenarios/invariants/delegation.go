// spec.managedBy (KEP-4368) and finalizer tracking: who may touch a Job's pods and status.

package invariants

import (
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobconform/jobconform/internal/timeline"
)

// ReleaseWithin bounds how long the release of a finishing Job's tracking
// finalizers may stall: upstream removes every finalizer from the sync that
// writes FailureTarget or SuccessCriteriaMet on (pkg/controller/job
// canRemoveFinalizer: finishedCondition != nil, v1.31 to v1.37; recorded:
// ~20ms on a quiet machine, 3.3s for the last of three pods on a saturated
// one), a batch of at most 500 pods per status write (MaxUncountedPods), each
// pod a request under the controller's client rate limit.
var ReleaseWithin = 10 * time.Second

// FinalizerReleased: once the Job is finishing (FailureTarget or
// SuccessCriteriaMet, or a terminal condition) the controller releases its
// pods' tracking finalizers without waiting for them to end, and none keeps
// one once the Job is finished. Its work on them may not stall: no pod keeps
// the finalizer ReleaseWithin after the Job started finishing or after the
// controller last deleted or released one of them (its deletions just before
// the interim condition included), whichever is later. The
// bound runs from the last of that work, not from the start only, because
// deleting and releasing N running pods takes 2N requests: the built-in, at
// this harness's 200 requests a second for kube-controller-manager (upstream
// deletes the active pods first, then releases in batches of 500), needed
// more than 10 s for a Job finishing with 1,000 pods running. A controller
// that releases a pod only when it ends still stalls while its pods spend
// their grace period (SIGTERM traps). The bound is not applied after the
// controller or the apiserver restarted (chaos): it may resume late.
var FinalizerReleased = Invariant{
	Name:        "finalizer-released",
	Late:        true,
	ClockOnly:   "a finishing Job of many pods is released over many status writes (upstream: 500 pods a write), so a write while pods keep the finalizer is how a correct controller works; the bound runs from its last release instead",
	Description: "no pod keeps the tracking finalizer once the Job is finished; once it is finishing, their release never stalls more than a few seconds",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		if ctx.Finalizer == "" {
			return nil
		}
		var out []Violation
		reported := map[types.UID]bool{}
		var since time.Time    // when the Job started finishing
		var lastWork time.Time // the last deletion or release of a holder since
		// The pods that keep the finalizer as the replay goes: few once the
		// Job is finishing, where listing every pod at every change made
		// judging a 10,000-pod Job quadratic.
		holders := map[types.UID]*corev1.Pod{}
		var lastJob *batchv1.Job
		var lastEntry timeline.Entry
		held := func(job *batchv1.Job, e timeline.Entry, now time.Time) {
			var kept []*corev1.Pod
			for _, p := range holders {
				if ownedBy(p, job) && !reported[p.UID] {
					kept = append(kept, p)
				}
			}
			if len(kept) == 0 {
				return
			}
			slices.SortFunc(kept, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
			from := since
			if lastWork.After(from) {
				from = lastWork
			}
			switch {
			case finished(job.Status) != nil && during(ctx.Gaps, e.Time):
				return // a relist reports Jobs and pods in no common order
			case finished(job.Status) != nil:
				out = append(out, violation("finalizer-released", e, "%s %s after the Job finished", podNames(kept), keepsOrKeep(len(kept), ctx.Finalizer)))
			case len(ctx.Restarts) > 0 && now.Sub(from) > ReleaseWithin:
				ctx.skip("the %s bound on releasing a finishing Job's pods: the controller or the apiserver restarted during the run", ReleaseWithin)
				return
			case now.Sub(from) > ReleaseWithin:
				stall := "after the Job started finishing (at " + since.Format("15:04:05.000") + ")"
				if from != since {
					stall = fmt.Sprintf("after the controller last deleted or released one (at %s; the Job started finishing at %s)", from.Format("15:04:05.000"), since.Format("15:04:05.000"))
				}
				out = append(out, violation("finalizer-released", e, "%s still %s %s %s",
					podNames(kept), keepsOrKeep(len(kept), ctx.Finalizer), now.Sub(from).Round(100*time.Millisecond), stall))
			default:
				return
			}
			for _, p := range kept {
				reported[p.UID] = true
			}
		}
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			if after.job != nil && !since.IsZero() && before.job != nil {
				held(before.job, e, e.Time) // the state that lasted until this change
			}
			if e.Kind == "Pod" {
				uid := e.Pod().UID
				prev, wasHeld := holders[uid]
				worked := false // the controller deleted the pod or released it
				if p := after.pods[uid]; p != nil && slices.Contains(p.Finalizers, ctx.Finalizer) {
					holders[uid] = p
					worked = wasHeld && prev.DeletionTimestamp == nil && p.DeletionTimestamp != nil
				} else if wasHeld {
					delete(holders, uid)
					worked = true
				}
				// Deletions before the Job's interim condition count too: a
				// controller deletes the active pods, then writes it (upstream
				// syncJob), so in revision order they come first; the
				// recording may see them seconds after it (at 10,000 pods the
				// built-in's deletions reached it up to 9 s after
				// FailureTarget, its first release 11 s after).
				if worked && ownedBy(e.Pod(), after.job) && e.Time.After(lastWork) {
					lastWork = e.Time
				}
			}
			if after.job == nil {
				return
			}
			s := after.job.Status
			if since.IsZero() && settledOrFinishing(s) {
				since = e.Time
			}
			if !since.IsZero() {
				held(after.job, e, e.Time)
			}
			lastJob, lastEntry = after.job, e
		})
		if lastJob != nil && !since.IsZero() {
			held(lastJob, lastEntry, recordingEnd(ctx, t)) // the pods as they end
		}
		return out
	},
}

// podNames names pods: all of a few, the first three of many.
func podNames(pods []*corev1.Pod) string {
	const shown = 3
	var names []string
	for i, p := range pods {
		if i == shown {
			return fmt.Sprintf("pods %s and %d more", strings.Join(names, ", "), len(pods)-shown)
		}
		names = append(names, p.Name)
	}
	if len(names) == 1 {
		return "pod " + names[0]
	}
	return "pods " + strings.Join(names, ", ")
}

// keepsOrKeep is "keeps finalizer" or "keep finalizer" as n is one or more.
func keepsOrKeep(n int, finalizer string) string {
	if n == 1 {
		return "keeps " + finalizer
	}
	return "keep " + finalizer
}

// ManagedBySilence: a Job whose manager does not run gets no status and no pods.
var ManagedBySilence = Invariant{
	Name:        "managedby-silence",
	Manager:     true,
	Description: "a Job with a foreign spec.managedBy gets no status write and no pod from the built-in controller",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		if !ctx.ForeignManagedBy {
			return nil
		}
		var out []Violation
		var jobUID types.UID
		for _, e := range jobEntries(ctx, t) {
			jobUID = e.Job().UID
			s := e.Job().Status
			if s.Active != 0 || s.Succeeded != 0 || s.Failed != 0 || s.StartTime != nil || len(s.Conditions) > 0 ||
				s.Ready != nil || s.Terminating != nil || s.UncountedTerminatedPods != nil || s.CompletedIndexes != "" {
				out = append(out, violation("managedby-silence", e, "status written: %+v", s))
				break
			}
		}
		for _, e := range t.Of("Pod") {
			if controlledBy(e.Pod(), jobUID) && e.Type == timeline.Added {
				out = append(out, violation("managedby-silence", e, "pod %s created for the Job", e.Name))
				break
			}
		}
		return out
	},
}

// BuiltInManager is the field manager of the built-in controller's writes.
const BuiltInManager = "kube-controller-manager"

// builtInWrote tells whether managedFields record a write of the built-in
// controller manager to the status subresource (status) or to the object
// itself. Pods are judged by the latter only: other controllers of
// kube-controller-manager (PodGC, taint eviction) rightly write pod status.
func builtInWrote(fields []metav1.ManagedFieldsEntry, status bool) bool {
	for _, f := range fields {
		if f.Manager == BuiltInManager && (f.Subresource == "status") == status {
			return true
		}
	}
	return false
}

// DelegationRespected: a Job whose spec.managedBy names another controller is
// never written by the built-in one — neither its status nor its pods, as the
// objects' managedFields tell (KEP-4368). This holds for every run of the
// reference or an external controller, not only for the foreign-manager scenario.
// It holds wherever the apiserver kept spec.managedBy — with the JobManagedBy
// gate on: by default from 1.32, on 1.31 where it is given — so no release
// bound: a Job without the field is not checked.
var DelegationRespected = Invariant{
	Name:        "delegation-respected",
	Manager:     true,
	Description: "the built-in controller writes neither the status nor the pods of a Job managed by another controller (managedFields)",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		var jobUID types.UID
		for _, e := range jobEntries(ctx, t) {
			j := e.Job()
			if j.Spec.ManagedBy == nil || *j.Spec.ManagedBy == batchv1.JobControllerName {
				return nil
			}
			jobUID = j.UID
			if builtInWrote(j.ManagedFields, true) {
				out = append(out, violation("delegation-respected", e, "%s wrote the status of a Job managed by %s", BuiltInManager, *j.Spec.ManagedBy))
				break
			}
		}
		if ctx.Copy != "" {
			return out // the worker's Job controller makes the pods; the manager's pods are the runner's check
		}
		for _, e := range t.Of("Pod") {
			p := e.Pod()
			if controlledBy(p, jobUID) && builtInWrote(p.ManagedFields, false) {
				out = append(out, violation("delegation-respected", e, "%s wrote pod %s of a Job it does not manage", BuiltInManager, p.Name))
				break
			}
		}
		return out
	},
}
