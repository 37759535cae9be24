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

func at(b *builder) *metav1.Time { return ptr.To(metav1.NewTime(b.now.Truncate(time.Second))) }

func suspendCond(b *builder, status corev1.ConditionStatus, reason string) batchv1.JobCondition {
	return batchv1.JobCondition{Type: batchv1.JobSuspended, Status: status, Reason: reason, LastTransitionTime: *at(b)}
}

// run → suspend (startTime cleared or kept) → resume (reset) — and the
// broken variants: kept across the resume, changed with no resume, cleared
// with no suspension.
func TestStartTime(t *testing.T) {
	ctx := Context{Job: "j"}
	life := func(clearOnSuspend, resetOnResume bool) *builder {
		b := newBuilder()
		b.status(func(s *batchv1.JobStatus) { s.StartTime = at(b); s.Active = 1 })
		first := b.job.Status.StartTime
		b.wait(5 * time.Second)
		b.status(func(s *batchv1.JobStatus) {
			s.Conditions = []batchv1.JobCondition{suspendCond(b, corev1.ConditionTrue, "JobSuspended")}
			if clearOnSuspend {
				s.StartTime = nil
			}
		})
		b.wait(5 * time.Second)
		b.status(func(s *batchv1.JobStatus) {
			s.Conditions = []batchv1.JobCondition{suspendCond(b, corev1.ConditionFalse, "JobResumed")}
			s.StartTime = first
			if resetOnResume {
				s.StartTime = at(b)
			}
		})
		return b
	}
	expectOK(t, StartTime, ctx, life(true, true))
	expectOK(t, StartTime, ctx, life(false, true)) // releases that keep it while suspended
	expectViolation(t, StartTime, ctx, life(false, false), "a resume resets it")
	expectViolation(t, StartTime, ctx, life(true, false), "a resume resets it")

	b := newBuilder()
	b.status(func(s *batchv1.JobStatus) { s.StartTime = at(b) })
	b.wait(3 * time.Second)
	changed := b.status(func(s *batchv1.JobStatus) { s.StartTime = at(b) })
	expectViolation(t, StartTime, ctx, changed, "without a resume")
	cleared := newBuilder()
	cleared.status(func(s *batchv1.JobStatus) { s.StartTime = at(cleared) }).status(func(s *batchv1.JobStatus) { s.StartTime = nil })
	expectViolation(t, StartTime, ctx, cleared, "without a suspension")
}

