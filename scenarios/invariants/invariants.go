// Package invariants checks the promises of batch/v1 over a whole recorded
// timeline, not over snapshots: a controller that breaks one for 50 ms is
// caught. Cross-object checks order changes by etcd revision (see
// timeline.Entry.Revision), which is exact, rather than by arrival time from
// separate watches, which is not.
package invariants

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
	"github.com/jobconform/jobconform/scenarios/bugs"
)

// Context is what the checks need to know about a run besides its timeline.
type Context struct {
	// Job is the name of the Job under test.
	Job string
	// Version is the cluster's Kubernetes release (vX.Y.Z), for version-aware checks.
	Version string
	// BuiltIn: the controller under test is the built-in one, so the known
	// upstream bugs of its release (scenarios/bugs) explain its violations;
	// another controller's violations are its own.
	BuiltIn bool
	// Finalizer is the tracking finalizer of the controller under test
	// (batch.kubernetes.io/job-tracking for the built-in one).
	Finalizer string
	// ForeignManagedBy: the Job names a manager that does not run; nothing may
	// write its status or create its pods.
	ForeignManagedBy bool
	// Copy, when set, is the name under which the timeline holds the
	// worker's copy of a Job a dispatcher runs on another cluster (issue
	// #31): the timeline's Job is the manager's (its status as the user sees
	// it), its pods the worker's, which the worker's own Job controller
	// rightly creates (recorder.StartMirrored).
	Copy string
	// End is when recording stopped; zero: the last entry's time.
	End time.Time
	// ReadyWithin, when set, is how soon status.ready must follow the pods'
	// readiness (ready-follows).
	ReadyWithin time.Duration
	// PolicyOff are the spans in which the controller ran with its
	// JobPodReplacementPolicy gate off (a gate-flip drill): podReplacementPolicy
	// is not in force then.
	PolicyOff []timeline.Span
	// Restarts are when the controller under test or the apiserver was
	// restarted (chaos): the controller's memory (the backoff record) is gone
	// after its own restart, and it may act late around either.
	Restarts []time.Time
	// StatusRefused are the spans in which the apiserver refused the
	// controller's writes of the Job's status (the act refusePodChanges
	// with jobStatus; an open span lasts to the end): a controller that
	// announces a change by an event before the write that records it
	// (upstream's syncJob) announces it again at each retry.
	StatusRefused []timeline.Span
	// Gaps are the stretches in which the recording's watch was broken (an
	// apiserver restart): the states in between are lost, and a change seen
	// at the end of a gap may have happened anywhere in it.
	Gaps []timeline.Span
	// Metrics are the controller's counters around the run, when it read
	// them (metrics-agree).
	Metrics *MetricSamples
	// Starved, when set, tells why the machine was starved between two
	// moments past the load the cause lines were measured to hold at ("":
	// it was not; the runner reads its starvation meter).
	Starved func(from, to time.Time) string

	// unjudged collects what a check leaves unjudged and why (Evaluate
	// sets it; a copy of the Context shares it).
	unjudged *[]string
}

// skip records that the check leaves part of the run unjudged, and why:
// the verdict says so instead of passing silently.
func (ctx Context) skip(format string, args ...any) {
	if ctx.unjudged == nil {
		return
	}
	if s := fmt.Sprintf(format, args...); !slices.Contains(*ctx.unjudged, s) {
		*ctx.unjudged = append(*ctx.unjudged, s)
	}
}

// during tells whether t falls in one of the spans.
func during(spans []timeline.Span, t time.Time) bool {
	for _, s := range spans {
		if s.Contains(t) {
			return true
		}
	}
	return false
}

// RestartGrace is how long after a restart of the controller or the
// apiserver the controller may lag: its informers relist before it acts
// again, and client-go's reflector backs off between attempts while the
// apiserver is away — up to 30s with a jitter of as much again. Seen in a
// drill: the reference controller relisted 56s after the apiserver was back.
// An apiserver's restart counts twice (the runner's restartBounds): the
// reflector may wait once for its watch and once more for its list.
var RestartGrace = 60 * time.Second

