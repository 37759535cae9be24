// The exactly-once protocol of finalizer tracking, seen from outside.

package invariants

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
)

// FinalizerAfterRecord: a finished pod loses its tracking finalizer only
// after a Job status write that records it — its UID in
// uncountedTerminatedPods, or for a succeeded pod of an Indexed Job its index
// in completedIndexes (pkg/controller/job trackJobStatusAndRemoveFinalizers,
// v1.26 on: record, then remove, then move into the counters). A controller
// that removes first and writes later loses the pod's outcome if it crashes
// in between; the order shows in the recording without needing that crash.
// Not required: pods the controller need not count — a Job that is being
// deleted, a pod of an index past completions (elastic scale-down), a pod
// still running when the Job met its success criteria, one that is
// neither finished nor being deleted while the Job has not failed, or one
// the controller deleted as active (deletedAsActive).
var FinalizerAfterRecord = Invariant{
	Name:        "finalizer-after-record",
	Description: "a finished pod's tracking finalizer is removed only after a Job status write that records the pod (uncountedTerminatedPods or completedIndexes)",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		if ctx.Finalizer == "" {
			return nil
		}
		var out []Violation
		spans := unknownSpans(t)
		// Pods let go with the Job's success need no record (the ledger's rule).
		withSuccess := goneWithSuccess(ctx, t)
		asActive := deletedAsActive(ctx, t)
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			j := before.job
			if e.Kind != "Pod" || j == nil || j.DeletionTimestamp != nil || inUnknownRV(spans, e.Revision()) || during(ctx.Gaps, e.Time) {
				return // a relist after a broken watch may have skipped the status that recorded it
			}
			p, prev := e.Pod(), before.pods[e.Pod().UID]
			if prev == nil || !slices.Contains(prev.Finalizers, ctx.Finalizer) || slices.Contains(p.Finalizers, ctx.Finalizer) {
				return // not the moment its finalizer went
			}
			if !ownedBy(p, j) || withSuccess[p.UID] || !mustRecord(j, p) || recorded(j.Status, p) {
				return
			}
			if p.DeletionTimestamp == nil && deletesActive(j) && asActive[e.Seq] {
				return
			}
			u := ptr.Deref(j.Status.UncountedTerminatedPods, batchv1.UncountedTerminatedPods{})
			out = append(out, violation("finalizer-after-record", e, "pod %s (%s%s) lost its finalizer %s before any Job status recorded it (uncountedTerminatedPods succeeded %v failed %v, completedIndexes %q)",
				p.Name, p.Status.Phase, deletingNote(p), ctx.Finalizer, u.Succeeded, u.Failed, j.Status.CompletedIndexes))
		})
		return out
	},
}

// staleWithin is how recently a pod may have finished and still be deleted
// as active: the controller decided from a cache that had it running (the
// built-in deleting 1,000 pods of a Job suspended at 10,000 took about 8 s
// to reach the last, pods of 10 s finishing meanwhile).
const staleWithin = 10 * time.Second

// deletedAsActive finds the entries (by Seq) that begin the deletion of a
// pod the controller took for active: a finalizer removal followed by the
// pod's deletion, with no change of its finalizer or deletion in between —
// upstream's deleteJobPods (suspension, scale-down, failure) removes a pod's
// tracking finalizer and then deletes it, counting it neither way; KEP-2307:
// a pod that finishes while it is being deleted may or may not be counted —
// or the deletion itself of a finished pod still holding it. The pod must
// have finished at most staleWithin before that removal (or deletion), or
// after (staleWithin before) the Job began asking for active pods to go
// (deletesActive: suspended, or more active than its parallelism). The
// second measure is for a loaded apiserver: at 10,000 pods the built-in's
// cache and the recording both lagged 12–27 s, and its requests waited up
// to 13 s for the apiserver (429s, priority and fairness queues), so pods
// finished 30–40 s before their removal was seen had been running in the
// cache it deleted them from; all had finished after the suspension. A
// finished pod let go without a deletion, or finished long before the Job
// asked, is still judged.
func deletedAsActive(ctx Context, t timeline.Timeline) map[int]bool {
	out := map[int]bool{}
	finishedAt := map[types.UID]time.Time{}
	pending := map[types.UID]int{} // a removal whose deletion is awaited
	had := map[types.UID]bool{}    // the pod's last entry held the finalizer
	deleting := map[types.UID]bool{}
	var asked time.Time // when the Job began asking for active pods to go; zero: it does not
	raced := func(uid types.UID, now time.Time) bool {
		at, ok := finishedAt[uid]
		return !ok || now.Sub(at) <= staleWithin || (!asked.IsZero() && at.After(asked.Add(-staleWithin)))
	}
	for _, e := range t {
		if e.Kind == "Job" {
			if j := e.Job(); e.Type == timeline.Deleted || !deletesActive(j) {
				asked = time.Time{}
			} else if asked.IsZero() {
				asked = e.Time
			}
			continue
		}
		if e.Kind != "Pod" {
			continue
		}
		p := e.Pod()
		holds := slices.Contains(p.Finalizers, ctx.Finalizer)
		gone := e.Type == timeline.Deleted || p.DeletionTimestamp != nil
		if seq, ok := pending[p.UID]; ok && (gone || holds) {
			delete(pending, p.UID)
			if gone {
				out[seq] = true
			}
		}
		if _, ok := finishedAt[p.UID]; !ok && podTerminal(p) {
			finishedAt[p.UID] = e.Time
		}
		_, seen := had[p.UID]
		if _, ok := finishedAt[p.UID]; ok && seen && !deleting[p.UID] && p.DeletionTimestamp != nil && raced(p.UID, e.Time) {
			out[e.Seq] = true // deleted first
		}
		deleting[p.UID] = p.DeletionTimestamp != nil
		if had[p.UID] && !holds && !gone && raced(p.UID, e.Time) {
			pending[p.UID] = e.Seq
		}
		had[p.UID] = holds
	}
	return out
}

