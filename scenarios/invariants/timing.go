package invariants

import (
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
)

// The built-in controller's pod-failure backoff (pkg/controller/job):
// 10s doubled per failure since the last success, at most 10 minutes.
const (
	BackoffBase = 10 * time.Second
	BackoffMax  = 10 * time.Minute
)

// ReplacementTolerance plus a quarter of the expected backoff is added to it
// for the upper bound: the controllers batch pod events for 1s, timestamps
// have 1s resolution and a sync plus a pod creation take a moment on a loaded
// machine (the CI of 2026-11-27 saw the built-in replace a pod 5.4s past a
// 20s backoff while the conformance suite ran 24 processes on two cores). A controller off by one
// doubling still misses the bound: 2·B > B + B/4 + 5s for every B ≥ 10s.
var ReplacementTolerance = 5 * time.Second

// ReplacementBound is how long after the Job's latest failure a replacement
// may come after n failures.
func ReplacementBound(n int) time.Duration {
	b := Backoff(n)
	return b + b/4 + ReplacementTolerance
}

// Backoff is the delay before replacing a pod after n failures (n ≥ 1).
func Backoff(n int) time.Duration {
	d := BackoffBase
	for i := 1; i < n && d < BackoffMax; i++ {
		d *= 2
	}
	return min(d, BackoffMax)
}

// ReplacementTiming: every replaced pod is replaced, for Indexed Jobs not
// before the policy allows it — its deletion under TerminatingOrFailed, its
// terminal phase (or removal) under Failed — and not later than the
// controller's backoff allows: the built-in controller keeps one backoff per
// Job (per index with backoffLimitPerIndex) that runs from the latest failure
// and doubles with each failure since the last success (pkg/controller/job,
// backoff_utils.go), so the bound is the Job's latest failure before the
// replacement — the later of a pod's deletion and its Failed phase, as
// releases differ there — plus ReplacementBound(every failure so far):
// never tighter than upstream's. Late is proven first by cause: a status
// the controller writes more than CauseGrace after that backoff ended,
// while the Job wants the pod and it is missing, is a sync that could have
// created it and did not (unless the machine was starved meanwhile:
// causeVoid); the clock's bound is the second line. Replacements that are not due (the Job is
// suspended, targeted for a terminal condition, rescaled, or needs no more
// pods — its live pods already at parallelism when this one ends) are not timed; a replacement that never comes is left to the
// scenario's awaits, which then time out.
var ReplacementTiming = Invariant{
	Name:        "replacement-timing",
	Late:        true,
	Description: "a failed or deleted pod is replaced after the policy allows it; not late: no status write past its due time without it, and within the backoff from the Job's latest failure plus a tolerance",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		type due struct {
			pod *corev1.Pod
			at  timeline.Entry // when the policy allowed the replacement
			// late: a status write already proved the controller late on it
			late bool
		}
		var out []Violation
		var pending []due // in order of at
		seen := map[types.UID]bool{}
		terminal := map[types.UID]bool{} // seen pods whose Failed phase moved lastFailure
		failures := 0                    // every failure of the Job so far
		var lastFailure time.Time        // the latest of them
		var jobSpec *batchv1.JobSpec
		byIndex := podsByIndex{} // before's pods by completion index
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			defer byIndex.apply(e)
			if after.job == nil {
				return
			}
			j := after.job
			if e.Kind == "Job" {
				if jobSpec != nil && (ptr.Deref(jobSpec.Parallelism, 1) != ptr.Deref(j.Spec.Parallelism, 1) ||
					ptr.Deref(jobSpec.Completions, -1) != ptr.Deref(j.Spec.Completions, -1)) {
					pending = nil // rescaled: what is due changed
				}
				spec := j.Spec
				jobSpec = &spec
				if !replacing(j) {
					pending = nil
				}
				// By cause: a status write past the due time while a due
				// replacement is still missing and the Job wants the pod.
				dueAt := lastFailure.Add(Backoff(failures))
				if before.job == nil || apiequality.Semantic.DeepEqual(before.job.Status, j.Status) || !e.Time.After(dueAt.Add(CauseGrace)) ||
					disturbedBetween(ctx, lastFailure, e.Time) || !wanting(j, after) {
					return
				}
				for i := range pending {
					d := &pending[i]
					if d.late || (indexOf(d.pod) != "" && !indexOwed(j, after, indexOf(d.pod))) {
						continue
					}
					if causeVoid(ctx, dueAt, e.Time) {
						break
					}
					d.late = true
					out = append(out, violation("replacement-timing", e, "the controller wrote the Job's status %s after the replacement of pod %s was due (backoff %s for %d failures, from %s) without creating it (a write after it was due to act, the machine not starved meanwhile)",
						e.Time.Sub(dueAt).Round(100*time.Millisecond), d.pod.Name, Backoff(failures), failures, lastFailure.Format("15:04:05.000")))
				}
				return
			}
			p := e.Pod()
			if !ownedBy(p, j) {
				return
			}
			if _, known := before.pods[p.UID]; e.Type == timeline.Added && !known {
				// A new pod stands for the earliest due pod (of its index).
				for i, d := range pending {
					if indexOf(d.pod) != indexOf(p) {
						continue
					}
					pending = append(pending[:i], pending[i+1:]...)
					bound := ReplacementBound(failures)
					if since := e.Time.Sub(lastFailure); since > bound && !d.late && !disturbedBetween(ctx, lastFailure, e.Time) {
						out = append(out, violation("replacement-timing", e, "pod %s replaced %s (due since %s) %s after the Job's latest failure (bound %s: backoff %s after %d failures + a quarter + %s)",
							p.Name, d.pod.Name, d.at.Time.Format("15:04:05.000"), since.Round(100*time.Millisecond), bound, Backoff(failures), failures, ReplacementTolerance))
					}
					break
				}
				// Indexed: not before the predecessor is replaceable.
				if ix := indexOf(p); ix != "" {
					for _, q := range byIndex.of(before, ix, j.UID) {
						if !podTerminal(q) && q.DeletionTimestamp == nil {
							out = append(out, violation("replacement-timing", e, "pod %s of index %s created while %s of that index runs and is not being deleted", p.Name, ix, q.Name))
						}
					}
				}
				return
			}
			if seen[p.UID] {
				// Some releases (1.34.3) start the backoff when a deleted pod
				// reaches its terminal phase, not at its deletion: the later
				// time bounds the replacement.
				if p.Status.Phase == corev1.PodFailed && !terminal[p.UID] {
					terminal[p.UID] = true
					lastFailure = maxTime(lastFailure, e.Time)
				}
				return
			}
			gone := e.Type == timeline.Deleted && p.Status.Phase != corev1.PodSucceeded
			if !gone && !replaceable(p, replacementPolicyFailed(j) && !during(ctx.PolicyOff, e.Time)) {
				return
			}
			seen[p.UID] = true
			terminal[p.UID] = p.Status.Phase == corev1.PodFailed
			failures++
			lastFailure = maxTime(lastFailure, e.Time)
			// Due only where the Job wants a pod once this one is gone: a
			// pod a scale-down removed (its SIGTERM trap outlasting the
			// change of parallelism, so its end comes after the rescale)
			// leaves the Job at its parallelism (explore-4-1054: index 0's
			// next pod came only when index 1 ended, 20 s on, under both
			// controllers).
			if replacing(j) && !surplus(j, before) && wanting(j, after) {
				pending = append(pending, due{pod: p, at: e})
			}
		})
		return out
	},
}