func TestCompletionTime(t *testing.T) {
	ctx := Context{Job: "j"}
	// finishWith: SuccessCriteriaMet (when succeededBefore > 0) that long
	// before Complete, and completionTime ct.
	finishWith := func(succeededBefore time.Duration, ct func(b *builder) *metav1.Time) *builder {
		b := newBuilder()
		b.status(func(s *batchv1.JobStatus) { s.StartTime = at(b) })
		b.wait(3 * time.Second)
		return b.status(func(s *batchv1.JobStatus) {
			c := cond(batchv1.JobComplete, batchv1.JobReasonCompletionsReached)
			c.LastTransitionTime = *at(b)
			s.Conditions = []batchv1.JobCondition{c}
			if succeededBefore > 0 {
				scm := cond(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonCompletionsReached)
				scm.LastTransitionTime = metav1.NewTime(b.now.Add(-succeededBefore).Truncate(time.Second))
				s.Conditions = []batchv1.JobCondition{scm, c}
			}
			s.CompletionTime = ct(b)
		})
	}
	finish := func(ct func(b *builder) *metav1.Time) *builder { return finishWith(time.Second, ct) }
	before := func(d time.Duration) func(b *builder) *metav1.Time {
		return func(b *builder) *metav1.Time { return ptr.To(metav1.NewTime(b.now.Add(-d).Truncate(time.Second))) }
	}
	expectOK(t, CompletionTime, ctx, finish(at))
	expectViolation(t, CompletionTime, ctx, finish(func(*builder) *metav1.Time { return nil }), "Complete without completionTime")
	// Before the Job succeeded: a controller stamping, say, its start time.
	expectViolation(t, CompletionTime, ctx, finish(before(2*time.Second)), "before the Job succeeded")
	// One second before: the sync that wrote Complete straddled a second boundary.
	expectOK(t, CompletionTime, ctx, finish(before(time.Second)))
	// Two seconds before, the Job having succeeded three seconds before
	// Complete: a slow enacting sync on a saturated machine (seen on v1.37.1).
	expectOK(t, CompletionTime, ctx, finishWith(3*time.Second, before(2*time.Second)))
	// Without SuccessCriteriaMet, a second before Complete at most.
	expectViolation(t, CompletionTime, ctx, finishWith(0, before(2*time.Second)), "before the Job succeeded")
	expectOK(t, CompletionTime, ctx, finishWith(0, before(time.Second)))
	expectViolation(t, CompletionTime, ctx, finish(func(b *builder) *metav1.Time {
		return ptr.To(metav1.NewTime(b.now.Add(time.Second).Truncate(time.Second)))
	}), "after Complete's lastTransitionTime")
	// Success reached while a pod still terminated (a SIGTERM trap): the
	// Job completes only after that pod finished; completionTime at the
	// success is the completion-time-at-target fault.
	trapped := newBuilder()
	trapped.status(func(s *batchv1.JobStatus) { s.StartTime = at(trapped) })
	trapped.wait(time.Second)
	scmAt := *at(trapped)
	trapped.wait(5 * time.Second)
	trapped.pod("p", func(p *corev1.Pod) {
		failed(p)
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 143, FinishedAt: *at(trapped)}}}}
	})
	trapped.wait(time.Second)
	trapped.status(func(s *batchv1.JobStatus) {
		scm := cond(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonSuccessPolicy)
		scm.LastTransitionTime = scmAt
		c := cond(batchv1.JobComplete, batchv1.JobReasonSuccessPolicy)
		c.LastTransitionTime = *at(trapped)
		s.Conditions = []batchv1.JobCondition{scm, c}
		s.CompletionTime = &scmAt
	})
	expectViolation(t, CompletionTime, ctx, trapped, "before its last pod finished")
	// A pod's end written again after it succeeded and the Job completed
	// (the node simulator playing a stage twice): its first end counts.
	rewritten := newBuilder()
	rewritten.status(func(s *batchv1.JobStatus) { s.StartTime = at(rewritten) })
	rewritten.wait(2 * time.Second)
	end := *at(rewritten)
	rewritten.pod("p", func(p *corev1.Pod) {
		succeeded(p)
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: end}}}}
	})
	rewritten.wait(time.Second)
	done := *at(rewritten)
	rewritten.wait(time.Second)
	rewritten.pod("p", func(p *corev1.Pod) { p.Status.ContainerStatuses[0].State.Terminated.FinishedAt = *at(rewritten) })
	rewritten.status(func(s *batchv1.JobStatus) {
		c := cond(batchv1.JobComplete, batchv1.JobReasonCompletionsReached)
		c.LastTransitionTime = done
		s.Conditions, s.CompletionTime = []batchv1.JobCondition{c}, &done
	})
	expectOK(t, CompletionTime, ctx, rewritten)
	// A second run of the container (a restart) ends anew: that end counts.
	restarted := newBuilder()
	restarted.status(func(s *batchv1.JobStatus) { s.StartTime = at(restarted) })
	restarted.wait(2 * time.Second)
	firstEnd := *at(restarted)
	restarted.pod("p", func(p *corev1.Pod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: firstEnd}}}}
	})
	restarted.wait(3 * time.Second)
	restarted.pod("p", func(p *corev1.Pod) {
		succeeded(p)
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "c", RestartCount: 1, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: *at(restarted)}}}}
	})
	restarted.status(func(s *batchv1.JobStatus) {
		c := cond(batchv1.JobComplete, batchv1.JobReasonCompletionsReached)
		c.LastTransitionTime = *at(restarted)
		s.Conditions = []batchv1.JobCondition{c}
		s.CompletionTime = ptr.To(metav1.NewTime(c.LastTransitionTime.Add(-time.Second)))
	})
	expectViolation(t, CompletionTime, ctx, restarted, "before its last pod finished")
	early := newBuilder()
	early.status(func(s *batchv1.JobStatus) { s.CompletionTime = at(early) })
	expectViolation(t, CompletionTime, ctx, early, "without Complete")
	moved := finish(at)
	moved.wait(2 * time.Second)
	moved.status(func(s *batchv1.JobStatus) {
		s.CompletionTime = at(moved)
		s.Conditions[1].LastTransitionTime = *at(moved)
	})
	expectViolation(t, CompletionTime, ctx, moved, "completionTime changed")
}

