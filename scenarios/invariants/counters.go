// Counters: what status counts, change by change.

package invariants

import (
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
	"github.com/jobconform/jobconform/scenarios/bugs"
)

// CountersMonotonic: status.failed never decreases; status.succeeded never
// decreases except when an elastic Indexed Job's completions shrink.
var CountersMonotonic = Invariant{
	Name:        "counters-monotonic",
	Manager:     true,
	Description: "status.failed and status.succeeded never decrease (succeeded may when an elastic Indexed Job scales down)",
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
