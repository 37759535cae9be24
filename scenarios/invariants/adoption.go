// Adoption and release: which pods a Job owns as their labels and
// ownerReferences change under it.

package invariants

import (
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobconform/jobconform/internal/timeline"
)

// BroughtAnnotation marks a pod a scenario created itself (an orphan to be
// adopted, or a pod another owner holds): pod-identity does not judge it as
// one the controller made.
const BroughtAnnotation = "jobconform.io/brought-by-scenario"

// AdoptionGrace is how long a controller may take to adopt a matching orphan
// or to release a pod that stopped matching: the next sync of the Job, which
// the pod's own change queues.
var AdoptionGrace = 20 * time.Second

// Adoption: while the Job runs (not deleted, no terminal or interim
// condition), a pod that matches its selector and has no controller is
// adopted — a controller ownerReference to the Job and, for a pod still
// running, the tracking finalizer (upstream's getPodsForJob: ClaimPods adds
// both in one patch); a pod the Job owns whose labels stop matching is
// released (no ownerReference to the Job); a pod another object controls is
// never taken over. Late by cause first: a sync of the Job (a status write,
// a pod it created) more than CauseGrace after the pod came due, which left
// it undone — upstream claims pods at the start of every sync; else by the
// clock, within AdoptionGrace. Outside restarts. Read in
// pkg/controller/job (getPodsForJob) and pkg/controller (ClaimPods) of
// v1.37.1; the e2e Conformance test "should adopt matching orphans and
// release non-matching pods".
var Adoption = Invariant{
	Name:        "adoption",
	Late:        true,
	Description: "a matching orphan is adopted (controller ownerReference and tracking finalizer), a pod that stops matching is released, another owner's pod is never taken (by the next sync; by the clock, within 20s)",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		if ctx.ForeignManagedBy {
			return nil
		}
		var out []Violation
		type episode struct {
			since timeline.Entry
			pod   string
			want  string // what the pod is due: "adopted (...)"
			// late: a sync of the controller already proved it late
			late bool
		}
		orphan := map[types.UID]*episode{}    // matching, no controller, since
		release := map[types.UID]*episode{}   // owned, not matching, since
		finalizer := map[types.UID]*episode{} // adopted, running, no finalizer yet
		owner := map[types.UID]*metav1.OwnerReference{}
		late := func(ep *episode, at time.Time) bool {
			return !ep.late && at.Sub(ep.since.Time) > AdoptionGrace && !disturbedBetween(ctx, ep.since.Time, at)
		}
		closeEp := func(m map[types.UID]*episode, uid types.UID, at timeline.Entry, name string) {
			if ep, ok := m[uid]; ok {
				if late(ep, at.Time) {
					out = append(out, violation("adoption", ep.since, "pod %s was %s only after %s", name, ep.want, at.Time.Sub(ep.since.Time).Round(time.Second)))
				}
				delete(m, uid)
			}
		}
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			j := after.job
			running := j != nil && j.DeletionTimestamp == nil && !settledOrFinishing(j.Status)
			if act := syncAct(e, before, after); act != "" && running {
				// By cause: a sync past the due time that left a pod undone.
				for _, m := range []map[types.UID]*episode{orphan, release, finalizer} {
					for _, ep := range m {
						if !ep.late && actedLate(ctx, ep.since.Time, e) {
							ep.late = true
							out = append(out, violation("adoption", e, "the controller %s %s after pod %s was due to be %s, and left it undone (a sync after it was due to act, the machine not starved meanwhile)",
								act, e.Time.Sub(ep.since.Time).Round(100*time.Millisecond), ep.pod, ep.want))
						}
					}
				}
			}
			if e.Kind == "Job" && before.job == nil && running {
				// The Job's first sight: the orphans already there are due.
				for _, p := range after.pods {
					if metav1.GetControllerOf(p) == nil && p.DeletionTimestamp == nil && !podTerminal(p) && selects(j, p) {
						orphan[p.UID] = &episode{since: e, pod: p.Name, want: "adopted (it matches the selector and has no controller)"}
					}
				}
			}
			if e.Kind == "Job" && !running {
				// Nothing is due from a Job that is done or going: what
				// was not done by now is judged by now.
				for _, m := range []map[types.UID]*episode{orphan, release} {
					for uid := range m {
						closeEp(m, uid, e, m[uid].pod)
					}
				}
				return
			}
			if e.Kind != "Pod" || j == nil || j.Spec.Selector == nil {
				return // (the apiserver gives every Job a selector)
			}
			p := e.Pod()
			if e.Type == timeline.Deleted {
				delete(orphan, p.UID)
				delete(release, p.UID)
				delete(finalizer, p.UID)
				return
			}
			matches := selects(j, p)
			ref := metav1.GetControllerOf(p)
			prev, seen := owner[p.UID]
			owner[p.UID] = ref
			mine := ownedBy(p, j)
			if mine && prev != nil && prev.UID != j.UID {
				out = append(out, violation("adoption", e, "pod %s, controlled by %s %s, was taken over by the Job", p.Name, prev.Kind, prev.Name))
			}
			live := p.DeletionTimestamp == nil && !podTerminal(p)
			tracked := ctx.Finalizer != "" && slices.Contains(p.Finalizers, ctx.Finalizer)
			// An orphan is due adoption while it runs.
			if ref == nil && matches && live && running {
				if _, ok := orphan[p.UID]; !ok {
					orphan[p.UID] = &episode{since: e, pod: p.Name, want: "adopted (it matches the selector and has no controller)"}
				}
			} else {
				closeEp(orphan, p.UID, e, p.Name)
			}
			// An adopted pod still running is due the tracking finalizer.
			if mine && seen && prev == nil && live && ctx.Finalizer != "" {
				finalizer[p.UID] = &episode{since: e, pod: p.Name, want: "given the tracking finalizer " + ctx.Finalizer + " on adoption"}
			}
			if !live || !mine || tracked {
				closeEp(finalizer, p.UID, e, p.Name)
			}
			// A pod of the Job that stops matching is due release: no
			// ownerReference to the Job, and no tracking finalizer left.
			if mine && !matches && running {
				if _, ok := release[p.UID]; !ok {
					release[p.UID] = &episode{since: e, pod: p.Name, want: "released (its labels no longer match the selector: no ownerReference to the Job, no tracking finalizer)"}
				}
			} else if !mine && !tracked {
				closeEp(release, p.UID, e, p.Name)
			}
		})
		end := recordingEnd(ctx, t)
		for _, m := range []map[types.UID]*episode{orphan, release, finalizer} {
			for _, ep := range m {
				if late(ep, end) {
					out = append(out, violation("adoption", ep.since, "pod %s was not %s within %s", ep.pod, ep.want, end.Sub(ep.since.Time).Round(time.Second)))
				}
			}
		}
		sortViolations(out)
		return out
	},
}

// selects tells whether Job j's selector matches pod p (none matches a Job
// without a valid selector).
func selects(j *batchv1.Job, p *corev1.Pod) bool {
	sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
	if err != nil || j.Spec.Selector == nil {
		return false
	}
	return sel.Matches(labels.Set(p.Labels))
}
