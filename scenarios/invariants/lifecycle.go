// A Job's clock fields, and the events that mark its end.

package invariants

import (
	"fmt"
	"slices"
	"sort"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/internal/timeline"
	"github.com/jobconform/jobconform/scenarios/bugs"
)

// clockSlack covers the API's one-second timestamp resolution.
const clockSlack = time.Second

// resumedIn tells whether the Job's status in e turned Suspended=False
// (JobResumed) in this write: its transition differs from prev's.
func resumedIn(prev, cur *batchv1.Job) *batchv1.JobCondition {
	c := kube.JobCondition(cur.Status, batchv1.JobSuspended)
	if c == nil || c.Status != corev1.ConditionFalse {
		return nil
	}
	if p := kube.JobCondition(prev.Status, batchv1.JobSuspended); p != nil && p.Status == c.Status && p.LastTransitionTime.Equal(&c.LastTransitionTime) {
		return nil
	}
	return c
}

func timeOf(t *metav1.Time) string {
	if t == nil {
		return "unset"
	}
	return t.UTC().Format(time.RFC3339)
}

// StartTime: status.startTime is set once the Job runs and then changes only
// with a suspension: a resume resets it to the resume moment (pkg/controller/job
// syncJob, read in v1.34.3 and v1.37.1: "Resumed jobs will always reset
// StartTime to current time"), and a suspension may clear it (from the
// release whose MutableSchedulingDirectivesForSuspendedJobs gate is on; not
// required). A controller that keeps a stale startTime across a resume counts
// activeDeadlineSeconds from the wrong moment.
var StartTime = Invariant{
	Name:        "start-time",
	Description: "startTime is set once, reset to the resume moment on resume, cleared only by a suspension, untouched otherwise",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		var prev *batchv1.Job
		for _, e := range jobEntries(ctx, t) {
			cur := e.Job()
			if prev == nil {
				prev = cur
				continue
			}
			was, now := prev.Status.StartTime, cur.Status.StartTime
			resumed := resumedIn(prev, cur)
			switch {
			case resumed != nil && (now == nil || now.Time.Before(resumed.LastTransitionTime.Add(-clockSlack))):
				out = append(out, violation("start-time", e, "resumed at %s but startTime is %s: a resume resets it", timeOf(&resumed.LastTransitionTime), timeOf(now)))
			case was != nil && now == nil && hasCond(cur.Status, batchv1.JobSuspended) == nil:
				out = append(out, violation("start-time", e, "startTime cleared (was %s) without a suspension", timeOf(was)))
			case was != nil && now != nil && !was.Equal(now) && resumed == nil:
				out = append(out, violation("start-time", e, "startTime changed from %s to %s without a resume", timeOf(was), timeOf(now)))
			}
			prev = cur
		}
		return out
	},
}

// CompletionTime: completionTime comes with Complete, lies between the
// moment success was reached (SuccessCriteriaMet's lastTransitionTime) and
// Complete's lastTransitionTime, is not before startTime, and never changes
// once set, and is not before its last pod finished (a controller that
// stamps success's moment while pods still terminate). Upstream's enactJobFinished (v1.34.3, v1.37.1 job_controller.go)
// takes completionTime from the finished condition made when the enacting
// sync began and stamps Complete with a second clock reading when it writes,
// after removing the pods' finalizers: the two differ by that work's duration
// (a second on kubelet nodes, 19Z and 20Z; two on a saturated machine, 13Z and
// 15Z), so no fixed slack holds. Without SuccessCriteriaMet (a controller that
// skips it breaks terminal-after-target) the lower bound is a second before
// Complete.
const completionSlack = time.Second

// successReached is the earliest completionTime may be: SuccessCriteriaMet's
// lastTransitionTime, else a second before Complete's.
func successReached(s batchv1.JobStatus, complete *batchv1.JobCondition) time.Time {
	if c := hasCond(s, batchv1.JobSuccessCriteriaMet); c != nil {
		return c.LastTransitionTime.Time
	}
	return complete.LastTransitionTime.Add(-completionSlack)
}