func (b *builder) event(name string, typ, reason string, count int32) *builder {
	b.add("Event", timeline.Added, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name}, Type: typ, Reason: reason, Count: count,
		InvolvedObject: corev1.ObjectReference{Kind: "Job", Name: "j"}, FirstTimestamp: *at(b)})
	return b
}

// later is an end of recording long after any builder's changes.
var later = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)

func TestTerminalEvent(t *testing.T) {
	ctx := Context{Job: "j", End: later}
	// A recording that stopped at the condition: the event may still come.
	expectOK(t, TerminalEvent, Context{Job: "j"}, newBuilder().status(func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded"), cond(batchv1.JobFailed, "BackoffLimitExceeded")}
	}))
	failedJob := func() *builder {
		b := newBuilder().event("e0", corev1.EventTypeNormal, "SuccessfulCreate", 1)
		return b.status(func(s *batchv1.JobStatus) {
			f := cond(batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded)
			f.LastTransitionTime = *at(b)
			s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded), f}
		})
	}
	expectOK(t, TerminalEvent, ctx, failedJob().event("e1", corev1.EventTypeWarning, batchv1.JobReasonBackoffLimitExceeded, 1))
	expectOK(t, TerminalEvent, ctx, newBuilder().event("e0", corev1.EventTypeNormal, "SuccessfulCreate", 1)) // not finished: nothing owed
	expectViolation(t, TerminalEvent, ctx, failedJob(), `no Warning event "BackoffLimitExceeded"`)
	expectViolation(t, TerminalEvent, ctx, failedJob().event("e1", corev1.EventTypeWarning, batchv1.JobReasonBackoffLimitExceeded, 2), "2 Warning events")
	expectViolation(t, TerminalEvent, ctx, failedJob().event("e1", corev1.EventTypeNormal, "Completed", 1), `no Warning event "BackoffLimitExceeded"`)

	early := newBuilder().event("e1", corev1.EventTypeNormal, "Completed", 1)
	early.wait(3 * time.Second)
	early.status(func(s *batchv1.JobStatus) {
		c := cond(batchv1.JobComplete, batchv1.JobReasonCompletionsReached)
		c.LastTransitionTime = *at(early)
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonCompletionsReached), c}
	})
	expectViolation(t, TerminalEvent, ctx, early, "before the Complete condition")

	// Past client-go's per-object event budget of the event's type a
	// missing event proves nothing.
	busy := failedJob()
	for i := 0; i < eventSpamBurst; i++ {
		busy.event("busy-"+string(rune('a'+i)), corev1.EventTypeWarning, "FailedCreate", 1)
	}
	expectOK(t, TerminalEvent, ctx, busy)
	// The budget counts emitted events: aggregated ones by their count.
	folded := failedJob().event("folded", corev1.EventTypeWarning, "FailedCreate", eventSpamBurst)
	expectOK(t, TerminalEvent, ctx, folded)
	// Normal events spend the Normal budget, not the Warning one.
	normal := failedJob().event("folded", corev1.EventTypeNormal, "SuccessfulCreate", eventSpamBurst)
	expectViolation(t, TerminalEvent, ctx, normal, `no Warning event "BackoffLimitExceeded"`)
}