// deletesActive tells whether the Job, as it stands, has its controller
// delete active pods: suspended, or more active than its parallelism.
func deletesActive(j *batchv1.Job) bool {
	return ptr.Deref(j.Spec.Suspend, false) || j.Status.Active > ptr.Deref(j.Spec.Parallelism, 1)
}

// mustRecord tells whether the controller counts p before it lets it go.
// A failure the Job's podFailurePolicy may ignore is let go unrecorded
// (upstream trackJobStatusAndRemoveFinalizers adds a failed pod to
// uncountedTerminatedPods only when the policy counts it): with an Ignore
// rule in the policy, no failed or deleted pod must be recorded first.
func mustRecord(j *batchv1.Job, p *corev1.Pod) bool {
	if ix := indexOf(p); ix != "" {
		n, err := strconv.Atoi(ix)
		if err != nil || n >= int(ptr.Deref(j.Spec.Completions, 0)) {
			return false
		}
	}
	if p.Status.Phase != corev1.PodSucceeded && (podTerminal(p) || p.DeletionTimestamp != nil) && mayIgnore(j) {
		return false
	}
	if podTerminal(p) {
		return true
	}
	if hasCond(j.Status, batchv1.JobSuccessCriteriaMet) != nil || hasCond(j.Status, batchv1.JobComplete) != nil {
		return false
	}
	return p.DeletionTimestamp != nil || hasCond(j.Status, batchv1.JobFailureTarget) != nil || hasCond(j.Status, batchv1.JobFailed) != nil
}

// mayIgnore tells whether the Job's podFailurePolicy has an Ignore rule.
func mayIgnore(j *batchv1.Job) bool {
	if j.Spec.PodFailurePolicy == nil {
		return false
	}
	return slices.ContainsFunc(j.Spec.PodFailurePolicy.Rules, func(r batchv1.PodFailurePolicyRule) bool {
		return r.Action == batchv1.PodFailurePolicyActionIgnore
	})
}

// recorded tells whether the status accounts for p.
func recorded(s batchv1.JobStatus, p *corev1.Pod) bool {
	if u := s.UncountedTerminatedPods; u != nil && (slices.Contains(u.Succeeded, p.UID) || slices.Contains(u.Failed, p.UID)) {
		return true
	}
	if ix := indexOf(p); ix != "" && p.Status.Phase == corev1.PodSucceeded && s.CompletedIndexes != "" {
		n, _ := strconv.Atoi(ix)
		return inIndexList(s.CompletedIndexes, n)
	}
	return false
}

// inIndexList tells whether n is in an index list such as "0,2-4". The
// list parsed last is kept: the checks ask of one status's list for each of
// its pods, and expanding it every time made judging a 10,000-pod Job
// quadratic (3 of its 12 seconds).
func inIndexList(list string, n int) bool {
	lastIndexList.Lock()
	defer lastIndexList.Unlock()
	if !lastIndexList.parsed || lastIndexList.list != list {
		lastIndexList.list, lastIndexList.set, lastIndexList.parsed = list, parseIndexSet(list), true
	}
	return lastIndexList.set.has(n)
}

var lastIndexList struct {
	sync.Mutex
	parsed bool
	list   string
	set    indexSet
}

// indexSet is an index list as sorted, disjoint closed intervals.
type indexSet [][2]int

func parseIndexSet(list string) indexSet {
	var s indexSet
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		if a <= b {
			s = append(s, [2]int{a, b})
		}
	}
	slices.SortFunc(s, func(x, y [2]int) int { return x[0] - y[0] })
	merged := s[:0]
	for _, iv := range s {
		if k := len(merged) - 1; k >= 0 && iv[0] <= merged[k][1]+1 {
			merged[k][1] = max(merged[k][1], iv[1])
			continue
		}
		merged = append(merged, iv)
	}
	return merged
}

func (s indexSet) has(n int) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i][1] >= n })
	return i < len(s) && s[i][0] <= n
}

func deletingNote(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return ", being deleted"
	}
	return ""
}
