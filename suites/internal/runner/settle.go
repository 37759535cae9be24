package runner

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/jobconform/jobconform/internal/recorder"
	"github.com/jobconform/jobconform/scenarios/invariants"
)

// The end of a run: the recording goes on until the state it ends in has
// been judged by every invariant.

// settle waits until nothing changed for quiet, at most max.
func settle(ctx context.Context, rec *recorder.Recorder, quiet, max time.Duration) {
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) {
		es := rec.Entries()
		if len(es) == 0 || time.Since(es[len(es)-1].Time) >= quiet {
			return
		}
		wait := quiet - time.Since(es[len(es)-1].Time)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// awaitMirror waits, for a dispatched Job, until the manager's Job shows its
// worker's copy's last status (invariants.MirrorPending), at most within:
// the oracle compares the manager's final status, which follows the copy's
// a round trip or two later (seen on the CI's loaded machine: 3.5 s behind,
// the recording's 5 s of quiet over before it came). A dispatcher that
// mirrors costs no wait; whether it mirrors in time is mirror's verdict.
func awaitMirror(ctx context.Context, rec *recorder.Recorder, ictx func() invariants.Context, within time.Duration) {
	deadline := time.Now().Add(within)
	for {
		entries := rec.Entries()
		if !invariants.MirrorPending(ictx(), entries) || !time.Now().Before(deadline) {
			return
		}
		if _, err := rec.WaitFrom(ctx, len(entries), time.Until(deadline), "the manager's Job to show its copy's status", func(recorder.Entry) bool { return true }); err != nil && ctx.Err() != nil {
			return
		}
	}
}

// awaitOwedEvents waits until the events the recording still owes
// (invariants.OwedEvents: the terminal event, Suspended and Resumed events,
// a SuccessfulCreate per pod created)
// are recorded, or until they are overdue (invariants.TerminalEventDue,
// reckoned again as the recording's gaps and the run's restarts change: a
// drill may take the apiserver away meanwhile), at most RestartGrace past the
// grace: controllers send events one at a time, on a loaded machine seconds
// late, and the invariants call a missing one a violation only once it is
// overdue. A controller that sends them costs no wait.
func awaitOwedEvents(ctx context.Context, rec *recorder.Recorder, ictx func() invariants.Context) {
	for {
		c, entries := ictx(), rec.Entries()
		var due time.Time
		for _, seen := range invariants.OwedEvents(c, entries) {
			limit := seen.Add(invariants.TerminalEventGrace + invariants.RestartGrace)
			d, ok := invariants.TerminalEventDue(c, seen)
			if !ok || d.After(limit) {
				d = limit // an open gap, or a restart that makes it unjudgeable: wait the most
			}
			if d.After(due) {
				due = d
			}
		}
		wait := time.Until(due)
		if wait <= 0 {
			return // the invariants judge what came
		}
		// Woken by the Job's next event (a new one, not one already judged).
		if _, err := rec.WaitFrom(ctx, len(entries), min(wait, 5*time.Second), "the events owed", func(e recorder.Entry) bool {
			ev, ok := e.Object.(*corev1.Event)
			return ok && ev.InvolvedObject.Kind == "Job" && ev.InvolvedObject.Name == JobName
		}); err != nil && ctx.Err() != nil {
			return
		}
	}
}

// awaitTail keeps recording after the run has settled while an invariant's
// verdict on its final state is pending (invariants.Pending: it would find
// more wrong if that state lasted its window), until the state changes and
// settles again, or the window has passed and the verdict is in: a wrong
// final status.active is judged, not cut off by the end of the recording.
// A correct controller's final state is no violation, and costs no wait.
// It returns the invariants that were pending and how long it waited.
func awaitTail(ctx context.Context, rec *recorder.Recorder, ictx func() invariants.Context) (pending []string, waited time.Duration) {
	start := time.Now()
	// A pending verdict needs at most Tail after the last change; a state
	// that keeps changing is judged as it stands after one more Tail.
	deadline := start.Add(2 * invariants.Tail)
	var among []string // after a quiet wait, only those pending before
	seen := -1
	for {
		entries := rec.Entries()
		if len(entries) != seen {
			among, seen = nil, len(entries) // something changed: ask every invariant again
		}
		now := invariants.Pending(ictx(), entries, among)
		if len(now) == 0 {
			return pending, time.Since(start)
		}
		for _, n := range now {
			if !slices.Contains(pending, n) {
				pending = append(pending, n)
			}
		}
		among = now
		if !time.Now().Before(deadline) {
			return pending, time.Since(start)
		}
		// Woken by the next change, or after a while to judge again.
		if _, err := rec.WaitFrom(ctx, len(entries), min(time.Until(deadline), 2*time.Second), "the run's final state judged", func(recorder.Entry) bool { return true }); err != nil && ctx.Err() != nil {
			return pending, time.Since(start)
		}
	}
}
