package invariants

import (
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
)

// Mirroring: a dispatcher such as Kueue's MultiKueue runs a copy of the
// manager cluster's Job on a worker cluster and copies the copy's status
// back (issue #31). CheckMirror judges the copying from the two clusters'
// recordings, made on one clock.

// MirrorAheadSlack is how far the manager's recording may run ahead of the
// worker's: two watches in one process need not deliver in causal order.
var MirrorAheadSlack = time.Second

// MirrorResult is CheckMirror's verdict.
type MirrorResult struct {
	// Lags are, for each distinct status of the worker's Job, how long it
	// took to show on the manager's Job (itself or a later one of the
	// worker's: a dispatcher may copy the newest status only).
	Lags       []time.Duration
	Violations []Violation
}

// mirrored is the part of a Job's status a dispatcher copies.
type mirrored struct {
	active, ready, terminating, succeeded, failed int32
	completedIndexes, failedIndexes               string
	conditions                                    string // True conditions: type/reason, sorted
}

func mirroredOf(s batchv1.JobStatus) mirrored {
	var conds []string
	for _, c := range s.Conditions {
		if c.Status == "True" {
			conds = append(conds, string(c.Type)+"/"+c.Reason)
		}
	}
	slices.Sort(conds)
	return mirrored{active: s.Active, ready: ptr.Deref(s.Ready, 0), terminating: ptr.Deref(s.Terminating, 0),
		succeeded: s.Succeeded, failed: s.Failed, completedIndexes: s.CompletedIndexes,
		failedIndexes: ptr.Deref(s.FailedIndexes, ""), conditions: strings.Join(conds, ",")}
}

func (m mirrored) String() string {
	return fmt.Sprintf("active=%d ready=%d terminating=%d succeeded=%d failed=%d completedIndexes=%q failedIndexes=%q conditions=[%s]",
		m.active, m.ready, m.terminating, m.succeeded, m.failed, m.completedIndexes, m.failedIndexes, m.conditions)
}

type mirrorState struct {
	e timeline.Entry
	m mirrored
	// written: the status is not the empty JobStatus. An all-zero status
	// someone wrote (ready=0, terminating=0) is a copy on the manager's
	// Job, not its status from before anything was copied (rehearsal 14:
	// a copy whose one pod failed at once went active=1 → 0, the
	// dispatcher's first write copied the 0 half a second later, and it
	// was read as nothing copied until its next write, 15.9 s after the
	// copy's first status).
	written bool
}

// distinctStatuses are the Job's statuses in the order recorded, each
// once (consecutive repeats dropped).
func distinctStatuses(t timeline.Timeline, job string) []mirrorState {
	var out []mirrorState
	for _, e := range t {
		if e.Kind != "Job" || e.Name != job || e.Type == timeline.Deleted {
			continue
		}
		m, written := mirroredOf(e.Job().Status), !apiequality.Semantic.DeepEqual(e.Job().Status, batchv1.JobStatus{})
		if len(out) > 0 && out[len(out)-1].m == m && (m != (mirrored{}) || out[len(out)-1].written == written) {
			continue
		}
		out = append(out, mirrorState{e, m, written})
	}
	return out
}

