package invariants

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
)

var mirrorT0 = time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)

// statuses makes a Job timeline: each status at its offset from mirrorT0.
func statuses(at ...any) timeline.Timeline {
	var t timeline.Timeline
	for i := 0; i < len(at); i += 2 {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "job"}, Status: at[i+1].(batchv1.JobStatus)}
		t = append(t, timeline.Entry{Seq: len(t), Time: mirrorT0.Add(at[i].(time.Duration)), Type: timeline.Modified, Kind: "Job", Name: "job", Object: j})
	}
	return t
}

func TestCheckMirror(t *testing.T) {
	running := batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](1)}
	terminating := batchv1.JobStatus{Terminating: ptr.To[int32](1), Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "PodFailurePolicy"}}}
	failed := batchv1.JobStatus{Failed: 1, Terminating: ptr.To[int32](0), Conditions: []batchv1.JobCondition{
		{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "PodFailurePolicy"},
		{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "PodFailurePolicy"}}}
	s := time.Second
	worker := statuses(1*s, running, 5*s, terminating, 9*s, failed)
	end := mirrorT0.Add(30 * s)

	ok := CheckMirror(statuses(0*s, batchv1.JobStatus{}, 2*s, running, 6*s, terminating, 11*s, failed), worker, "job", 5*s, end)
	if len(ok.Violations) > 0 || len(ok.Lags) != 3 || ok.Lags[0] != s || ok.Lags[2] != 2*s {
		t.Fatalf("a faithful copy: %+v", ok)
	}
	// Copying only the newest status is fine: the skipped one counts as
	// shown when the later one is.
	skip := CheckMirror(statuses(2*s, running, 10*s, failed), worker, "job", 6*s, end)
	if len(skip.Violations) > 0 || skip.Lags[1] != 5*s {
		t.Fatalf("a coalescing copy: %+v", skip)
	}
	expect := func(r MirrorResult, want string) {
		t.Helper()
		for _, v := range r.Violations {
			if strings.Contains(v.String(), want) {
				return
			}
		}
		t.Errorf("no violation mentions %q: %v", want, r.Violations)
	}
	// A dispatcher that never copies terminating.
	noTerminating := terminating
	noTerminating.Terminating = nil
	expect(CheckMirror(statuses(2*s, running, 6*s, noTerminating, 11*s, failed), worker, "job", 5*s, end), "mirror-faithful")
	// Too late, or never.
	expect(CheckMirror(statuses(2*s, running, 20*s, failed), worker, "job", 5*s, end), "took 11s to reach")
	expect(CheckMirror(statuses(2*s, running, 6*s, terminating), worker, "job", 5*s, end), "never reached the manager's Job")
	// Back to an older status.
	expect(CheckMirror(statuses(2*s, running, 6*s, terminating, 7*s, running, 11*s, failed), worker, "job", 5*s, end), "mirror-order")
	// Counters ahead of the copy's.
	expect(CheckMirror(statuses(2*s, running, 3*s, failed), worker, "job", 5*s, end), "mirror-counters")

	// The copy goes back to the status the manager's Job shows before the
	// dispatcher copied the one between: shown when the copy reached it
	// (copying it changes nothing), the one between skipped.
	notReady := batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](0)}
	back := CheckMirror(statuses(2*s, running), statuses(1*s, running, 5*s, notReady, 6*s, running), "job", 3*s, end)
	if len(back.Violations) > 0 || len(back.Lags) != 3 || back.Lags[1] != s || back.Lags[2] != 0 {
		t.Errorf("a copy back to the shown status: %+v", back)
	}
	// The manager shows the second of two equal statuses of the copy: the
	// one between is skipped, not owed (the timeline of an
	// adopt-orphan-release-nonmatching run, lag 25.7s before).
	second := CheckMirror(statuses(5*s, running, 8*s, failed), statuses(1*s, running, 3*s, notReady, 4*s, running, 7*s, failed), "job", 4500*time.Millisecond, end)
	if len(second.Violations) > 0 || len(second.Lags) != 4 || second.Lags[1] != 2*s {
		t.Errorf("the second of two equal statuses: %+v", second)
	}
	// The manager's empty status from before anything was copied shows
	// nothing, even when the copy passes through an empty status (between
	// terminating and failed): a dispatcher 15s late is still late.
	gone := batchv1.JobStatus{}
	late := CheckMirror(statuses(0*s, batchv1.JobStatus{}, 16*s, failed), statuses(1*s, running, 5*s, terminating, 8*s, gone, 9*s, failed), "job", 10*s, end)
	expect(late, "took 15s to reach")
	// The copy's first status, empty, is shown by the manager's empty Job:
	// a copy that stays empty for 12s before its first counts (pods being
	// created) owes nothing for it; the counts, copied 3.7s later, are on
	// time.
	slowStart := CheckMirror(statuses(0*s, batchv1.JobStatus{}, 15700*time.Millisecond, running), statuses(0*s, batchv1.JobStatus{}, 12*s, running), "job", 10*s, end)
	if len(slowStart.Violations) > 0 || len(slowStart.Lags) != 2 || slowStart.Lags[0] != 0 || slowStart.Lags[1] != 3700*time.Millisecond {
		t.Errorf("a copy empty for 12s: %+v", slowStart)
	}
	// A copy back to an empty-looking status (its one pod failed) that the
	// dispatcher's first write copies: shown then, with the two before it
	// (rehearsal 14's pod-failure-policy-ignore-exit-code, read as 15.9s).
	zeros := batchv1.JobStatus{Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0)}
	first := CheckMirror(statuses(0*s, batchv1.JobStatus{}, 14500*time.Millisecond, zeros, 17*s, running),
		statuses(10*s, batchv1.JobStatus{}, 11*s, running, 13*s, notReady, 14*s, zeros, 16*s, running), "job", 10*s, end)
	if len(first.Violations) > 0 || len(first.Lags) != 5 || first.Lags[1] != 3500*time.Millisecond || first.Lags[3] != 500*time.Millisecond {
		t.Errorf("a first copy of an empty-looking status: %+v", first)
	}
	// But a copy that stays on a status the manager's Job never shows is
	// still owed it.
	expect(CheckMirror(statuses(2*s, running), statuses(1*s, running, 5*s, notReady), "job", 3*s, end), "never reached the manager's Job")

	// Deleting the manager's Job ends what it is owed: the copy's statuses
	// while it goes (after the deletion, or within the bound before it) are
	// not, an older one left unshown still is.
	deleted := func(mgr timeline.Timeline, at time.Duration) timeline.Timeline {
		last := mgr[len(mgr)-1]
		last.Seq, last.Time, last.Type = len(mgr), mirrorT0.Add(at), timeline.Deleted
		return append(mgr, last)
	}
	if r := CheckMirror(deleted(statuses(2*s, running, 6*s, terminating), 7*s), worker, "job", 5*s, end); len(r.Violations) > 0 {
		t.Errorf("the copy's status after the manager's Job was deleted was owed: %v", r.Violations)
	}
	if r := CheckMirror(deleted(statuses(2*s, running), 7*s), worker, "job", 5*s, end); len(r.Violations) > 0 {
		t.Errorf("a status 2s before the deletion (bound 5s) was owed: %v", r.Violations)
	}
	expect(CheckMirror(deleted(statuses(2*s, running), 20*s), worker, "job", 5*s, end), "never reached the manager's Job (15s to the end)")
	// Nor does a deleted Job show the copy's later status equal to its
	// last (seen: a lag of 60s measured after delete-orphan).
	again := CheckMirror(deleted(statuses(2*s, running), 3*s), statuses(1*s, running, 5*s, notReady, 9*s, running), "job", 5*s, end)
	if len(again.Violations) > 0 || len(again.Lags) != 1 {
		t.Errorf("after the deletion: %+v", again)
	}
}