func TestTerminalEventDue(t *testing.T) {
	seenAt := time.Date(2026, 11, 23, 12, 23, 56, 0, time.UTC)
	check := func(name string, ctx Context, want time.Time, wantOK bool) {
		t.Helper()
		due, ok := TerminalEventDue(ctx, seenAt)
		if ok != wantOK || !due.Equal(want) {
			t.Errorf("%s: due %s (%t), want %s (%t)", name, due, ok, want, wantOK)
		}
	}
	check("undisturbed", Context{}, seenAt.Add(TerminalEventGrace), true)
	check("a restart long before", Context{Restarts: []time.Time{seenAt.Add(-time.Minute)}}, seenAt.Add(TerminalEventGrace), true)
	check("a restart long after", Context{Restarts: []time.Time{seenAt.Add(time.Minute)}}, seenAt.Add(TerminalEventGrace), true)
	// The drill that found it: the apiserver went down right after the condition.
	check("a restart just after", Context{Restarts: []time.Time{seenAt.Add(100 * time.Millisecond)}}, time.Time{}, false)
	check("a restart just before", Context{Restarts: []time.Time{seenAt.Add(-time.Second)}}, time.Time{}, false)
	back := seenAt.Add(25 * time.Second)
	check("watch back after it", Context{Gaps: []timeline.Span{{From: seenAt, To: back}}}, back.Add(TerminalEventGrace), true)
	check("watch back long before", Context{Gaps: []timeline.Span{{From: seenAt.Add(-time.Minute), To: seenAt.Add(-30 * time.Second)}}}, seenAt.Add(TerminalEventGrace), true)
	check("watch still away", Context{Gaps: []timeline.Span{{From: seenAt}}}, time.Time{}, false)

	// The invariant uses it: a missing event is judged only once overdue.
	b := newBuilder().event("e0", corev1.EventTypeNormal, "SuccessfulCreate", 1)
	b.status(func(s *batchv1.JobStatus) {
		f := cond(batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded)
		f.LastTransitionTime = *at(b)
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded), f}
	})
	seen := b.tl[len(b.tl)-1].Time
	expectOK(t, TerminalEvent, Context{Job: "j", End: later, Restarts: []time.Time{seen.Add(time.Second)}}, b)
	gap := []timeline.Span{{From: seen.Add(time.Second), To: seen.Add(20 * time.Second)}}
	expectOK(t, TerminalEvent, Context{Job: "j", End: seen.Add(20*time.Second + TerminalEventGrace - time.Second), Gaps: gap}, b)
	expectViolation(t, TerminalEvent, Context{Job: "j", End: seen.Add(20*time.Second + TerminalEventGrace), Gaps: gap}, b, `no Warning event "BackoffLimitExceeded"`)
}

func TestFinalizerOwned(t *testing.T) {
	builtin := Context{Job: "j", Finalizer: batchv1.JobTrackingFinalizer}
	expectOK(t, FinalizerOwned, builtin, newBuilder().pod("a", running).pod("a", unfinalized))
	bare := newBuilder()
	bare.pod("a", unfinalized)
	expectViolation(t, FinalizerOwned, builtin, bare, "created without the tracking finalizer")

	external := Context{Job: "j", Finalizer: "example.com/tracking"}
	own := newBuilder()
	own.pod("a", func(p *corev1.Pod) { p.Finalizers = []string{"example.com/tracking"} })
	expectOK(t, FinalizerOwned, external, own)
	stolen := newBuilder()
	stolen.pod("a", func(p *corev1.Pod) { p.Finalizers = []string{"example.com/tracking", batchv1.JobTrackingFinalizer} })
	expectViolation(t, FinalizerOwned, external, stolen, "reserved finalizer")
	// Pods of other owners are not the controller's.
	other := newBuilder()
	other.pod("x", func(p *corev1.Pod) { p.Finalizers = nil; p.OwnerReferences[0].UID = types.UID("other") })
	expectOK(t, FinalizerOwned, builtin, other)
}