// CheckMirror judges the manager's Job job against the worker's copy (of
// the same name): every distinct status of the copy shows on the manager's
// Job within bound (itself, or a later status of the copy's), in the copy's
// order; the manager never shows a status the copy has not had; and its
// succeeded and failed never run ahead of the copy's (beyond
// MirrorAheadSlack). The manager's status before the copy's first is not
// judged (the dispatcher has not created the copy yet).
func CheckMirror(manager, worker timeline.Timeline, job string, bound time.Duration, end time.Time) MirrorResult {
	r := MirrorResult{Violations: runAgain(manager, worker)}
	mgr, wrk := distinctStatuses(manager, job), distinctStatuses(worker, job)
	if len(wrk) == 0 {
		return r
	}
	index := map[mirrored][]int{} // a status → where the copy had it
	for i, w := range wrk {
		index[w.m] = append(index[w.m], i)
	}
	if d := deletedAt(manager, job); !d.IsZero() && d.Before(end) {
		end = d
	}
	shown := make([]time.Time, len(wrk)) // when each copy status (or a later one) first showed
	var accepted []mirrorState           // the manager's statuses that showed one of the copy's
	last := -1                           // the latest copy status the manager has shown
	for _, s := range mgr {
		if s.m == (mirrored{}) && last < 0 && !s.written {
			continue // the manager's Job before anything was copied
		}
		if w := latestBy(wrk, s.e.Time.Add(MirrorAheadSlack)); w == nil || s.m.succeeded > w.m.succeeded || s.m.failed > w.m.failed {
			var ws, wf int32
			if w != nil {
				ws, wf = w.m.succeeded, w.m.failed
			}
			if s.m.succeeded > ws || s.m.failed > wf {
				r.Violations = append(r.Violations, violation("mirror-counters", s.e, "the manager's Job counts succeeded=%d failed=%d, ahead of the worker's copy (succeeded=%d failed=%d)",
					s.m.succeeded, s.m.failed, ws, wf))
			}
		}
		// The copy status this one shows, at or after last: the latest the
		// copy had by then (a dispatcher copies the newest it has seen; seen
		// with MultiKueue: the copy went ready 2→1→2 and the manager's ready=2
		// a second later was the second 2, not the first), else the earliest
		// recorded up to MirrorAheadSlack later (two watches need not deliver
		// in causal order).
		next := -1
		for _, i := range index[s.m] {
			if i < max(last, 0) {
				continue
			}
			if t := wrk[i].e.Time; !t.After(s.e.Time) || (next < 0 && !t.After(s.e.Time.Add(MirrorAheadSlack))) {
				next = i
			}
			if wrk[i].e.Time.After(s.e.Time) {
				break
			}
		}
		switch {
		case next < 0 && slices.ContainsFunc(index[s.m], func(i int) bool { return i < last }):
			r.Violations = append(r.Violations, violation("mirror-order", s.e, "the manager's Job went back to an older status of the worker's copy: %s", s.m))
			continue
		case next < 0:
			r.Violations = append(r.Violations, violation("mirror-faithful", s.e, "the manager's Job shows a status the worker's copy never had by then: %s", s.m))
			continue
		}
		for i := max(last+1, 0); i <= next; i++ {
			if shown[i].IsZero() {
				shown[i] = s.e.Time
			}
		}
		last = max(last, next)
		accepted = append(accepted, s)
	}
	// The copy's first status, when empty, is shown already if the
	// manager's Job is empty then: nothing is owed for it (seen in CI: a
	// 500-pod copy sat empty for 12 s while its pods were created, then the
	// dispatcher copied its first counts in 3.7 s, read as 15.7 s late).
	if first := wrk[0]; first.m == (mirrored{}) {
		if m := latestBy(mgr, first.e.Time); m == nil || m.m == (mirrored{}) {
			shown[0] = first.e.Time
		}
	}
	// A status of the copy that the manager's Job already shows when the
	// copy reaches it is shown then, with the copy's skipped statuses
	// before it: the dispatcher copies it and nothing changes, so the
	// manager's recording has no new entry (seen with MultiKueue: ready
	// 2→1→2 within a second, its sync a second later wrote ready=2 over
	// ready=2). Only a status the manager showed as the copy's counts, not
	// its own empty one from before the copy (seen: the copy's empty status
	// between terminating and failed matched that, and hid a dispatcher 15 s
	// late).
	for j, w := range wrk {
		if w.e.Time.After(end) {
			break // the manager's Job is deleted: it shows nothing any more
		}
		if cur := latestBy(accepted, w.e.Time); cur == nil || cur.m != w.m {
			continue
		}
		for i := j; i >= 0 && (shown[i].IsZero() || shown[i].After(w.e.Time)); i-- {
			shown[i] = w.e.Time
		}
	}
	for i, w := range wrk {
		switch {
		case !shown[i].IsZero():
			lag := max(shown[i].Sub(w.e.Time), 0)
			r.Lags = append(r.Lags, lag)
			if lag > bound {
				r.Violations = append(r.Violations, violation("mirror-lag", w.e, "the worker's copy's status took %s to reach the manager's Job (bound %s): %s",
					lag.Round(100*time.Millisecond), bound, w.m))
			}
		case w.e.Time.After(end):
			// recorded after the manager's Job was deleted: owed nothing
		case end.Sub(w.e.Time) > bound:
			r.Violations = append(r.Violations, violation("mirror-lag", w.e, "the worker's copy's status never reached the manager's Job (%s to the end): %s",
				end.Sub(w.e.Time).Round(100*time.Millisecond), w.m))
		}
	}
	return r
}