// podFinishes returns the latest finishedAt of the Job's pods' containers
// recorded up to a moment: the Job completes only once no pod runs or
// terminates, and the controller reads its clock after it saw that (both in
// whole seconds). The timeline is read once; each question is a search.
// A container's end is taken as first recorded (FirstFinishes): a later
// rewrite of it is the node's, not the controller's, doing.
func podFinishes(ctx Context, t timeline.Timeline) func(upTo time.Time) time.Time {
	var at, latest []time.Time // entry times and the running maximum of finishedAt, in timeline order
	var last time.Time
	ends := FirstFinishes()
	for _, e := range t {
		p, ok := e.Object.(*corev1.Pod)
		if !ok {
			continue
		}
		if !controlledByJobNamed(p, ctx.Job) {
			continue
		}
		for _, end := range ends(p) {
			if end.After(last) {
				last = end
			}
		}
		at, latest = append(at, e.Time), append(latest, last)
	}
	return func(upTo time.Time) time.Time {
		n := sort.Search(len(at), func(i int) bool { return at[i].After(upTo) })
		if n == 0 {
			return time.Time{}
		}
		return latest[n-1]
	}
}

// ContainerRun names one run of a pod's container: a kubelet writes its
// end once; a restart is a new run.
func ContainerRun(p *corev1.Pod, cs corev1.ContainerStatus) string {
	return fmt.Sprintf("%s/%s/%d", p.UID, cs.Name, cs.RestartCount)
}

// FirstFinishes returns a reader of pods' main containers' ends, called on
// a pod's recorded versions in order: the finishedAt of each container's
// run (pod, container, restartCount) as first recorded, whatever a later
// version of the same run says. A kubelet writes a run's end once. On a
// loaded CI runner the built-in completed a 150-pod Job a second before a
// pod's recorded end, which it cannot do unless that end was written again
// after the pod had succeeded (kwok plays stages on several workers, and
// may play one twice); no verdict on the controller may rest on that.
func FirstFinishes() func(p *corev1.Pod) []time.Time {
	first := map[string]time.Time{}
	return func(p *corev1.Pod) []time.Time {
		var out []time.Time
		for _, cs := range p.Status.ContainerStatuses {
			term := cs.State.Terminated
			if term == nil || term.FinishedAt.IsZero() {
				continue
			}
			key := ContainerRun(p, cs)
			end, seen := first[key]
			if !seen {
				end = term.FinishedAt.Time
				first[key] = end
			}
			out = append(out, end)
		}
		return out
	}
}

var CompletionTime = Invariant{
	Name:        "completion-time",
	Description: "completionTime is set with Complete, lies between SuccessCriteriaMet's and Complete's lastTransitionTime, is not before startTime and never changes",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		var first *metav1.Time
		lastPodFinish := podFinishes(ctx, t)
		for _, e := range jobEntries(ctx, t) {
			s := e.Job().Status
			ct, complete := s.CompletionTime, hasCond(s, batchv1.JobComplete)
			var succeeded, podsDone time.Time
			if complete != nil {
				succeeded, podsDone = successReached(s, complete), lastPodFinish(e.Time)
			}
			switch {
			case complete != nil && ct == nil:
				out = append(out, violation("completion-time", e, "Complete without completionTime"))
			case complete == nil && ct != nil:
				out = append(out, violation("completion-time", e, "completionTime %s without Complete", timeOf(ct)))
			case complete != nil && ct.Time.After(complete.LastTransitionTime.Time):
				out = append(out, violation("completion-time", e, "completionTime %s after Complete's lastTransitionTime %s", timeOf(ct), timeOf(&complete.LastTransitionTime)))
			case complete != nil && ct.Time.Before(succeeded):
				out = append(out, violation("completion-time", e, "completionTime %s before the Job succeeded (%s)", timeOf(ct), succeeded.UTC().Format(time.RFC3339)))
			case complete != nil && ct.Time.Before(podsDone):
				out = append(out, violation("completion-time", e, "completionTime %s before its last pod finished (%s)", timeOf(ct), podsDone.UTC().Format(time.RFC3339)))
			case ct != nil && s.StartTime != nil && ct.Time.Before(s.StartTime.Time):
				out = append(out, violation("completion-time", e, "completionTime %s before startTime %s", timeOf(ct), timeOf(s.StartTime)))
			}
			if ct != nil && first == nil {
				first = ct
			} else if ct != nil && !ct.Equal(first) {
				out = append(out, violation("completion-time", e, "completionTime changed from %s to %s", timeOf(first), timeOf(ct)))
			}
		}
		return out
	},
}