// disturbed tells whether t falls in a recording gap or within RestartGrace
// after a restart: the controller's view, or ours, may be behind there.
func disturbed(ctx Context, t time.Time) bool {
	if during(ctx.Gaps, t) {
		return true
	}
	for _, r := range ctx.Restarts {
		// A state a restart cut short (within a settle window before it)
		// counts too: the controller had no time to act on it.
		if t.After(r.Add(-SettleWindow)) && t.Sub(r) <= RestartGrace {
			return true
		}
	}
	return false
}

// disturbedBetween tells whether a restart or a recording gap falls between
// from and to (or just before from): a delay measured across it says nothing
// of the controller's timing.
func disturbedBetween(ctx Context, from, to time.Time) bool {
	for _, r := range ctx.Restarts {
		if r.After(from.Add(-RestartGrace)) && !r.After(to) {
			return true
		}
	}
	for _, g := range ctx.Gaps {
		if !g.From.After(to) && (g.To.IsZero() || !g.To.Before(from)) {
			return true
		}
	}
	return false
}

// SettleWindow is how long a timeline must stay quiet before a state counts
// as settled: longer than the controllers' 1s pod-event batching plus a sync
// on a saturated machine (the suites run many scenarios and clusters at once
// on two cores: a reference controller took 3.0s to count a terminating pod).
var SettleWindow = 5 * time.Second

// Violation is one broken promise, at the change that broke it.
type Violation struct {
	Invariant string
	Time      time.Time
	Seq       int
	Revision  uint64
	Message   string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s at %s (seq %d, rv %d): %s", v.Invariant, v.Time.Format("15:04:05.000"), v.Seq, v.Revision, v.Message)
}

// Invariant is one promise. Since says from which release it is a promise
// at all; a known upstream bug of some releases is named in KnownBugs, and a
// run at such a release is still checked: the bug fails it, by name.
type Invariant struct {
	Name        string
	Description string
	// Since is the first release the promise holds for ("" = every supported one).
	Since string
	// KnownBugs are IDs of scenarios/bugs whose releases' built-in
	// controller breaks the promise: the verdict says so, and stays a failure.
	KnownBugs []string
	// Manager marks a promise about the Job's status alone, or about who
	// writes it: for a dispatched Job (Context.Copy) it is judged on the
	// manager's Job, as the user sees it. Every other promise compares the
	// status with the pods and is judged on the worker's copy, whose status
	// the pods' own controller (the worker's built-in) writes: a dispatcher
	// copies the newest status it has seen, seconds later, and may skip one
	// (seen: FailureTarget alone for 33 ms); the mirror invariants (Mirror)
	// carry those promises to the manager's Job — every status it shows is
	// one the copy had, in order, each within MirrorWithin.
	Manager bool
	// Late marks an upper bound in time ("within", "settles"): a violation
	// may be a starved machine as well as a slow controller, and its
	// verdict says which the starvation meter saw (internal/starvation).
	Late bool
	// ClockOnly, for a Late invariant, says why no act of the controller in
	// the recording can prove it late, so the clock alone judges it; empty,
	// the check proves lateness by cause first (cause.go): a sync the
	// controller ran after it was due to act, which left the act undone.
	ClockOnly string
	// Applies tells whether the run gave the check what it reads (nil: always).
	Applies func(Context) bool
	Check   func(Context, timeline.Timeline) []Violation
}

// Result is one invariant's verdict on a run.
type Result struct {
	Invariant  string
	Applicable bool
	// KnownBug names the upstream bug the release is known to have that
	// breaks this promise ("" when none); the violations name it too.
	KnownBug   string
	Violations []Violation
	// Unjudged says what of the run the check could not judge, and why (a
	// break in the recording, a restart): not a failure, not a pass.
	Unjudged []string
}

