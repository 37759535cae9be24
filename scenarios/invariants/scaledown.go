package invariants

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobconform/jobconform/internal/timeline"
)

// ScaleDownOrder: a NonIndexed Job with more live pods than it wants deletes
// the least advanced first, by the first three keys of upstream's
// ActivePods order (v1.37.1 activePodsForRemoval): an unscheduled pod before
// a scheduled one, a pending before a running one, a not-ready before a
// ready one. Judged at each deletion of a surplus pod against each pod kept:
// a violation when the kept one was less advanced, both having been so for
// SettleWindow (the controller's cache may lag), outside restarts. The later
// keys (ready time, restarts, creation time) are too close to call from
// outside.
var ScaleDownOrder = Invariant{
	Name:        "scale-down-order",
	Description: "a NonIndexed Job removes its surplus pods unscheduled before scheduled, pending before running, not ready before ready",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		type ranked struct {
			rank  podRank
			since time.Time
		}
		ranks := map[types.UID]ranked{}
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			if e.Kind != "Pod" {
				return
			}
			p := e.Pod()
			old, known := before.pods[p.UID]
			defer func() {
				if r := rankOf(p); e.Type != timeline.Deleted && (!known || ranks[p.UID].rank != r) {
					ranks[p.UID] = ranked{r, e.Time}
				}
			}()
			j := before.job
			if j == nil || isIndexedJob(j) || !known || old.DeletionTimestamp != nil || p.DeletionTimestamp == nil && e.Type != timeline.Deleted ||
				podTerminal(old) || !replacing(j) || !surplus(j, before) || disturbed(ctx, e.Time) {
				return
			}
			if !ownedBy(old, j) {
				return
			}
			gone := ranks[p.UID]
			if e.Time.Sub(gone.since) < SettleWindow {
				return
			}
			for _, q := range before.podsOf(j.UID) {
				kept := ranks[q.UID]
				if q.UID == p.UID || podTerminal(q) || q.DeletionTimestamp != nil || e.Time.Sub(kept.since) < SettleWindow {
					continue
				}
				if kept.rank.less(gone.rank) {
					out = append(out, violation("scale-down-order", e, "deleted pod %s (%s) while keeping %s (%s): the less advanced goes first",
						p.Name, gone.rank, q.Name, kept.rank))
					return
				}
			}
		})
		return out
	},
}

// podRank is how far along a pod is, by upstream's first three keys.
type podRank struct {
	scheduled bool
	phase     int // Pending 0, Unknown 1, Running 2 (podPhaseToOrdinal)
	ready     bool
}

func rankOf(p *corev1.Pod) podRank {
	phase := map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}[p.Status.Phase]
	return podRank{scheduled: p.Spec.NodeName != "", phase: phase, ready: podReady(p)}
}

func (a podRank) less(b podRank) bool {
	switch {
	case a.scheduled != b.scheduled:
		return !a.scheduled
	case a.phase != b.phase:
		return a.phase < b.phase
	}
	return !a.ready && b.ready
}

func (a podRank) String() string {
	s := []string{"pending", "unknown", "running"}[a.phase]
	if !a.scheduled {
		s = "unscheduled, " + s
	}
	if a.ready {
		return s + ", ready"
	}
	return s + ", not ready"
}
