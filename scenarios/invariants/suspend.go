package invariants

import (
	"time"

	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
)

// SuspendedCreatesNoPods: no pod is created for a suspended Job — none at all
// for a Job created suspended (the controller never saw it otherwise, across
// its own restarts too: upstream's TestSuspendJobControllerRestart), and none
// from SettleWindow after a suspension (a sync that read the Job before it
// may still create one) until the resume, outside an apiserver restart's lag.
// Read in v1.37.1's manageJob (a suspended Job wants no active pod),
// unchanged since the field came (v1.21).
var SuspendedCreatesNoPods = Invariant{
	Name:        "suspended-creates-no-pods",
	Description: "no pod is created while the Job is suspended (after a suspension has had SettleWindow to be seen)",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		if ctx.ForeignManagedBy {
			return nil
		}
		var out []Violation
		var since time.Time // when the current suspension began; zero: not suspended
		createdSuspended, first := false, true
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			if e.Kind == "Job" {
				j := after.job
				suspended := j != nil && ptr.Deref(j.Spec.Suspend, false)
				switch {
				case first && suspended:
					createdSuspended, since = true, e.Time
				case !suspended:
					createdSuspended, since = false, time.Time{}
				case since.IsZero():
					since = e.Time
				}
				first = first && j == nil
				return
			}
			j := before.job
			if e.Type != timeline.Added || j == nil || since.IsZero() {
				return
			}
			if _, known := before.pods[e.Pod().UID]; known {
				return
			}
			p := e.Pod()
			if !ownedBy(p, j) || p.Annotations[BroughtAnnotation] != "" {
				return
			}
			if !createdSuspended && (e.Time.Sub(since) < SettleWindow || disturbed(ctx, e.Time)) {
				return
			}
			how := "suspended " + e.Time.Sub(since).Round(100*time.Millisecond).String() + " before"
			if createdSuspended {
				how = "created suspended and never resumed"
			}
			out = append(out, violation("suspended-creates-no-pods", e, "pod %s created while the Job was suspended (%s)", p.Name, how))
		})
		return out
	},
}
