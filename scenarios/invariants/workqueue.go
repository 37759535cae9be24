// Work-queue Jobs: no completions, done once a pod has succeeded.

package invariants

import (
	batchv1 "k8s.io/api/batch/v1"

	"github.com/jobconform/jobconform/internal/timeline"
)

// WorkQueueNoRefill: a Job without completions (a work queue) creates no
// pod once it has seen one succeed: the running pods are left to finish and
// the Job completes when none is active (pkg/controller/job manageJob: with
// no completions, wantActive is the active count once succeeded > 0; read in
// v1.37.1, the same since the Job API's first release). A creation counts as
// late only after the controller's own status write recorded a success, so a
// pod created in the sync that saw the success is not one.
var WorkQueueNoRefill = Invariant{
	Name:        "work-queue-no-refill",
	Description: "a Job without completions creates no pod after its status has recorded a succeeded pod",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		var since *timeline.Entry
		replay(ctx, t, func(e timeline.Entry, before, _ *world) {
			j := before.job
			switch {
			case e.Kind == "Job" && e.Type != timeline.Deleted:
				if cur := e.Job(); since == nil && cur.Spec.Completions == nil && succeededRecorded(cur.Status) {
					since = &e
				}
			case e.Kind == "Pod" && e.Type == timeline.Added && j != nil && j.Spec.Completions == nil && since != nil:
				out = append(out, violation("work-queue-no-refill", e, "pod %s was created after the Job's status recorded a success (at %s): a work queue is done once a pod has succeeded",
					e.Pod().Name, since.Time.Format("15:04:05.000")))
			}
		})
		return out
	},
}

// succeededRecorded tells whether a status counts a succeeded pod, or holds
// one about to be counted.
func succeededRecorded(s batchv1.JobStatus) bool {
	return s.Succeeded > 0 || (s.UncountedTerminatedPods != nil && len(s.UncountedTerminatedPods.Succeeded) > 0)
}