// DeadlineFromStart: a Job fails with DeadlineExceeded only once
// activeDeadlineSeconds have passed since it started — since its latest
// resume when it was suspended: "if a Job is suspended, this timer will
// effectively be stopped and reset when the Job is resumed again" (batch/v1
// JobSpec). The start is taken from what the recording saw (the first
// startTime; the latest resume, requested by spec.suspend turning false or
// shown by a JobResumed transition), not from the status being judged, so a
// stale startTime cannot excuse itself.
var DeadlineFromStart = Invariant{
	Name:        "deadline-from-start",
	Description: "DeadlineExceeded comes no earlier than activeDeadlineSeconds after the Job's start (its latest resume)",
	KnownBugs:   []string{bugs.DeadlineOnResume.ID},
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var start *metav1.Time
		var prev *batchv1.Job
		for _, e := range jobEntries(ctx, t) {
			cur := e.Job()
			if start == nil && cur.Status.StartTime != nil {
				start = cur.Status.StartTime
			}
			if prev != nil {
				if r := resumedIn(prev, cur); r != nil && (start == nil || r.LastTransitionTime.After(start.Time)) {
					start = &r.LastTransitionTime
				}
				if ptr.Deref(prev.Spec.Suspend, false) && !ptr.Deref(cur.Spec.Suspend, false) {
					start = &metav1.Time{Time: e.Time} // the resume request
				}
			}
			ads := cur.Spec.ActiveDeadlineSeconds
			c := hasCond(cur.Status, batchv1.JobFailureTarget)
			if c == nil {
				c = hasCond(cur.Status, batchv1.JobFailed)
			}
			if c != nil && c.Reason == batchv1.JobReasonDeadlineExceeded && ads != nil && start != nil {
				due := start.Add(time.Duration(*ads) * time.Second)
				if c.LastTransitionTime.Time.Before(due.Add(-clockSlack)) {
					return []Violation{violation("deadline-from-start", e, "%s/DeadlineExceeded at %s, before activeDeadlineSeconds=%d had passed since the start %s (due %s)",
						c.Type, timeOf(&c.LastTransitionTime), *ads, timeOf(start), due.UTC().Format(time.RFC3339))}
				}
				return nil
			}
			prev = cur
		}
		return nil
	},
}

// DeadlineActGrace is how long after a Job's deadline a sync that began
// before it may still write a status without DeadlineExceeded (a sync's
// read and its write are apart; seconds on a saturated machine).
const DeadlineActGrace = 5 * time.Second

// DeadlineLateBound is how late DeadlineExceeded may come when nothing in
// the recording shows the controller acting on the Job after the deadline:
// the second line, by the clock, behind the proof by the controller's own
// acts. The built-in requeues a Job for its deadline (AddAfter) and writes
// the condition within a second of it on an idle machine.
const DeadlineLateBound = 20 * time.Second