// surplus tells whether the Job had more live pods than it wants before this
// change (an adopted orphan, say): the pod that goes is the controller's
// scale-down, not one to replace.
func surplus(j *batchv1.Job, before *world) bool {
	live, want := liveAndWanted(j, before)
	return live > want
}

// wanting tells whether the Job has fewer live pods than it wants: a
// missing replacement is owed (a work queue with a success creates none).
func wanting(j *batchv1.Job, w *world) bool {
	if j.Spec.Completions == nil && j.Status.Succeeded > 0 {
		return false
	}
	live, want := liveAndWanted(j, w)
	return live < want
}

// liveAndWanted counts the Job's live pods in w (neither terminal nor being
// deleted) and how many it wants: parallelism, at most the completions left.
func liveAndWanted(j *batchv1.Job, w *world) (live, want int32) {
	want = ptr.Deref(j.Spec.Parallelism, 1)
	if j.Spec.Completions != nil {
		want = min(want, max(*j.Spec.Completions-j.Status.Succeeded, 0))
	}
	for _, q := range w.podsOf(j.UID) {
		if !podTerminal(q) && q.DeletionTimestamp == nil {
			live++
		}
	}
	return live, want
}

// indexOwed tells whether the Indexed Job still owes index ix a pod: in
// range, neither completed nor failed, and no pod of it runs (not
// terminal, not being deleted).
func indexOwed(j *batchv1.Job, w *world, ix string) bool {
	n, err := strconv.Atoi(ix)
	if err != nil || n < 0 || n >= int(ptr.Deref(j.Spec.Completions, 0)) || parseIndexSet(j.Status.CompletedIndexes).has(n) ||
		parseIndexSet(ptr.Deref(j.Status.FailedIndexes, "")).has(n) {
		return false
	}
	for _, q := range w.podsOf(j.UID) {
		if indexOf(q) == ix && !podTerminal(q) && q.DeletionTimestamp == nil {
			return false
		}
	}
	return true
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// replacing tells whether the Job is in a state where its controller replaces
// failed pods: not suspended, not on its way to a terminal condition.
func replacing(j *batchv1.Job) bool {
	return !ptr.Deref(j.Spec.Suspend, false) && hasCond(j.Status, batchv1.JobSuspended) == nil &&
		hasCond(j.Status, batchv1.JobFailureTarget) == nil && hasCond(j.Status, batchv1.JobSuccessCriteriaMet) == nil &&
		finished(j.Status) == nil
}

// replaceable tells whether the policy lets the controller replace p now
// (onlyFailed: podReplacementPolicy Failed is in force).
func replaceable(p *corev1.Pod, onlyFailed bool) bool {
	if p.Status.Phase == corev1.PodFailed {
		return true
	}
	if p.Status.Phase == corev1.PodSucceeded {
		return false
	}
	return p.DeletionTimestamp != nil && !onlyFailed
}
