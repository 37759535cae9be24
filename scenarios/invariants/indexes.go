// Indexed Jobs: one live pod per valid index, and each index's failures
// carried from pod to pod.

package invariants

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
)

// IndexesValid: while an Indexed Job runs, a pod it owns with no index, an
// index outside [0, completions), or an index another of its running pods
// already has, is deleted by the controller's next sync (upstream's
// manageJob: activePodsForRemoval takes them first, whatever the count,
// v1.37.1; such pods come from adoption or from an earlier, larger
// completions). Late by cause first: a sync (a status write, a pod it
// created) more than CauseGrace after such a pod appeared that left it
// running; else by the clock, within AdoptionGrace. Outside restarts.
var IndexesValid = Invariant{
	Name:        "indexes-valid",
	Late:        true,
	Description: "an Indexed Job's pods with no index, an index out of range or a duplicate index are deleted (by the next sync; by the clock, within 20s)",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		bad := map[string]timeline.Entry{} // what is wrong (pod or index) → since
		proven := map[string]bool{}        // of bad, those a sync proved late
		// Kept up to date change by change (a Job of thousands of pods):
		// the live pods of each valid index, and what is wrong with the others.
		byIndex := map[string]map[string]bool{}
		dups := map[string]bool{} // indexes of more than one live pod
		invalid := map[types.UID]string{}
		where := map[types.UID]string{} // a live pod's index, as filed
		var completions int32 = -1
		file := func(j *batchv1.Job, p *corev1.Pod, live bool) {
			if ix, ok := where[p.UID]; ok {
				delete(byIndex[ix], p.Name)
				delete(where, p.UID)
				if len(byIndex[ix]) < 2 {
					delete(dups, ix)
				}
			}
			delete(invalid, p.UID)
			if !live {
				return
			}
			ix, err := strconv.Atoi(indexOf(p))
			switch {
			case err != nil || ix < 0:
				invalid[p.UID] = fmt.Sprintf("pod %s has no valid index (%q)", p.Name, indexOf(p))
			case ix >= int(ptr.Deref(j.Spec.Completions, 0)):
				invalid[p.UID] = fmt.Sprintf("pod %s has index %d, outside completions %d", p.Name, ix, ptr.Deref(j.Spec.Completions, 0))
			default:
				if byIndex[indexOf(p)] == nil {
					byIndex[indexOf(p)] = map[string]bool{}
				}
				byIndex[indexOf(p)][p.Name] = true
				where[p.UID] = indexOf(p)
				if len(byIndex[indexOf(p)]) > 1 {
					dups[indexOf(p)] = true
				}
			}
		}
		liveOf := func(j *batchv1.Job, p *corev1.Pod) bool {
			return ownedBy(p, j) && !podTerminal(p) && p.DeletionTimestamp == nil
		}
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			j := after.job
			judged := j != nil && isIndexedJob(j) && j.DeletionTimestamp == nil && replacing(j)
			if act := syncAct(e, before, after); act != "" && judged {
				// By cause: a sync past the due time that left it running.
				for what, since := range bad {
					if !proven[what] && actedLate(ctx, since.Time, e) {
						proven[what] = true
						out = append(out, violation("indexes-valid", e, "%s: the controller %s %s later and left it running (a sync after it was due to act, the machine not starved meanwhile)",
							what, act, e.Time.Sub(since.Time).Round(100*time.Millisecond)))
					}
				}
			}
			if j != nil && ptr.Deref(j.Spec.Completions, 0) != completions {
				// Another size: every live pod is filed again (rare).
				completions = ptr.Deref(j.Spec.Completions, 0)
				byIndex, dups, invalid, where = map[string]map[string]bool{}, map[string]bool{}, map[types.UID]string{}, map[types.UID]string{}
				for _, p := range after.pods {
					file(j, p, liveOf(j, p))
				}
			} else if e.Kind == "Pod" && j != nil {
				p := e.Pod()
				file(j, p, e.Type != timeline.Deleted && liveOf(j, p))
			}
			now := map[string]bool{}
			if judged {
				for _, what := range invalid {
					now[what] = true
				}
				for ix := range dups {
					names := byIndex[ix]
					now[fmt.Sprintf("index %s has %d running pods %v", ix, len(names), slices.Sorted(maps.Keys(names)))] = true
				}
			}
			for what, since := range bad {
				if !now[what] {
					if late := e.Time.Sub(since.Time); late > AdoptionGrace && !proven[what] && !disturbedBetween(ctx, since.Time, e.Time) {
						out = append(out, violation("indexes-valid", since, "%s: removed only after %s", what, late.Round(time.Second)))
					}
					delete(bad, what)
					delete(proven, what)
				}
			}
			for what := range now {
				if _, ok := bad[what]; !ok {
					bad[what] = e
				}
			}
		})
		end := recordingEnd(ctx, t)
		for what, since := range bad {
			if late := end.Sub(since.Time); late > AdoptionGrace && !proven[what] && !disturbedBetween(ctx, since.Time, end) {
				out = append(out, violation("indexes-valid", since, "%s: not removed within %s", what, late.Round(time.Second)))
			}
		}
		sortViolations(out)
		return out
	},
}