// DeadlineOnTime: once activeDeadlineSeconds has passed since the Job's
// start (its latest resume), the controller's next act on the Job ends it
// as DeadlineExceeded. A status it writes, or a pod it creates, more than
// DeadlineActGrace after the due time without FailureTarget (or Failed)
// DeadlineExceeded shows it late by its own acts, unless the machine was
// starved meanwhile (causeVoid); failing that, a DeadlineExceeded more than
// DeadlineLateBound after the due time (or none by then, the recording
// going on) is late by the clock. Not judged across a restart or a break
// in the recording.
var DeadlineOnTime = Invariant{
	Name:        "deadline-on-time",
	Late:        true,
	Description: "once activeDeadlineSeconds has passed since the start (or resume), the controller's next act on the Job is DeadlineExceeded; by the clock, within 20s",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		var resumed time.Time
		done := false
		late := func(e timeline.Entry, due time.Time, format string, args ...any) {
			if !disturbedBetween(ctx, due, e.Time) {
				out = append(out, violation("deadline-on-time", e, format, args...))
			}
			done = true
		}
		var due time.Time
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			j := after.job
			if done {
				return
			}
			if j == nil || j.DeletionTimestamp != nil {
				done = before.job != nil // deleted: it owes no deadline any more
				return
			}
			if e.Kind == "Job" && before.job != nil && ptr.Deref(before.job.Spec.Suspend, false) && !ptr.Deref(j.Spec.Suspend, false) {
				resumed = e.Time
			}
			if j.Spec.ActiveDeadlineSeconds == nil || j.Status.StartTime == nil || ptr.Deref(j.Spec.Suspend, false) {
				due = time.Time{}
				return
			}
			start := j.Status.StartTime.Time
			if resumed.After(start) {
				start = resumed
			}
			due = start.Add(time.Duration(*j.Spec.ActiveDeadlineSeconds) * time.Second)
			c := hasCond(j.Status, batchv1.JobFailureTarget)
			if c == nil {
				c = hasCond(j.Status, batchv1.JobFailed)
			}
			switch {
			case c != nil && c.Reason == batchv1.JobReasonDeadlineExceeded:
				if c.LastTransitionTime.Time.After(due.Add(DeadlineLateBound)) {
					late(e, due, "%s/DeadlineExceeded at %s, %s after activeDeadlineSeconds=%d had passed (due %s; at most %s)", c.Type, timeOf(&c.LastTransitionTime),
						c.LastTransitionTime.Sub(due).Round(time.Second), *j.Spec.ActiveDeadlineSeconds, due.UTC().Format(time.RFC3339), DeadlineLateBound)
				}
				done = true
				return
			case c != nil || finished(j.Status) != nil || hasCond(j.Status, batchv1.JobSuccessCriteriaMet) != nil:
				done = true // ended otherwise, before its deadline's turn
				return
			case !e.Time.After(due.Add(DeadlineActGrace)):
				return
			case !e.Time.After(due.Add(DeadlineLateBound)) && syncAct(e, before, after) != "" && causeVoid(ctx, due, e.Time):
				return // no proof by its acts on a starved machine: the clock line judges
			case e.Kind == "Job" && before.job != nil && !apiequality.Semantic.DeepEqual(before.job.Status, j.Status):
				late(e, due, "the controller wrote the Job's status %s after its deadline was due (%s, activeDeadlineSeconds=%d) without DeadlineExceeded",
					e.Time.Sub(due).Round(100*time.Millisecond), due.UTC().Format(time.RFC3339), *j.Spec.ActiveDeadlineSeconds)
			case e.Kind == "Pod" && e.Type == timeline.Added && createdBy(e, j):
				late(e, due, "the controller created pod %s %s after the Job's deadline was due (%s, activeDeadlineSeconds=%d) instead of ending it",
					e.Name, e.Time.Sub(due).Round(100*time.Millisecond), due.UTC().Format(time.RFC3339), *j.Spec.ActiveDeadlineSeconds)
			case e.Time.After(due.Add(DeadlineLateBound)):
				late(e, due, "no DeadlineExceeded %s after activeDeadlineSeconds=%d had passed (due %s)", e.Time.Sub(due).Round(time.Second), *j.Spec.ActiveDeadlineSeconds, due.UTC().Format(time.RFC3339))
			}
		})
		if end := recordingEnd(ctx, t); !done && !due.IsZero() && end.After(due.Add(DeadlineLateBound)) && len(t) > 0 {
			last := t[len(t)-1]
			last.Time = end
			late(last, due, "no DeadlineExceeded by the end of the recording, %s after activeDeadlineSeconds had passed (due %s)", end.Sub(due).Round(time.Second), due.UTC().Format(time.RFC3339))
		}
		return out
	},
}