func TestDeadlineFromStart(t *testing.T) {
	ads := func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](6) }
	deadline := func(b *builder) {
		b.status(func(s *batchv1.JobStatus) {
			c := cond(batchv1.JobFailureTarget, batchv1.JobReasonDeadlineExceeded)
			c.LastTransitionTime = *at(b)
			s.Conditions = append(s.Conditions, c)
		})
	}
	// Started, suspended, resumed at +4s; the deadline at +10s is 6s after the resume.
	run := func(afterResume time.Duration, keepStart bool) *builder {
		b := newBuilder(ads)
		b.status(func(s *batchv1.JobStatus) { s.StartTime = at(b) })
		first := at(b)
		b.wait(time.Second)
		b.status(func(s *batchv1.JobStatus) {
			s.Conditions = []batchv1.JobCondition{suspendCond(b, corev1.ConditionTrue, "JobSuspended")}
		})
		b.wait(3 * time.Second)
		b.status(func(s *batchv1.JobStatus) {
			s.Conditions = []batchv1.JobCondition{suspendCond(b, corev1.ConditionFalse, "JobResumed")}
			s.StartTime = at(b)
			if keepStart {
				s.StartTime = first
			}
		})
		b.wait(afterResume)
		deadline(b)
		return b
	}
	expectOK(t, DeadlineFromStart, Context{}, run(6*time.Second, false))
	// Counted from the first start (or the creation): 2s after the resume.
	expectViolation(t, DeadlineFromStart, Context{}, run(2*time.Second, false), "before activeDeadlineSeconds=6 had passed")
	// A stale startTime does not excuse it: the resume is the start.
	expectViolation(t, DeadlineFromStart, Context{}, run(2*time.Second, true), "before activeDeadlineSeconds=6 had passed")
	// Never suspended: 6s after startTime is on time.
	plain := newBuilder(ads)
	plain.status(func(s *batchv1.JobStatus) { s.StartTime = at(plain) })
	plain.wait(6 * time.Second)
	deadline(plain)
	expectOK(t, DeadlineFromStart, Context{}, plain)
}