// IndexFailureCount: with backoffLimitPerIndex, every pod the controller
// creates carries batch.kubernetes.io/job-index-failure-count, its index's
// failures so far: the failed pod it replaces's count plus one (plus one to
// job-index-ignored-failure-count instead when a pod failure policy's Ignore
// rule matched it); the first pod of an index carries "0". Read in v1.37.1's
// indexed_job_utils.go (getNewIndexFailureCounts; the failed pod is kept
// until its replacement exists, getPodsWithDelayedDeletionPerIndex).
var IndexFailureCount = Invariant{
	Name:        "index-failure-count",
	Description: "with backoffLimitPerIndex, each pod's job-index-failure-count is its index's failures so far",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		failed := map[string]*corev1.Pod{} // index → its latest failed pod
		released := map[types.UID]bool{}   // releasedUncounted
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			j := before.job
			if e.Kind != "Pod" || j == nil || !isIndexedJob(j) || j.Spec.BackoffLimitPerIndex == nil {
				return
			}
			p := e.Pod()
			if !ownedBy(p, j) || p.Annotations[BroughtAnnotation] != "" {
				return
			}
			ix := indexOf(p)
			if _, known := before.pods[p.UID]; e.Type == timeline.Added && !known {
				want, wantIgnored := 0, 0
				if prev := failed[ix]; prev != nil {
					want, wantIgnored = failureCount(prev, batchv1.JobIndexFailureCountAnnotation), failureCount(prev, batchv1.JobIndexIgnoredFailureCountAnnotation)
					if mayIgnore(j) {
						// Which of the two grew depends on the policy's match
						// against the pod's exit: only their sum is checked.
						want, wantIgnored = want+wantIgnored+1, -1
					} else {
						want++
					}
				}
				got, gotIgnored := failureCount(p, batchv1.JobIndexFailureCountAnnotation), failureCount(p, batchv1.JobIndexIgnoredFailureCountAnnotation)
				if wantIgnored < 0 {
					got += gotIgnored
					gotIgnored = -1
				}
				if _, has := p.Annotations[batchv1.JobIndexFailureCountAnnotation]; !has || got != want || gotIgnored != wantIgnored {
					out = append(out, violation("index-failure-count", e, "pod %s of index %s: %s=%q, %s=%q; want %d failures%s",
						p.Name, ix, batchv1.JobIndexFailureCountAnnotation, p.Annotations[batchv1.JobIndexFailureCountAnnotation],
						batchv1.JobIndexIgnoredFailureCountAnnotation, p.Annotations[batchv1.JobIndexIgnoredFailureCountAnnotation], want, ignoredNote(wantIgnored)))
				}
				return
			}
			// A pod may be seen Failed first as it is removed (one Deleted
			// entry). Unless only failed pods are replaced, a pod being
			// deleted that has not succeeded counts as failed too (v1.37.1
			// isPodFailed): its replacement carries its count plus one.
			// The pod a replacement follows is the failed one with the most
			// failures (v1.37.1 getPodsWithDelayedDeletionPerIndex), not
			// the last to fail: a pod killed with a grace period may end
			// after its own replacement failed (chaos seeded-soak).
			released[p.UID] = released[p.UID] || releasedUncounted(ctx, p)
			if countsAsFailed(p, j) && !released[p.UID] {
				if prev := failed[ix]; prev == nil || prev.UID == p.UID || absoluteFailures(prev) <= absoluteFailures(p) {
					failed[ix] = p
				}
			}
		})
		return out
	},
}