// createdBy tells whether e adds a pod controlled by Job j.
func createdBy(e timeline.Entry, j *batchv1.Job) bool { return ownedBy(e.Pod(), j) }

// TerminalEventGrace is how long a controller's event may take after the
// change it announces — the terminal event, a Suspended or Resumed event: the
// runner waits that long for one still owed (OwedEvents). Seen on a saturated
// machine: kube-controller-manager recording Completed and DeadlineExceeded
// more than 3s after the condition; the reference controller's events 13s
// late in a make run's conformance suite, its event sink behind an apiserver
// held to one core. A correct controller costs no wait, a silent one this.
const TerminalEventGrace = 30 * time.Second

// TerminalEventDue is when the terminal event of a Job whose terminal
// condition was seen at cond must be in the recording, and whether its
// absence would prove anything. TerminalEventGrace after the condition; or,
// when the recording's watch broke around or after it (an apiserver away),
// TerminalEventGrace after the watch was back: client-go's event sink retries
// every 10s while the apiserver is away, and the recording cannot see what is
// written before it reconnects. A restart of the controller or the apiserver
// from just before the condition to its grace proves nothing either way: the
// event may have been lost with the controller's memory, or still be in its
// retry queue (seen in a drill: conditions written just before the apiserver
// went down for 25s, their events sent 26s later). Not before an open gap
// closes (ok is false then too).
func TerminalEventDue(ctx Context, cond time.Time) (due time.Time, ok bool) {
	due = cond.Add(TerminalEventGrace)
	for _, r := range ctx.Restarts {
		if r.After(cond.Add(-SettleWindow)) && !r.After(due) {
			return time.Time{}, false
		}
	}
	for _, g := range ctx.Gaps {
		switch {
		case g.To.IsZero():
			return time.Time{}, false
		case g.To.After(cond.Add(-SettleWindow)) && g.To.Add(TerminalEventGrace).After(due):
			due = g.To.Add(TerminalEventGrace)
		}
	}
	return due, true
}

// eventSpamBurst is client-go's per-object event budget (EventSourceObjectSpamFilter):
// past it a recorder may drop events, so a missing one proves nothing. The
// budget is per event type since kubernetes#124747 (merged May 2024, so
// v1.31 on; read in client-go v0.36.3 and v0.37.1: getSpamKey).
const eventSpamBurst = 25

// TerminalEvent: the controller records one event when the Job finishes —
// Normal "Completed" with Complete, Warning with the Failed condition's
// reason with Failed (pkg/controller/job, v1.34.3 and v1.37.1) — once, and
// not before the condition.
var TerminalEvent = Invariant{
	Name:        "terminal-event",
	Late:        true,
	ClockOnly:   "events leave through client-go's asynchronous sink (batched, retried, spam-filtered): no write of the controller shows an event it did not send",
	Description: "one terminal event when the Job finishes (Normal Completed, or Warning with the failure reason), not before the condition",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		jobs := jobEntries(ctx, t)
		if len(jobs) == 0 || ctx.ForeignManagedBy {
			return nil
		}
		last := jobs[len(jobs)-1]
		cond := finished(last.Job().Status)
		if cond == nil {
			return nil
		}
		wantType, wantReason := corev1.EventTypeWarning, cond.Reason
		if cond.Type == batchv1.JobComplete {
			wantType, wantReason = corev1.EventTypeNormal, "Completed"
		}
		events, order := jobEvents(ctx, t)
		// Emitted events of the type, not objects: client-go's aggregator
		// folds similar events into one with a count once there are 10 of
		// them, and its spam filter's budget is per type.
		all := 0
		for _, name := range order {
			if events[name].Type == wantType {
				all += int(max(events[name].Count, 1))
			}
		}
		var out []Violation
		n := 0
		for _, name := range order {
			ev := events[name]
			if ev.Reason != wantReason || ev.Type != wantType {
				continue
			}
			n += int(max(ev.Count, 1))
			if at := eventTime(ev); !at.IsZero() && at.Before(cond.LastTransitionTime.Add(-clockSlack)) {
				out = append(out, violation("terminal-event", last, "%s event %q at %s, before the %s condition (%s)", ev.Type, ev.Reason, at.UTC().Format(time.RFC3339), cond.Type, timeOf(&cond.LastTransitionTime)))
			}
		}
		switch {
		case n > 1:
			out = append(out, violation("terminal-event", last, "%d %s events %q for one %s condition, want one", n, wantType, wantReason, cond.Type))
		case n == 0 && all < eventSpamBurst && overdue(ctx, last.Time, recordingEnd(ctx, t)):
			reasons := []string{}
			for _, name := range order {
				reasons = append(reasons, events[name].Type+"/"+events[name].Reason)
			}
			slices.Sort(reasons)
			out = append(out, violation("terminal-event", last, "no %s event %q for the %s condition (events: %v)", wantType, wantReason, cond.Type, reasons))
		}
		return out
	},
}

