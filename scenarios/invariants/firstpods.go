package invariants

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
	"github.com/jobconform/jobconform/scenarios/bugs"
)

// FirstPodsWithin is the clock's bound on how soon after a Job is created
// its first pod must exist. The built-in makes it in the sync the Job's
// add event queues: 0.65 s at worst over a conformance suite's 170 Jobs on
// an idle machine, but 8.8 s (the reference 10.7 s) over rehearsal 14's
// 433 at a run queue of 11 to 15 per CPU (2026-12-02), so the clock's line
// is wide; the cause line is what catches a controller that waits.
var FirstPodsWithin = 30 * time.Second

// FirstPodsOnTime: a Job that wants pods when it is created — not
// suspended, parallelism and completions not 0, not delegated elsewhere —
// gets its first pod (created, or an orphan adopted) at once. By cause
// first: a sync that wrote the Job's status while it had no pod, its first
// pod coming more than CauseGrace later, chose not to create one (upstream
// creates a sync's pods before it writes the status). A Job made again
// under a deleted one's name owes nothing to that one's backoff, so a
// controller that kept it (mutant keep-backoff-on-recreate) writes the new
// Job's startTime and waits. Then by the clock: within FirstPodsWithin.
// Not judged when the Job was suspended, scaled to 0 or deleted before its
// first pod, after a refused creation (a FailedCreate event), across a
// restart or a break in the recording, nor for a dispatched Job (its pods
// are the worker's copy's). A Job that never gets a pod is left to the
// scenario's awaits.
var FirstPodsOnTime = Invariant{
	Name:        "first-pods-on-time",
	Late:        true,
	Description: "a Job that wants pods when created gets its first one at once: no status write without it more than 5 s before it, and within 30 s (a Job made again under a deleted one's name owes nothing to its backoff)",
	KnownBugs:   []string{bugs.RecreatedJobBackoff.ID},
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		if ctx.ForeignManagedBy || ctx.Copy != "" {
			return nil
		}
		jobs := jobEntries(ctx, t)
		if len(jobs) == 0 || jobs[0].Type != timeline.Added {
			return nil // the recording began after the Job was made
		}
		created, job := jobs[0], jobs[0].Job()
		if created.Time.Sub(job.CreationTimestamp.Time) > time.Second+clockSlack {
			return nil // listed when the recording began, not seen created
		}
		first := firstOwnedPod(t, job.UID)
		if first == nil || disturbedBetween(ctx, created.Time, first.Time) || refusedCreate(ctx, t, first.Time) {
			return nil
		}
		var wrote *timeline.Entry // the first status write, before the first pod
		for i, e := range jobs {
			if e.Time.After(first.Time) {
				break
			}
			if !wantsPods(e.Job()) {
				return nil // suspended, scaled to 0 or deleted before its first pod
			}
			if wrote == nil && i > 0 && !apiequality.Semantic.DeepEqual(jobs[i-1].Job().Status, e.Job().Status) {
				wrote = &jobs[i]
			}
		}
		if wrote != nil && actedLate(ctx, wrote.Time, *first) {
			return []Violation{violation("first-pods-on-time", *wrote, "the controller wrote the Job's status with no pod, and made its first pod %s later (%s after the Job was created): a sync that chose not to create it",
				first.Time.Sub(wrote.Time).Round(100*time.Millisecond), first.Time.Sub(created.Time).Round(100*time.Millisecond))}
		}
		if late := first.Time.Sub(created.Time); late > FirstPodsWithin {
			return []Violation{violation("first-pods-on-time", *first, "the Job's first pod came %s after the Job was created (bound %s)",
				late.Round(100*time.Millisecond), FirstPodsWithin)}
		}
		return nil
	},
}

// wantsPods tells whether the Job, as it stands, asks its controller for pods.
func wantsPods(j *batchv1.Job) bool {
	return j.DeletionTimestamp == nil && !ptr.Deref(j.Spec.Suspend, false) &&
		ptr.Deref(j.Spec.Parallelism, 1) > 0 && ptr.Deref(j.Spec.Completions, 1) > 0
}

// firstOwnedPod is the first entry showing a pod the Job with uid controls.
func firstOwnedPod(t timeline.Timeline, uid types.UID) *timeline.Entry {
	for i, e := range t {
		if p := e.Pod(); p != nil {
			if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == uid {
				return &t[i]
			}
		}
	}
	return nil
}

// refusedCreate tells whether a pod creation of the Job was refused before
// at (a FailedCreate event): quota, admission, a name taken.
func refusedCreate(ctx Context, t timeline.Timeline, at time.Time) bool {
	events, order := jobEvents(ctx, t)
	for _, name := range order {
		if ev := events[name]; ev.Reason == "FailedCreate" && ev.Type == corev1.EventTypeWarning {
			if et := eventTime(ev); et.IsZero() || !et.After(at) {
				return true
			}
		}
	}
	return false
}