// countsAsFailed is upstream's isPodFailed: Failed, or being deleted without
// having succeeded when the Job replaces terminating pods.
// releasedUncounted tells whether p is seen let go uncounted: without the
// controller's tracking finalizer while it had neither ended nor was being
// deleted. A suspension does that (v1.37.1 removes the finalizer of each
// pod it deletes first: explore seed 3's cases 84, 98 and 101), and the
// per-index record reads only pods that still hold it (upstream's
// getValidPodsWithFilter): such a pod is no failure of its index. A pod
// whose finalizer goes after it failed still is.
func releasedUncounted(ctx Context, p *corev1.Pod) bool {
	return ctx.Finalizer != "" && !hasFinalizer(p, ctx.Finalizer) && p.DeletionTimestamp == nil &&
		p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded
}

func countsAsFailed(p *corev1.Pod, j *batchv1.Job) bool {
	if p.Status.Phase == corev1.PodFailed {
		return true
	}
	if j.Spec.PodReplacementPolicy != nil && *j.Spec.PodReplacementPolicy == batchv1.Failed {
		return false
	}
	return p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded
}

func failureCount(p *corev1.Pod, key string) int {
	n, _ := strconv.Atoi(p.Annotations[key])
	return n
}

func ignoredNote(n int) string {
	switch {
	case n < 0:
		return " (counted and ignored together)"
	case n > 0:
		return fmt.Sprintf(" and %d ignored", n)
	}
	return ""
}

// FailedKeptUntilReplaced: with backoffLimitPerIndex, the latest failed pod
// of an index that will be retried keeps the tracking finalizer until its
// replacement exists: the replacement takes its failure count from it
// (v1.36.3 and v1.37.1: getPodsWithDelayedDeletionPerIndex, canRemoveFinalizer;
// upstream's TestBackoffLimitPerIndex_DelayedPodDeletion). Not judged once
// the index has succeeded or failed, the Job is finishing, suspended or
// deleted, for an index outside completions, or near a restart.
var FailedKeptUntilReplaced = Invariant{
	Name:        "failed-kept-until-replaced",
	Description: "with backoffLimitPerIndex, an index's latest failed pod keeps the tracking finalizer until its replacement exists",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		if ctx.Finalizer == "" {
			return nil
		}
		var out []Violation
		failedAt := map[types.UID]uint64{} // when each pod first counted as failed (revision)
		lastAdded := map[string]uint64{}   // index → revision of its latest pod's creation
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			j := before.job
			if e.Kind != "Pod" || j == nil || !isIndexedJob(j) || j.Spec.BackoffLimitPerIndex == nil {
				return
			}
			p := e.Pod()
			if !ownedBy(p, j) {
				return
			}
			ix := indexOf(p)
			old, known := before.pods[p.UID]
			if e.Type == timeline.Added && !known {
				lastAdded[ix] = max(lastAdded[ix], e.Revision())
			}
			if _, ok := failedAt[p.UID]; !ok && countsAsFailed(p, j) {
				failedAt[p.UID] = e.Revision()
			}
			if !known || !hasFinalizer(old, ctx.Finalizer) || hasFinalizer(p, ctx.Finalizer) || !countsAsFailed(p, j) {
				return
			}
			if !countsAsFailed(old, j) {
				return // its failure and its release seen at once (a relist): when it failed is unknown
			}
			// p's finalizer went now: was it owed to a replacement still?
			n, err := strconv.Atoi(ix)
			if err != nil || n >= int(ptr.Deref(j.Spec.Completions, 0)) || j.DeletionTimestamp != nil || ptr.Deref(j.Spec.Suspend, false) ||
				!replacing(j) || inIndexList(j.Status.CompletedIndexes, n) || inIndexList(ptr.Deref(j.Status.FailedIndexes, ""), n) ||
				disturbed(ctx, e.Time) || lastAdded[ix] > failedAt[p.UID] {
				return
			}
			for _, q := range before.pods {
				if q.UID != p.UID && indexOf(q) == ix && countsAsFailed(q, j) && absoluteFailures(q) > absoluteFailures(p) {
					return // not the index's latest failure
				}
			}
			out = append(out, violation("failed-kept-until-replaced", e, "pod %s, the latest failure of index %s, lost %s before a replacement of the index existed", p.Name, ix, ctx.Finalizer))
		})
		return out
	},
}

// absoluteFailures is a pod's index failures, counted and ignored.
func absoluteFailures(p *corev1.Pod) int {
	return failureCount(p, batchv1.JobIndexFailureCountAnnotation) + failureCount(p, batchv1.JobIndexIgnoredFailureCountAnnotation)
}