// overdue tells whether a terminal event missing at end (the condition seen
// at cond) is a broken promise (TerminalEventDue).
func overdue(ctx Context, cond, end time.Time) bool {
	due, ok := TerminalEventDue(ctx, cond)
	return ok && !end.Before(due)
}

// jobEvents are the Job's events, the latest state of each by name, and
// their names in order of first appearance.
func jobEvents(ctx Context, t timeline.Timeline) (map[string]*corev1.Event, []string) {
	events := map[string]*corev1.Event{}
	var order []string
	for _, e := range t {
		ev, ok := e.Object.(*corev1.Event)
		if !ok || e.Type == timeline.Deleted || ev.InvolvedObject.Kind != "Job" || ev.InvolvedObject.Name != ctx.Job {
			continue
		}
		if _, seen := events[ev.Name]; !seen {
			order = append(order, ev.Name)
		}
		events[ev.Name] = ev
	}
	return events, order
}

// SuspendEvents: each suspension (Suspended=True) is announced by one Normal
// "Suspended" event and each resume (Suspended=False, JobResumed) by one
// Normal "Resumed" event (pkg/controller/job syncJob, v1.34.3 and v1.37.1).
// An event may be missing only where its absence proves nothing
// (eventExcused): not yet due, or near a restart.
var SuspendEvents = Invariant{
	Name:        "suspend-events",
	Description: "one Normal Suspended event per suspension and one Normal Resumed event per resume",
	KnownBugs:   []string{bugs.ResumeStartTimeRejected.ID},
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		if ctx.ForeignManagedBy {
			return nil
		}
		want, last := suspendTransitions(ctx, t)
		if len(want) == 0 {
			return nil
		}
		got, all := suspendEventCounts(ctx, t)
		end := recordingEnd(ctx, t)
		var out []Violation
		for _, reason := range []string{"Suspended", "Resumed"} {
			excused := 0
			for _, seen := range want[reason] {
				if eventExcused(ctx, seen, end) {
					excused++
				}
			}
			tooMany := got[reason] > len(want[reason])
			if tooMany && statusRefusedBefore(ctx, want[reason]) {
				// Upstream records the event before the status write
				// (syncJob, read at v1.36.3 and v1.37.1): each retry of a
				// refused write announces the same transition again.
				ctx.skip("%d Normal %q events for %d such transitions while the controller's status writes were refused (a controller that records the event before the write records it again at each retry): not how many, only that each is announced", got[reason], reason, len(want[reason]))
				tooMany = false
			}
			if tooMany || (got[reason] < len(want[reason])-excused && all < eventSpamBurst) {
				out = append(out, violation("suspend-events", last, "%d Normal %q events for %d such transitions of the Suspended condition, want one each", got[reason], reason, len(want[reason])))
			}
		}
		return out
	},
}