// runAgain is a copy made on the worker after the Job had finished (Complete
// or Failed shown on the manager's Job or on a copy): the finished Job run
// again. MultiKueue did so when the worker's TTL-after-finished controller
// removed a finished copy (kubernetes-sigs/kueue#14734; Kueue stopped
// copying ttlSecondsAfterFinished behind a gate): a dispatcher must not hand
// the worker's clean-up a Job whose end the manager's Job has to show.
func runAgain(manager, worker timeline.Timeline) []Violation {
	var finished time.Time
	for _, t := range []timeline.Timeline{manager, worker} {
		for _, e := range t {
			if j := e.Job(); j != nil && e.Type != timeline.Deleted && (hasCond(j.Status, batchv1.JobComplete) != nil || hasCond(j.Status, batchv1.JobFailed) != nil) {
				if finished.IsZero() || e.Time.Before(finished) {
					finished = e.Time
				}
				break
			}
		}
	}
	var out []Violation
	seen := map[types.UID]bool{}
	for _, e := range worker {
		j := e.Job()
		if j == nil || seen[j.UID] {
			continue
		}
		seen[j.UID] = true
		if len(seen) > 1 && !finished.IsZero() && e.Time.After(finished) {
			out = append(out, violation("mirror-once", e, "the worker got a new copy of the Job (uid %s) after the Job had finished (shown at %s): the finished Job runs again",
				j.UID, finished.UTC().Format("15:04:05.000")))
		}
	}
	return out
}

// deletedAt is when the Job job was first seen deleting or gone (zero if
// never).
func deletedAt(t timeline.Timeline, job string) time.Time {
	for _, e := range t {
		if e.Kind == "Job" && e.Name == job && (e.Type == timeline.Deleted || e.Job().DeletionTimestamp != nil) {
			return e.Time
		}
	}
	return time.Time{}
}

// latestBy is the last status recorded at or before t, or nil.
func latestBy(states []mirrorState, t time.Time) *mirrorState {
	var out *mirrorState
	for i := range states {
		if states[i].e.Time.After(t) {
			break
		}
		out = &states[i]
	}
	return out
}

// MirrorWithin is how late a status of the worker's copy may reach the
// manager's Job: a dispatcher watches the worker and writes the manager's
// status, two round trips on a machine it shares with both clusters.
var MirrorWithin = 10 * time.Second

// MirrorPending tells whether the manager's Job (ctx.Job) does not show the
// last status of the worker's copy (ctx.Copy) yet: the dispatcher owes it a
// write. Neither being deleted or gone owes anything.
func MirrorPending(ctx Context, t timeline.Timeline) bool {
	if ctx.Copy == "" {
		return false
	}
	var manager, copied *batchv1.Job
	for _, e := range t {
		if e.Kind != "Job" {
			continue
		}
		j := e.Job()
		if e.Type == timeline.Deleted {
			j = nil
		}
		switch e.Name {
		case ctx.Job:
			manager = j
		case ctx.Copy:
			copied = j
		}
	}
	if manager == nil || copied == nil || manager.DeletionTimestamp != nil || copied.DeletionTimestamp != nil {
		return false
	}
	return mirroredOf(manager.Status) != mirroredOf(copied.Status)
}

// Mirror is CheckMirror over one mirrored recording (recorder.StartMirrored):
// the manager's Job is ctx.Job, the worker's copy is recorded as ctx.Copy.
// Its verdict is named "mirror"; violations inside the recording's gaps are
// dropped, as every invariant's are. It also returns the lags measured.
func Mirror(ctx Context, t timeline.Timeline, within time.Duration) (Result, []time.Duration) {
	if within == 0 {
		within = MirrorWithin
	}
	var manager, worker timeline.Timeline
	for _, e := range t {
		switch {
		case e.Kind == "Job" && e.Name == ctx.Job:
			manager = append(manager, e)
		case e.Kind == "Job" && e.Name == ctx.Copy:
			e.Name = ctx.Job
			worker = append(worker, e)
		}
	}
	m := CheckMirror(manager, worker, ctx.Job, within, recordingEnd(ctx, t))
	res := Result{Invariant: "mirror", Applicable: true}
	for _, v := range m.Violations {
		if !during(ctx.Gaps, v.Time) {
			res.Violations = append(res.Violations, v)
		}
	}
	return res, m.Lags
}
