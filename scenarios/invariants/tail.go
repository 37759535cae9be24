package invariants

import (
	"slices"

	"github.com/jobconform/jobconform/internal/timeline"
)

// Tail is the longest an invariant waits after a state before it judges
// it: the settled counts' window, the grace of adoption, of indexes and of
// a deleted Job's pods, the terminal event's. A recording that ends sooner
// after its last change leaves that state unjudged unless the runner goes on
// recording (Pending).
var Tail = max(countSettleWindow, AdoptionGrace, DeletionGrace, TerminalEventGrace)

// Pending names the invariants, of among (nil: All), whose verdict on the
// end of t is not in yet: they would find more wrong if the recording went
// on unchanged for Tail past ctx.End. A runner that keeps recording until
// none is pending, or something changes, has every invariant judge the
// state a run ends in, not only the states before it; a correct controller
// costs no wait, as its final state is no violation however long it lasts.
func Pending(ctx Context, t timeline.Timeline, among []string) []string {
	later := ctx
	later.End = recordingEnd(ctx, t).Add(Tail)
	var out []string
	for _, inv := range All {
		if among != nil && !slices.Contains(among, inv.Name) {
			continue
		}
		now := inv.Evaluate(ctx, t)
		if !now.Applicable {
			continue
		}
		if len(inv.Evaluate(later, t).Violations) > len(now.Violations) {
			out = append(out, inv.Name)
		}
	}
	return out
}