// All lists the invariants checked on every run.
var All = []Invariant{
	CountersMonotonic,
	ReadyNotAboveActive,
	TerminalAfterTarget,
	TerminalOnlyWhenPodsTerminal,
	ReplacementWaitsUnderFailed,
	ActiveWithinParallelism,
	ReplacementTiming,
	FirstPodsOnTime,
	BackoffRespected,
	IndexBackoffRespected,
	TerminatingSettles,
	ActiveSettles,
	FinalizerReleased,
	ManagedBySilence,
	DelegationRespected,
	ReadyFollows,
	ReadySeen,
	StartTime,
	CompletionTime,
	DeadlineFromStart,
	DeadlineOnTime,
	TerminalEvent,
	SuspendEvents,
	SuspendedCreatesNoPods,
	FinalizerOwned,
	FinalizerAfterRecord,
	PodIdentity,
	ReleasedOnDeletion,
	ForegroundWaitsForPods,
	WorkQueueNoRefill,
	ScaleDownOrder,
	Adoption,
	IndexesValid,
	IndexFailureCount,
	FailedKeptUntilReplaced,
	MetricsAgree,
	Ledger,
}

// IsLate tells whether the invariant named name is an upper bound in time
// (Invariant.Late, and CheckMirror's mirror-lag: MirrorWithin).
func IsLate(name string) bool {
	if name == "mirror-lag" {
		return true
	}
	for _, inv := range All {
		if inv.Name == name {
			return inv.Late
		}
	}
	return false
}