// MirrorPending: the manager's Job owes a write while it does not show its
// copy's last status; not once it does, nor when either is being deleted.
func TestMirrorPending(t *testing.T) {
	s := time.Second
	running := batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](1)}
	done := batchv1.JobStatus{Terminating: ptr.To[int32](0), Succeeded: 1}
	named := func(tl timeline.Timeline, name string) timeline.Timeline {
		for i := range tl {
			tl[i].Name = name
		}
		return tl
	}
	ctx := Context{Job: "job", Copy: "job@worker"}
	tl := append(named(statuses(1*s, running), "job"), named(statuses(2*s, running, 3*s, done), "job@worker")...)
	if !MirrorPending(ctx, tl) {
		t.Errorf("the copy done, the manager running: want pending")
	}
	mirrored := append(tl, named(statuses(5*s, done), "job")...)
	if MirrorPending(ctx, mirrored) {
		t.Errorf("the manager shows the copy's last status: want none pending")
	}
	if MirrorPending(Context{Job: "job"}, tl) {
		t.Errorf("not dispatched: want none pending")
	}
	gone := append(tl, timeline.Entry{Seq: len(tl), Time: mirrorT0.Add(6 * s), Type: timeline.Deleted, Kind: "Job", Name: "job@worker", Object: tl[len(tl)-1].Object})
	if MirrorPending(ctx, gone) {
		t.Errorf("the copy deleted: want none pending")
	}
}

func TestMirrorOnce(t *testing.T) {
	s := time.Second
	done := batchv1.JobStatus{Succeeded: 1, Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}
	copies := func(uids ...string) timeline.Timeline {
		var t timeline.Timeline
		for i, uid := range uids {
			j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "job", UID: types.UID(uid)}, Status: done}
			t = append(t, timeline.Entry{Seq: i, Time: mirrorT0.Add(time.Duration(2*i+1) * s), Type: timeline.Added, Kind: "Job", Name: "job", Object: j})
		}
		return t
	}
	manager := statuses(2*s, done)
	if r := CheckMirror(manager, copies("a", "a"), "job", 5*s, mirrorT0.Add(30*s)); len(r.Violations) > 0 {
		t.Errorf("one copy: %v", r.Violations)
	}
	r := CheckMirror(manager, copies("a", "b"), "job", 5*s, mirrorT0.Add(30*s))
	if len(r.Violations) != 1 || !strings.Contains(r.Violations[0].String(), "mirror-once") || !strings.Contains(r.Violations[0].String(), "runs again") {
		t.Errorf("a copy made again after the Job finished: %v", r.Violations)
	}
}
