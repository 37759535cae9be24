// The per-index pod-failure backoff from below (backoffLimitPerIndex).

package invariants

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobconform/jobconform/internal/timeline"
)

// IndexBackoffRespected: with backoffLimitPerIndex, a pod that retries an
// index is not created before that index's own backoff allows it:
// 10s·2^(n−1) after the index's last failed pod finished, n that pod's
// failures plus one — upstream's getRemainingTimePerIndex (v1.31 to
// v1.37.1), which reads the count off the failed pod's
// job-index-failure-count and job-index-ignored-failure-count annotations,
// so a restart of the controller does not reset it. The failed pod taken is
// the one with the most failures (as upstream's
// getPodsWithDelayedDeletionPerIndex), its earliest possible finish time,
// the weakest bound any controller view allows. Not bounded inside a
// stretch the recording does not know.
var IndexBackoffRespected = Invariant{
	Name:        "index-backoff-respected",
	Description: "with backoffLimitPerIndex, no pod retries an index before that index's own backoff (10s doubled per failure of the index) allows it",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		type failure struct {
			count  int
			finish time.Time
		}
		last := map[string]failure{} // index → its failed pod with the most failures
		// The earliest finish any view of a pod gave once it was being
		// deleted or had failed: a controller that counted it failed at its
		// deletion (TerminatingOrFailed) read its finish from that view —
		// upstream's getFinishedTime takes a Ready=False transition before a
		// deletion, and a pod held unready by a gate has one from its start.
		finished := map[types.UID]time.Time{}
		released := map[types.UID]bool{} // releasedUncounted: no failure of the index
		spans := unknownSpans(t)
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			j := after.job
			if j == nil || j.Spec.BackoffLimitPerIndex == nil || e.Kind != "Pod" {
				return
			}
			p := e.Pod()
			ix := indexOf(p)
			if !ownedBy(p, j) || ix == "" {
				return
			}
			if _, known := before.pods[p.UID]; e.Type == timeline.Added && !known {
				f, ok := last[ix]
				if !ok || overlapsUnknownTime(spans, f.finish, e.Time) {
					return
				}
				lb := f.finish.Add(Backoff(f.count + 1))
				if e.Time.Before(lb.Add(-backoffEarlyTolerance)) {
					out = append(out, violation("index-backoff-respected", e, "pod %s retries index %s %s before its backoff ended (%s after the index's failure %d: not before %s)",
						p.Name, ix, lb.Sub(e.Time).Round(100*time.Millisecond), Backoff(f.count+1), f.count+1, lb.UTC().Format("15:04:05")))
				}
				return
			}
			if released[p.UID] = released[p.UID] || releasedUncounted(ctx, p); released[p.UID] {
				return
			}
			if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodFailed {
				finished[p.UID] = earliest(finished[p.UID], finishCandidates(p))
			}
			if p.Status.Phase != corev1.PodFailed {
				return
			}
			n, at := absoluteFailures(p), finished[p.UID]
			if f, ok := last[ix]; !ok || n > f.count || (n == f.count && at.After(f.finish)) {
				last[ix] = failure{n, at}
			}
		})
		return out
	},
}