func TestSuspendEvents(t *testing.T) {
	ctx := Context{Job: "j", End: later}
	// Recording stopped right after the resume: its event may still come.
	expectOK(t, SuspendEvents, Context{Job: "j"}, func() *builder {
		b := newBuilder()
		b.status(func(s *batchv1.JobStatus) {
			s.Conditions = []batchv1.JobCondition{suspendCond(b, corev1.ConditionTrue, "JobSuspended")}
		})
		b.event("s", corev1.EventTypeNormal, "Suspended", 1)
		b.wait(5 * time.Second)
		return b.status(func(s *batchv1.JobStatus) {
			s.Conditions = []batchv1.JobCondition{suspendCond(b, corev1.ConditionFalse, "JobResumed")}
		})
	}())
	cycle := func() *builder {
		b := newBuilder()
		b.status(func(s *batchv1.JobStatus) {
			s.Conditions = []batchv1.JobCondition{suspendCond(b, corev1.ConditionTrue, "JobSuspended")}
		})
		b.wait(2 * time.Second)
		b.status(func(s *batchv1.JobStatus) {
			s.Conditions = []batchv1.JobCondition{suspendCond(b, corev1.ConditionFalse, "JobResumed")}
		})
		return b
	}
	expectOK(t, SuspendEvents, ctx, cycle().event("s", corev1.EventTypeNormal, "Suspended", 1).event("r", corev1.EventTypeNormal, "Resumed", 1))
	expectOK(t, SuspendEvents, ctx, newBuilder().status(func(s *batchv1.JobStatus) { s.Active = 1 })) // never suspended: nothing owed
	expectViolation(t, SuspendEvents, ctx, cycle().event("s", corev1.EventTypeNormal, "Suspended", 1), `0 Normal "Resumed" events for 1`)
	expectViolation(t, SuspendEvents, ctx, cycle().event("r", corev1.EventTypeNormal, "Resumed", 1), `0 Normal "Suspended" events for 1`)
	expectViolation(t, SuspendEvents, ctx, cycle().event("s", corev1.EventTypeNormal, "Suspended", 2).event("r", corev1.EventTypeNormal, "Resumed", 1), `2 Normal "Suspended" events for 1`)
	// A suspension announced at each retry of a refused status write (the
	// built-in of v1.37.1 records the event before the write: 5 for 1 in
	// explore-11-414): how many is not judged, said; none still fails.
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	refused := ctx
	refused.StatusRefused = []timeline.Span{{From: start.Add(-time.Second), To: start.Add(time.Second)}}
	expectOK(t, SuspendEvents, refused, cycle().event("s", corev1.EventTypeNormal, "Suspended", 5).event("r", corev1.EventTypeNormal, "Resumed", 1))
	expectViolation(t, SuspendEvents, refused, cycle().event("s", corev1.EventTypeNormal, "Suspended", 5), `0 Normal "Resumed" events for 1`)
	after := ctx
	after.StatusRefused = []timeline.Span{{From: start.Add(time.Minute)}}
	expectViolation(t, SuspendEvents, after, cycle().event("s", corev1.EventTypeNormal, "Suspended", 5).event("r", corev1.EventTypeNormal, "Resumed", 1), `5 Normal "Suspended" events for 1`)
	// An event is owed only once due: a recording that ended 13s after the
	// resume (a late sink, seen in a make run) proves nothing; one that ran on
	// past TerminalEventGrace does.
	late := cycle().event("s", corev1.EventTypeNormal, "Suspended", 1)
	resumedAt := late.now
	expectOK(t, SuspendEvents, Context{Job: "j", End: resumedAt.Add(13 * time.Second)}, late)
	expectViolation(t, SuspendEvents, Context{Job: "j", End: resumedAt.Add(TerminalEventGrace)}, late, `0 Normal "Resumed" events for 1`)
	// Created suspended, resumed later: one of each too.
	created := newBuilder(func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) })
	created.status(func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{suspendCond(created, corev1.ConditionTrue, "JobSuspended")}
	})
	created.event("s", corev1.EventTypeNormal, "Suspended", 1)
	expectOK(t, SuspendEvents, ctx, created)

	// Past client-go's spam budget (25 Normal events of the Job, counted with
	// the aggregator's folds), a missing event proves nothing; Warning
	// events have a budget of their own. Seen at 1,000 pods.
	busy := func(typ string) *builder {
		return cycle().event("c1", typ, "SuccessfulCreate", 9).event("c2", typ, "SuccessfulCreate", 16)
	}
	expectOK(t, SuspendEvents, ctx, busy(corev1.EventTypeNormal))
	expectViolation(t, SuspendEvents, ctx, busy(corev1.EventTypeWarning), `0 Normal "Suspended" events for 1`)
	expectViolation(t, SuspendEvents, ctx, cycle().event("c1", corev1.EventTypeNormal, "SuccessfulCreate", 24), `0 Normal "Suspended" events for 1`)

	// A drill's case: the apiserver replaced 11s after the resume, whose event
	// the controller had queued behind one it was retrying, and never wrote.
	b := cycle().event("s", corev1.EventTypeNormal, "Suspended", 1)
	resumed := b.now
	near := Context{Job: "j", End: later, Restarts: []time.Time{resumed.Add(11 * time.Second)}}
	expectOK(t, SuspendEvents, near, b)
	// A restart far from the resume excuses nothing.
	for _, r := range []time.Time{resumed.Add(-time.Minute), resumed.Add(TerminalEventGrace + time.Second)} {
		expectViolation(t, SuspendEvents, Context{Job: "j", End: later, Restarts: []time.Time{r}}, b, `0 Normal "Resumed" events for 1`)
	}
	// The recording's watch broke just after the resume and was back shortly
	// before the end: the event may come after the end.
	gap := Context{Job: "j", Gaps: []timeline.Span{{From: resumed.Add(time.Second), To: resumed.Add(30 * time.Second)}}}
	gap.End = resumed.Add(40 * time.Second)
	expectOK(t, SuspendEvents, gap, b)
	gap.End = resumed.Add(30*time.Second + TerminalEventGrace)
	expectViolation(t, SuspendEvents, gap, b, `0 Normal "Resumed" events for 1`)
}