// statusRefusedBefore tells whether the controller's status writes were
// refused before the last of seen (or at all, when seen is empty: a
// transition announced and never written).
func statusRefusedBefore(ctx Context, seen []time.Time) bool {
	for _, sp := range ctx.StatusRefused {
		if len(seen) == 0 || sp.From.Before(seen[len(seen)-1]) {
			return true
		}
	}
	return false
}

// suspendTransitions are the times the Suspended condition was seen to
// change, by the event each calls for ("Suspended", "Resumed"), and the
// Job's last entry.
func suspendTransitions(ctx Context, t timeline.Timeline) (map[string][]time.Time, timeline.Entry) {
	want := map[string][]time.Time{}
	var prev *batchv1.Job
	var last timeline.Entry
	for _, e := range jobEntries(ctx, t) {
		cur := e.Job()
		c := kube.JobCondition(cur.Status, batchv1.JobSuspended)
		var p *batchv1.JobCondition
		if prev != nil {
			p = kube.JobCondition(prev.Status, batchv1.JobSuspended)
		}
		if c != nil && (p == nil || p.Status != c.Status || !p.LastTransitionTime.Equal(&c.LastTransitionTime)) {
			reason := "Suspended"
			if c.Status != corev1.ConditionTrue {
				reason = "Resumed"
			}
			if c.Status == corev1.ConditionTrue || p != nil {
				want[reason] = append(want[reason], e.Time)
			}
		}
		prev, last = cur, e
	}
	return want, last
}

// suspendEventCounts counts the Job's Normal Suspended and Resumed events;
// all is how many Normal events of the Job were emitted (client-go's aggregator
// folds similar ones into one object with a count: a Job of 1,000 pods
// emitted hundreds of SuccessfulCreate in a dozen objects, and its
// Suspended event was past the spam filter's budget).
func suspendEventCounts(ctx Context, t timeline.Timeline) (got map[string]int, all int) {
	events, order := jobEvents(ctx, t)
	got = map[string]int{}
	for _, name := range order {
		ev := events[name]
		if ev.Type != corev1.EventTypeNormal {
			continue // the spam filter's budget is per type
		}
		all += int(max(ev.Count, 1))
		if ev.Reason == "Suspended" || ev.Reason == "Resumed" {
			got[ev.Reason] += int(max(ev.Count, 1))
		}
	}
	return got, all
}

// OwedEvents are the times of the changes whose events the recording still
// lacks — the Job's finish (its terminal event, seen at the Job's last entry
// as terminal-event reckons it), its suspensions and resumes (the latest
// of each kind without an event) and its pods' creations — so that the
// runner can wait until they are due (TerminalEventDue) before the
// invariants judge. A controller's events are sent one at a time by client-go's event sink: behind a saturated
// apiserver, a correct controller's come seconds late (seen: the reference
// controller's, 13s after the change, in a make run's conformance suite).
func OwedEvents(ctx Context, t timeline.Timeline) []time.Time {
	jobs := jobEntries(ctx, t)
	if len(jobs) == 0 || ctx.ForeignManagedBy {
		return nil
	}
	events, order := jobEvents(ctx, t)
	if len(order) >= eventSpamBurst {
		return nil // the recorder may have dropped any: nothing to wait for
	}
	var owed []time.Time
	last := jobs[len(jobs)-1]
	if cond := finished(last.Job().Status); cond != nil {
		wantType, wantReason := corev1.EventTypeWarning, cond.Reason
		if cond.Type == batchv1.JobComplete {
			wantType, wantReason = corev1.EventTypeNormal, "Completed"
		}
		sent := false
		for _, name := range order {
			sent = sent || (events[name].Reason == wantReason && events[name].Type == wantType)
		}
		if !sent {
			owed = append(owed, last.Time)
		}
	}
	want, _ := suspendTransitions(ctx, t)
	got, _ := suspendEventCounts(ctx, t)
	for _, reason := range []string{"Suspended", "Resumed"} {
		if n := len(want[reason]); got[reason] < n {
			owed = append(owed, want[reason][n-1])
		}
	}
	// Each pod the controller creates is announced by a Normal
	// SuccessfulCreate event (pkg/controller's pod control, v1.31.4 to
	// v1.37.1; the reference alike), which the oracle counts: the last one
	// is waited for too (seen on the CI's loaded machine: the built-in's
	// event for a replacement missing from a recording that ended 5 s after
	// the pod came). Not where a restart may have lost it, nor where the
	// recorder's spam filter may have dropped some.
	if ctx.Copy != "" { // a dispatched Job's pods are the worker's
		return owed
	}
	if created, at := createdPods(ctx, t); created > 0 && created+len(order) < eventSpamBurst {
		sent := 0
		for _, name := range order {
			if ev := events[name]; ev.Type == corev1.EventTypeNormal && ev.Reason == "SuccessfulCreate" {
				sent += int(max(ev.Count, 1))
			}
		}
		if _, ok := TerminalEventDue(ctx, at); ok && sent < created {
			owed = append(owed, at)
		}
	}
	return owed
}