// CheckAll evaluates every invariant.
func CheckAll(ctx Context, t timeline.Timeline) []Result {
	// The invariants only read the recording: judged side by side, a
	// 10,000-pod recording takes about half the time on two cores.
	out := make([]Result, len(All))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(All)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = All[i].Evaluate(ctx, t)
			}
		}()
	}
	for i := range All {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// Evaluate checks one invariant, honouring its versions.
func (inv Invariant) Evaluate(ctx Context, t timeline.Timeline) Result {
	r := Result{Invariant: inv.Name, Applicable: true}
	if inv.Since != "" && ctx.Version != "" {
		v, err := version.ParseSemantic(ctx.Version)
		if err == nil && v.LessThan(version.MustParseSemantic(inv.Since)) {
			r.Applicable = false
			return r
		}
	}
	if inv.Applies != nil && !inv.Applies(ctx) {
		r.Applicable = false
		return r
	}
	if ctx.Copy != "" && !inv.Manager {
		t = copyView(ctx, t)
		ctx.BuiltIn = true // the worker's Job controller: its release's known bugs are named
	}
	// Inside a recording gap the order of what the relist reported is not
	// known: no verdict there (RestartGrace-style lags are each check's own).
	var unjudged []string
	ctx.unjudged = &unjudged
	inGaps, firstInGap := 0, Violation{}
	for _, in := range incarnations(ctx, t) {
		in.ctx.unjudged = &unjudged
		for _, v := range inv.Check(in.ctx, in.t) {
			if !during(ctx.Gaps, v.Time) {
				r.Violations = append(r.Violations, v)
				continue
			}
			if inGaps++; inGaps == 1 {
				firstInGap = v
			}
		}
	}
	// One note for them all: a big Job's relist can hold thousands.
	switch {
	case inGaps == 1:
		ctx.skip("a breach at %s fell in a break of the recording, where the order of changes is not known: not judged (%s)", firstInGap.Time.Format("15:04:05.000"), firstInGap.Message)
	case inGaps > 1:
		ctx.skip("%d breaches fell in breaks of the recording, where the order of changes is not known: not judged (the first at %s: %s)", inGaps, firstInGap.Time.Format("15:04:05.000"), firstInGap.Message)
	}
	r.Unjudged = unjudged
	bug, ok := bugs.OfApiserver(inv.KnownBugs, ctx.Version)
	if !ok && ctx.BuiltIn {
		bug, ok = bugs.Of(inv.KnownBugs, ctx.Version)
	}
	if ok {
		r.KnownBug = bug.Describe(ctx.Version)
		for i := range r.Violations {
			r.Violations[i].Message += " — " + r.KnownBug
		}
	}
	return r
}

// incarnation is one Job of the name under test and its view of the
// recording.
type incarnation struct {
	ctx Context
	t   timeline.Timeline
}

// incarnations splits a recording in which the Job under test was deleted
// and created again under its name (act recreateJob) into one view per Job:
// its own entries, the pods and events of no other Job of that name (by
// controller reference, controller-uid label or involved object), and
// everything else. Each Job is judged on its own: the new one's empty status
// is no counter going back, and the old one's pods are not the new one's. A
// Job whose spec.managedBy differs from the first one's names another
// manager than the controller under test. One Job: the recording as it is;
// so too for a dispatched Job (ctx.Copy), whose recording grafts the copy's
// metadata, UID included, onto the manager's Job, and which no run
// recreates (the runner's NotAcrossClusters).
func incarnations(ctx Context, t timeline.Timeline) []incarnation {
	if ctx.Copy != "" {
		return []incarnation{{ctx, t}}
	}
	var uids []types.UID
	managedBy := map[types.UID]string{}
	for _, e := range t {
		if e.Kind != "Job" || e.Name != ctx.Job {
			continue
		}
		j := e.Job()
		if _, seen := managedBy[j.UID]; !seen {
			uids = append(uids, j.UID)
			managedBy[j.UID] = ptr.Deref(j.Spec.ManagedBy, "")
		}
	}
	if len(uids) < 2 {
		return []incarnation{{ctx, t}}
	}
	var out []incarnation
	for _, u := range uids {
		other := func(uid types.UID) bool { return uid != u && slices.Contains(uids, uid) }
		view := make(timeline.Timeline, 0, len(t))
		for _, e := range t {
			switch o := e.Object.(type) {
			case *batchv1.Job:
				if e.Name == ctx.Job && o.UID != u {
					continue
				}
			case *corev1.Pod:
				if ref := metav1.GetControllerOf(o); ref != nil && other(ref.UID) || other(types.UID(o.Labels[batchv1.ControllerUidLabel])) {
					continue
				}
			case *corev1.Event:
				if other(o.InvolvedObject.UID) {
					continue
				}
			}
			view = append(view, e)
		}
		c := ctx
		c.ForeignManagedBy = ctx.ForeignManagedBy || managedBy[u] != managedBy[uids[0]]
		out = append(out, incarnation{c, view})
	}
	return out
}

// copyView is a dispatched Job's timeline with the worker's copy in the
// place of the manager's Job.
func copyView(ctx Context, t timeline.Timeline) timeline.Timeline {
	out := make(timeline.Timeline, 0, len(t))
	for _, e := range t {
		switch {
		case e.Kind == "Job" && e.Name == ctx.Job:
			continue
		case e.Kind == "Job" && e.Name == ctx.Copy:
			e.Name = ctx.Job
		}
		out = append(out, e)
	}
	return out
}

// recordingEnd is when recording stopped: ctx.End, else the last entry's time.
func recordingEnd(ctx Context, t timeline.Timeline) time.Time {
	if !ctx.End.IsZero() || len(t) == 0 {
		return ctx.End
	}
	return t[len(t)-1].Time
}

// jobEntries are the entries of the Job under test.
func jobEntries(ctx Context, t timeline.Timeline) timeline.Timeline {
	var out timeline.Timeline
	for _, e := range t {
		if e.Kind == "Job" && e.Name == ctx.Job && e.Type != timeline.Deleted {
			out = append(out, e)
		}
	}
	return out
}

func violation(name string, e timeline.Entry, format string, args ...any) Violation {
	return Violation{Invariant: name, Time: e.Time, Seq: e.Seq, Revision: e.Revision(), Message: fmt.Sprintf(format, args...)}
}

func hasCond(s batchv1.JobStatus, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t && s.Conditions[i].Status == corev1.ConditionTrue {
			return &s.Conditions[i]
		}
	}
	return nil
}

func finished(s batchv1.JobStatus) *batchv1.JobCondition {
	if c := hasCond(s, batchv1.JobComplete); c != nil {
		return c
	}
	return hasCond(s, batchv1.JobFailed)
}

// settledOrFinishing tells whether the Job has a terminal or interim
// condition: its controller no longer claims pods for it, and
// its pods are on their way out.
func settledOrFinishing(s batchv1.JobStatus) bool {
	for _, t := range []batchv1.JobConditionType{batchv1.JobComplete, batchv1.JobFailed, batchv1.JobFailureTarget, batchv1.JobSuccessCriteriaMet} {
		if hasCond(s, t) != nil {
			return true
		}
	}
	return false
}

func podTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

func (w *world) podsOf(jobUID types.UID) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range w.pods {
		if controlledBy(p, jobUID) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