// v1.34.3's case: the resume request (spec.suspend false) is answered with
// DeadlineExceeded at once, counted from the startTime kept while suspended.
func TestDeadlineFromStartAtResumeRequest(t *testing.T) {
	b := newBuilder(func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](6) })
	b.status(func(s *batchv1.JobStatus) { s.StartTime = at(b) })
	b.wait(time.Second)
	b.job.Spec.Suspend = ptr.To(true)
	b.status(func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{suspendCond(b, corev1.ConditionTrue, "JobSuspended")}
	})
	b.wait(5 * time.Second)
	b.job.Spec.Suspend = ptr.To(false)
	b.add("Job", timeline.Modified, b.job.DeepCopy())
	b.status(func(s *batchv1.JobStatus) {
		c := cond(batchv1.JobFailureTarget, batchv1.JobReasonDeadlineExceeded)
		c.LastTransitionTime = *at(b)
		s.Conditions = append(s.Conditions, c)
	})
	expectViolation(t, DeadlineFromStart, Context{}, b, "before activeDeadlineSeconds=6 had passed")
	// A release known to do this still fails, and the verdict names it.
	r := DeadlineFromStart.Evaluate(Context{Job: "j", Version: "v1.34.3", BuiltIn: true}, b.tl)
	if len(r.Violations) != 1 || !strings.Contains(r.Violations[0].Message, "known upstream bug of Kubernetes v1.34.3 (deadline-on-resume, releases <1.36.0)") {
		t.Fatalf("v1.34.3 must fail, naming the known behaviour: %+v", r)
	}
	// A release past the fix fails too (it broke the promise), but names no bug.
	r = DeadlineFromStart.Evaluate(Context{Job: "j", Version: "v1.36.3", BuiltIn: true}, b.tl)
	if len(r.Violations) != 1 || r.KnownBug != "" || strings.Contains(r.Violations[0].Message, "known upstream bug") {
		t.Fatalf("v1.36.3 must fail without naming the bug it does not have: %+v", r)
	}
}

// OwedEvents: what the runner waits for before judging — the latest change
// of each kind whose event is missing, nothing once every event came.
func TestOwedEvents(t *testing.T) {
	ctx := Context{Job: "j"}
	b := newBuilder()
	b.status(func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{suspendCond(b, corev1.ConditionTrue, "JobSuspended")}
	})
	suspended := b.now
	if got := OwedEvents(ctx, b.tl); len(got) != 1 || !got[0].Equal(suspended) {
		t.Errorf("suspended, no event: owed %v, want [%s]", got, suspended)
	}
	b.event("s", corev1.EventTypeNormal, "Suspended", 1)
	if got := OwedEvents(ctx, b.tl); len(got) != 0 {
		t.Errorf("suspended, event sent: owed %v, want none", got)
	}
	b.wait(2 * time.Second)
	b.status(func(s *batchv1.JobStatus) {
		c := cond(batchv1.JobComplete, "")
		c.LastTransitionTime = *at(b)
		s.Conditions = []batchv1.JobCondition{suspendCond(b, corev1.ConditionFalse, "JobResumed"), c}
	})
	finished := b.now
	if got := OwedEvents(ctx, b.tl); len(got) != 2 || !got[0].Equal(finished) || !got[1].Equal(finished) {
		t.Errorf("resumed and complete, no events: owed %v, want the finish twice (%s)", got, finished)
	}
	b.event("r", corev1.EventTypeNormal, "Resumed", 1).event("c", corev1.EventTypeNormal, "Completed", 1)
	if got := OwedEvents(ctx, b.tl); len(got) != 0 {
		t.Errorf("every event sent: owed %v, want none", got)
	}
	if got := OwedEvents(Context{Job: "j", ForeignManagedBy: true}, b.tl); got != nil {
		t.Errorf("a Job another controller manages: owed %v, want none", got)
	}
}