// createdPods counts the pods the controller created for the Job (or an
// earlier Job of its name), and says when the last came.
func createdPods(ctx Context, t timeline.Timeline) (n int, last time.Time) {
	seen := map[types.UID]bool{}
	for _, e := range t {
		p := e.Pod()
		if p == nil || e.Type != timeline.Added || seen[p.UID] || p.Annotations[BroughtAnnotation] != "" {
			continue
		}
		if !controlledByJobNamed(p, ctx.Job) {
			continue
		}
		seen[p.UID] = true
		n, last = n+1, e.Time
	}
	return n, last
}

// eventExcused tells whether the event of a change seen at seen may be
// missing from a recording that ended at end: it was not yet due, or the
// change came near a restart (TerminalEventDue says nothing then); a break
// in the recording's watch makes it due later.
// client-go's event sink sends one event at a time, sleeps up to 10s before
// retrying one it could not send, and drops one the apiserver rejects with a
// status error — as a starting or stopping apiserver may. Seen in a drill:
// the reference controller's Resumed event, queued behind a retried one,
// never written when the apiserver was replaced 11s after the resume.
func eventExcused(ctx Context, seen, end time.Time) bool {
	due, ok := TerminalEventDue(ctx, seen)
	return !ok || end.Before(due)
}

func eventTime(ev *corev1.Event) time.Time {
	switch {
	case !ev.FirstTimestamp.IsZero():
		return ev.FirstTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	}
	return time.Time{}
}

// FinalizerOwned: every pod the controller creates carries its own tracking
// finalizer from creation on (the exactly-once protocol starts there), and a
// controller other than the built-in one never puts the built-in's reserved
// batch.kubernetes.io/job-tracking on its pods (KEP-4368).
var FinalizerOwned = Invariant{
	Name:        "finalizer-owned",
	Description: "each pod carries the controller's own tracking finalizer from creation; no other controller uses batch.kubernetes.io/job-tracking",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		if ctx.Finalizer == "" {
			return nil
		}
		var out []Violation
		created, reserved := map[string]bool{}, map[string]bool{}
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			if e.Kind != "Pod" || after.job == nil || e.Type == timeline.Deleted {
				return
			}
			p := e.Pod()
			if !ownedBy(p, after.job) {
				return
			}
			if _, known := before.pods[p.UID]; e.Type == timeline.Added && !known && !created[p.Name] {
				created[p.Name] = true
				if !slices.Contains(p.Finalizers, ctx.Finalizer) {
					out = append(out, violation("finalizer-owned", e, "pod %s created without the tracking finalizer %s (finalizers %v)", p.Name, ctx.Finalizer, p.Finalizers))
				}
			}
			if ctx.Finalizer != batchv1.JobTrackingFinalizer && slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer) && !reserved[p.Name] {
				reserved[p.Name] = true
				out = append(out, violation("finalizer-owned", e, "pod %s carries the built-in controller's reserved finalizer %s", p.Name, batchv1.JobTrackingFinalizer))
			}
		})
		return out
	},
}
