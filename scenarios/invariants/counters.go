// Counters: what status counts, change by change.

package invariants

import (
	"sort"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
	"github.com/jobconform/jobconform/scenarios/bugs"
)

// CountersMonotonic: status.failed never decreases; status.succeeded never
// decreases except when an elastic Indexed Job's completions shrink; an
// index once in completedIndexes or failedIndexes stays there while it is
// below completions (upstream parses both lists with the completions in
// force and only adds to them, v1.37.1 calculateSucceededIndexes and
// calculateFailedIndexes). An index list's values on the way are the one
// part of the status sequence that no timing changes: which index
// finishes first, and how many a write finds, do (docs/oracle.md).
var CountersMonotonic = Invariant{
	Name:        "counters-monotonic",
	Manager:     true,
	Description: "status.failed and status.succeeded never decrease (succeeded may when an elastic Indexed Job scales down), and no index below completions leaves completedIndexes or failedIndexes",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		var prev *batchv1.Job
		// The completions in force when status.succeeded took its current
		// value: the spec change and the status write that drops removed
		// indexes' successes are separate writes.
		var completionsAt int32
		for _, e := range jobEntries(ctx, t) {
			j := e.Job()
			if prev == nil {
				completionsAt = ptr.Deref(j.Spec.Completions, 0)
			} else {
				if j.Status.Failed < prev.Status.Failed {
					out = append(out, violation("counters-monotonic", e, "failed went from %d to %d", prev.Status.Failed, j.Status.Failed))
				}
				shrunk := isIndexedJob(j) && ptr.Deref(j.Spec.Completions, 0) < completionsAt
				if j.Status.Succeeded < prev.Status.Succeeded && !shrunk {
					out = append(out, violation("counters-monotonic", e, "succeeded went from %d to %d", prev.Status.Succeeded, j.Status.Succeeded))
				}
				if j.Status.Succeeded != prev.Status.Succeeded {
					completionsAt = ptr.Deref(j.Spec.Completions, 0)
				}
				below := int(min(completionsAt, ptr.Deref(j.Spec.Completions, 0)))
				for _, l := range []struct{ name, was, is string }{
					{"completedIndexes", prev.Status.CompletedIndexes, j.Status.CompletedIndexes},
					{"failedIndexes", ptr.Deref(prev.Status.FailedIndexes, ""), ptr.Deref(j.Status.FailedIndexes, "")},
				} {
					if n, lost := firstLost(l.was, l.is, below); lost && l.was != l.is {
						out = append(out, violation("counters-monotonic", e, "index %d left %s (%q → %q, completions %d)", n, l.name, l.was, l.is, below))
					}
				}
			}
			prev = j
		}
		return out
	},
}

// ReadyNotAboveActive: status.ready ≤ status.active in every status.
var ReadyNotAboveActive = Invariant{
	Name:        "ready-not-above-active",
	Manager:     true,
	Description: "status.ready never exceeds status.active",
	KnownBugs:   []string{bugs.StaleStatusDuringBackoff.ID},
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		for _, e := range jobEntries(ctx, t) {
			s := e.Job().Status
			if r := ptr.Deref(s.Ready, 0); r > s.Active {
				out = append(out, violation("ready-not-above-active", e, "ready=%d > active=%d", r, s.Active))
			}
		}
		return out
	},
}

// firstLost is the lowest index below below that list was holds and is
// does not.
func firstLost(was, is string, below int) (int, bool) {
	if was == "" || was == is {
		return 0, false
	}
	now := parseIndexSet(is)
	for _, iv := range parseIndexSet(was) {
		for n := iv[0]; n <= iv[1] && n < below; n++ {
			if !now.has(n) {
				return n, true
			}
			// Skip what the interval of now holding n covers.
			i := sort.Search(len(now), func(i int) bool { return now[i][1] >= n })
			n = now[i][1]
		}
	}
	return 0, false
}