// A pod the controller created owes its SuccessfulCreate event (the
// oracle counts them); an orphan the scenario brought owes none, nor does a
// creation a restart may have lost the event of.
func TestOwedCreateEvents(t *testing.T) {
	ctx := Context{Job: "j"}
	b := newBuilder().pod("a", nil).event("ca", corev1.EventTypeNormal, "SuccessfulCreate", 1)
	b.wait(10 * time.Second)
	b.pod("b", nil)
	created := b.now
	if got := OwedEvents(ctx, b.tl); len(got) != 1 || !got[0].Equal(created) {
		t.Errorf("two pods, one event: owed %v, want [%s]", got, created)
	}
	if got := OwedEvents(Context{Job: "j", Restarts: []time.Time{created.Add(time.Second)}}, b.tl); len(got) != 0 {
		t.Errorf("a restart after the creation: owed %v, want none", got)
	}
	b.event("cb", corev1.EventTypeNormal, "SuccessfulCreate", 1)
	b.pod("brought", func(p *corev1.Pod) { p.Annotations = map[string]string{BroughtAnnotation: "x"} })
	if got := OwedEvents(ctx, b.tl); len(got) != 0 {
		t.Errorf("every creation announced, an orphan brought: owed %v, want none", got)
	}
}

func TestDeadlineOnTime(t *testing.T) {
	ads := func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](2) }
	started := func() *builder {
		b := newBuilder(ads)
		b.status(func(s *batchv1.JobStatus) { s.StartTime = at(b) })
		return b
	}
	deadline := func(b *builder) *builder {
		return b.status(func(s *batchv1.JobStatus) {
			c := cond(batchv1.JobFailureTarget, batchv1.JobReasonDeadlineExceeded)
			c.LastTransitionTime = *at(b)
			s.Conditions = append(s.Conditions, c)
		})
	}
	// On time: the condition a second after the deadline.
	b := started()
	b.wait(3 * time.Second)
	expectOK(t, DeadlineOnTime, Context{}, deadline(b))
	// Late by its own act: a status written 8s after the deadline without it.
	b = started()
	b.wait(10 * time.Second)
	b.status(func(s *batchv1.JobStatus) { s.Ready = ptr.To[int32](1) })
	expectViolation(t, DeadlineOnTime, Context{}, deadline(b), "wrote the Job's status 8")
	// The same on a starved machine proves nothing by cause; the condition
	// within the clock's bound passes, and the verdict says what was not used.
	starved := Context{Job: "j", Starved: func(time.Time, time.Time) string { return "apiserver answered a GET in 1.5s" }}
	if r := DeadlineOnTime.Evaluate(starved, b.tl); len(r.Violations) != 0 || len(r.Unjudged) != 1 {
		t.Errorf("a late write on a starved machine: %+v", r)
	}
	// Or a pod created then.
	b = started()
	b.wait(10 * time.Second)
	expectViolation(t, DeadlineOnTime, Context{}, b.pod("late", nil), "created pod late")
	// Late by the clock: nothing done for 30s, then the condition.
	b = started()
	b.wait(30 * time.Second)
	expectViolation(t, DeadlineOnTime, Context{}, deadline(b), "DeadlineExceeded at")
	expectViolation(t, DeadlineOnTime, starved, b, "DeadlineExceeded at")
	// Never, the recording going on past the bound.
	b = started()
	expectViolation(t, DeadlineOnTime, Context{End: b.now.Add(time.Minute)}, b, "no DeadlineExceeded by the end of the recording")
	// A restart between the deadline and the act: no verdict.
	b = started()
	b.wait(30 * time.Second)
	expectOK(t, DeadlineOnTime, Context{Restarts: []time.Time{b.now.Add(-10 * time.Second)}}, deadline(b))
	// Deleted before its deadline's turn: it owes none.
	b = started()
	b.job.DeletionTimestamp = at(b)
	b.add("Job", timeline.Modified, b.job.DeepCopy())
	expectOK(t, DeadlineOnTime, Context{End: b.now.Add(time.Minute)}, b)
	// Suspended: the deadline does not tick.
	b = started()
	b.job.Spec.Suspend = ptr.To(true)
	b.add("Job", timeline.Modified, b.job.DeepCopy())
	b.wait(time.Minute)
	expectOK(t, DeadlineOnTime, Context{End: b.now}, b)
}
