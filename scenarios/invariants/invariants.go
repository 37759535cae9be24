// Package invariants checks the promises of batch/v1 over a whole recorded
// timeline, not over snapshots: a controller that breaks one for 50 ms is
// caught. Cross-object checks order changes by etcd revision (see
// timeline.Entry.Revision), which is exact, rather than by arrival time from
// separate watches, which is not.
package invariants

import (
	"fmt"
	"sort"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/scenarios/timeline"
)

// Context is what the checks need to know about a run besides its timeline.
type Context struct {
	// Job is the name of the Job under test.
	Job string
	// Version is the cluster's Kubernetes release (vX.Y.Z), for version-aware checks.
	Version string
	// Finalizer is the tracking finalizer of the controller under test
	// (batch.kubernetes.io/job-tracking for the built-in one).
	Finalizer string
	// ForeignManagedBy: the Job names a manager that does not run; nothing may
	// write its status or create its pods.
	ForeignManagedBy bool
	// End is when recording stopped; zero: the last entry's time.
	End time.Time
	// ReadyWithin, when set, is how soon status.ready must follow the pods'
	// readiness (ready-follows).
	ReadyWithin time.Duration
	// PolicyOff are the spans in which the controller ran with its
	// JobPodReplacementPolicy gate off (a gate-flip drill): podReplacementPolicy
	// is not in force then.
	PolicyOff []Span
}

// Span is a stretch of time, open-ended when To is zero.
type Span struct{ From, To time.Time }

// during tells whether t falls in one of the spans.
func during(spans []Span, t time.Time) bool {
	for _, s := range spans {
		if !t.Before(s.From) && (s.To.IsZero() || !t.After(s.To)) {
			return true
		}
	}
	return false
}

// SettleWindow is how long a timeline must stay quiet before a state counts
// as settled: longer than the controllers' 1s pod-event batching plus a sync.
var SettleWindow = 3 * time.Second

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

// Invariant is one promise. Applies says, from the context (the version), whether
// it is a promise at all for this run; a known upstream regression is stated
// in KnownRegression and exempts the versions it names.
type Invariant struct {
	Name        string
	Description string
	// Since is the first release the promise holds for ("" = every supported one).
	Since string
	// KnownRegression names releases whose built-in controller breaks the
	// promise, and the upstream issue; such runs report the exemption, not a pass.
	KnownRegression map[string]string
	Check           func(Context, timeline.Timeline) []Violation
}

// Result is one invariant's verdict on a run.
type Result struct {
	Invariant  string
	Applicable bool
	// Exempt explains why an applicable invariant was not enforced (known regression).
	Exempt     string
	Violations []Violation
}

// All lists the invariants checked on every run.
var All = []Invariant{
	CountersMonotonic,
	ReadyNotAboveActive,
	TerminalAfterTarget,
	TerminalOnlyWhenPodsTerminal,
	ReplacementWaitsUnderFailed,
	ReplacementTiming,
	TerminatingSettles,
	FinalizerReleased,
	ManagedBySilence,
	DelegationRespected,
	ReadyFollows,
}

// CheckAll evaluates every invariant.
func CheckAll(ctx Context, t timeline.Timeline) []Result {
	var out []Result
	for _, inv := range All {
		out = append(out, inv.Evaluate(ctx, t))
	}
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
	if issue, ok := inv.KnownRegression[ctx.Version]; ok {
		r.Exempt = fmt.Sprintf("known regression of Kubernetes %s (%s)", ctx.Version, issue)
		return r
	}
	r.Violations = inv.Check(ctx, t)
	return r
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

func podTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// world replays the Job's and its pods' changes in revision order and calls
// visit after each one with the state as of that revision.
type world struct {
	job  *batchv1.Job
	pods map[types.UID]*corev1.Pod
}

func (w *world) podsOf(jobUID types.UID) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range w.pods {
		if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == jobUID {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func replay(ctx Context, t timeline.Timeline, visit func(e timeline.Entry, before, after *world)) {
	var es timeline.Timeline
	for _, e := range t {
		if (e.Kind == "Job" && e.Name == ctx.Job) || e.Kind == "Pod" {
			es = append(es, e)
		}
	}
	// Revision order when every entry has one; arrival order otherwise.
	byRevision := true
	for _, e := range es {
		if e.Revision() == 0 {
			byRevision = false
		}
	}
	if byRevision {
		sort.SliceStable(es, func(i, j int) bool { return es[i].Revision() < es[j].Revision() })
	}
	w := &world{pods: map[types.UID]*corev1.Pod{}}
	for _, e := range es {
		before := &world{job: w.job, pods: map[types.UID]*corev1.Pod{}}
		for k, v := range w.pods {
			before.pods[k] = v
		}
		switch e.Kind {
		case "Job":
			w.job = e.Job()
		case "Pod":
			p := e.Pod()
			if e.Type == timeline.Deleted {
				delete(w.pods, p.UID)
			} else {
				w.pods[p.UID] = p
			}
		}
		visit(e, before, w)
	}
}

// unknownSpan is a stretch of a recording in which an object's state is not
// known: when a watch breaks (an apiserver restart) and the informer relists,
// an object deleted meanwhile is reported late, with its last known state and
// that state's revision. Replay removes it at that revision, the earliest the
// deletion can have happened; checks that compare pods with the Job's status
// give no verdict inside such a span, since the pod may have lived on.
type unknownSpan struct {
	fromRV, toRV     uint64
	fromTime, toTime time.Time
}

func unknownSpans(t timeline.Timeline) []unknownSpan {
	var out []unknownSpan
	lastRV := map[types.UID]uint64{}
	lastTime := map[types.UID]time.Time{}
	var maxRV uint64
	for _, e := range t {
		rv, uid := e.Revision(), uidOf(e)
		if e.Type == timeline.Deleted && rv != 0 && rv <= lastRV[uid] {
			out = append(out, unknownSpan{fromRV: lastRV[uid], toRV: maxRV, fromTime: lastTime[uid], toTime: e.Time})
		}
		if rv > lastRV[uid] {
			lastRV[uid], lastTime[uid] = rv, e.Time
		}
		maxRV = max(maxRV, rv)
	}
	return out
}

func inUnknownRV(spans []unknownSpan, rv uint64) bool {
	for _, s := range spans {
		if rv >= s.fromRV && rv <= s.toRV {
			return true
		}
	}
	return false
}

func overlapsUnknownTime(spans []unknownSpan, from, to time.Time) bool {
	for _, s := range spans {
		if !to.Before(s.fromTime) && !from.After(s.toTime) {
			return true
		}
	}
	return false
}

func uidOf(e timeline.Entry) types.UID {
	if m, err := meta.Accessor(e.Object); err == nil {
		return m.GetUID()
	}
	return ""
}

// CountersMonotonic: status.failed never decreases; status.succeeded never
// decreases except when an elastic Indexed Job's completions shrink.
var CountersMonotonic = Invariant{
	Name:        "counters-monotonic",
	Description: "status.failed and status.succeeded never decrease (succeeded may when an elastic Indexed Job scales down)",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		var prev *batchv1.Job
		for _, e := range jobEntries(ctx, t) {
			j := e.Job()
			if prev != nil {
				if j.Status.Failed < prev.Status.Failed {
					out = append(out, violation("counters-monotonic", e, "failed went from %d to %d", prev.Status.Failed, j.Status.Failed))
				}
				shrunk := ptr.Deref(j.Spec.Completions, 0) < ptr.Deref(prev.Spec.Completions, 0)
				if j.Status.Succeeded < prev.Status.Succeeded && !shrunk {
					out = append(out, violation("counters-monotonic", e, "succeeded went from %d to %d", prev.Status.Succeeded, j.Status.Succeeded))
				}
			}
			prev = j
		}
		return out
	},
}

// ReadyNotAboveActive: status.ready ≤ status.active in every status.
var ReadyNotAboveActive = Invariant{
	Name:            "ready-not-above-active",
	Description:     "status.ready never exceeds status.active",
	KnownRegression: map[string]string{"v1.34.4": "kubernetes/kubernetes#139428"},
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		for _, e := range jobEntries(ctx, t) {
			s := e.Job().Status
			if r := ptr.Deref(s.Ready, 0); r > s.Active {
				out = append(out, violation("ready-not-above-active", e, "ready=%d > active=%d", r, s.Active))
			}
		}
		return out
	},
}

// TerminalAfterTarget: Failed only with FailureTarget, Complete only with
// SuccessCriteriaMet, each with the same reason (deferred terminal conditions, 1.31+).
var TerminalAfterTarget = Invariant{
	Name:        "terminal-after-target",
	Description: "Failed comes only after FailureTarget, Complete only after SuccessCriteriaMet, with the same reason",
	Since:       "v1.31.0",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		reported := map[batchv1.JobConditionType]bool{}
		for _, e := range jobEntries(ctx, t) {
			s := e.Job().Status
			for _, pair := range [][2]batchv1.JobConditionType{{batchv1.JobFailed, batchv1.JobFailureTarget}, {batchv1.JobComplete, batchv1.JobSuccessCriteriaMet}} {
				term := hasCond(s, pair[0])
				if term == nil || reported[pair[0]] {
					continue
				}
				target := hasCond(s, pair[1])
				switch {
				case target == nil:
					out = append(out, violation("terminal-after-target", e, "%s=True without %s", pair[0], pair[1]))
				case target.Reason != term.Reason:
					out = append(out, violation("terminal-after-target", e, "%s reason %q differs from %s reason %q", pair[0], term.Reason, pair[1], target.Reason))
				default:
					continue
				}
				reported[pair[0]] = true
			}
		}
		return out
	},
}

// TerminalOnlyWhenPodsTerminal: when Failed or Complete is written, every pod
// of the Job is terminal or gone (1.31+).
var TerminalOnlyWhenPodsTerminal = Invariant{
	Name:        "terminal-only-when-pods-terminal",
	Description: "Failed/Complete is written only once no pod of the Job is running or terminating",
	Since:       "v1.31.0",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		done := false
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			if done || e.Kind != "Job" || finished(e.Job().Status) == nil {
				return
			}
			done = true
			for _, p := range after.podsOf(e.Job().UID) {
				if !podTerminal(p) {
					state := "running"
					if p.DeletionTimestamp != nil {
						state = "terminating"
					}
					out = append(out, violation("terminal-only-when-pods-terminal", e, "%s written while pod %s was %s (phase %s)",
						finished(e.Job().Status).Type, p.Name, state, p.Status.Phase))
				}
			}
		})
		return out
	},
}

func replacementPolicyFailed(j *batchv1.Job) bool {
	if j.Spec.PodReplacementPolicy != nil {
		return *j.Spec.PodReplacementPolicy == batchv1.Failed
	}
	return j.Spec.PodFailurePolicy != nil
}

func indexOf(p *corev1.Pod) string { return p.Annotations[batchv1.JobCompletionIndexAnnotation] }

// ReplacementWaitsUnderFailed: under podReplacementPolicy Failed a new pod is
// created only when the non-terminal pods (terminating ones included) stay
// within parallelism, and, for Indexed Jobs, only when no other pod of its
// index is non-terminal.
var ReplacementWaitsUnderFailed = Invariant{
	Name:        "replacement-waits-under-failed",
	Description: "podReplacementPolicy=Failed: no replacement while its predecessor is not terminal; non-terminal pods never exceed parallelism",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			if e.Kind != "Pod" || e.Type != timeline.Added || before.job == nil || !replacementPolicyFailed(before.job) || during(ctx.PolicyOff, e.Time) {
				return
			}
			p := e.Pod()
			if ref := metav1.GetControllerOf(p); ref == nil || ref.UID != before.job.UID {
				return
			}
			if _, seen := before.pods[p.UID]; seen {
				return
			}
			var live []*corev1.Pod
			for _, q := range before.podsOf(before.job.UID) {
				if !podTerminal(q) {
					live = append(live, q)
				}
			}
			if par := ptr.Deref(before.job.Spec.Parallelism, 1); int32(len(live))+1 > par {
				out = append(out, violation("replacement-waits-under-failed", e, "pod %s created while %d pods were not terminal (parallelism %d)", p.Name, len(live), par))
			}
			if ix := indexOf(p); ix != "" {
				for _, q := range live {
					if indexOf(q) == ix {
						out = append(out, violation("replacement-waits-under-failed", e, "pod %s of index %s created while %s of the same index was not terminal", p.Name, ix, q.Name))
					}
				}
			}
		})
		return out
	},
}

// terminatingStrictSince is the first release whose built-in controller keeps
// status.terminating right through every quiet period of a run. Before it
// (seen on v1.34.3: Indexed Jobs under podReplacementPolicy=Failed) the count
// can stay stale until the controller's next sync, e.g. the end of a backoff;
// for those releases only the state at the end of the run is held to it.
const terminatingStrictSince = "v1.37.0"

// TerminatingSettles: once the cluster has been quiet for SettleWindow,
// status.terminating equals the Job's pods that are being deleted and not terminal.
var TerminatingSettles = Invariant{
	Name:        "terminating-settles",
	Description: "once the controller settles, status.terminating equals the observed terminating pods",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		strict := true
		if v, err := version.ParseSemantic(ctx.Version); err == nil && v.LessThan(version.MustParseSemantic(terminatingStrictSince)) {
			strict = false
		}
		var out []Violation
		unknown := unknownSpans(t)
		end := ctx.End
		if end.IsZero() && len(t) > 0 {
			end = t[len(t)-1].Time
		}
		type state struct {
			e     timeline.Entry
			count int32
			job   *batchv1.Job
		}
		var states []state
		replay(ctx, t, func(e timeline.Entry, _, after *world) {
			if after.job == nil {
				return
			}
			n := int32(0)
			for _, p := range after.podsOf(after.job.UID) {
				if p.DeletionTimestamp != nil && !podTerminal(p) {
					n++
				}
			}
			states = append(states, state{e, n, after.job})
		})
		// A state is settled if nothing (of any kind) changed for SettleWindow after it.
		times := make([]time.Time, 0, len(t))
		for _, e := range t {
			times = append(times, e.Time)
		}
		sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
		nextChange := func(after time.Time) time.Time {
			i := sort.Search(len(times), func(i int) bool { return times[i].After(after) })
			if i == len(times) {
				return end
			}
			return times[i]
		}
		for i, s := range states {
			if i+1 < len(states) && !states[i+1].e.Time.After(s.e.Time) {
				continue // more changes at the same moment
			}
			if !strict && i+1 < len(states) {
				continue // only the final state
			}
			if nextChange(s.e.Time).Sub(s.e.Time) < SettleWindow || s.job.Status.Terminating == nil || inUnknownRV(unknown, s.e.Revision()) {
				continue
			}
			if got := *s.job.Status.Terminating; got != s.count {
				out = append(out, violation("terminating-settles", s.e, "status.terminating=%d but %d pods were terminating (settled for %s)", got, s.count, SettleWindow))
			}
		}
		return out
	},
}

// FinalizerReleased: from the moment the Job is finished, no pod of it keeps
// the controller's tracking finalizer.
var FinalizerReleased = Invariant{
	Name:        "finalizer-released",
	Description: "no pod of a finished Job keeps the controller's tracking finalizer",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		if ctx.Finalizer == "" {
			return nil
		}
		var out []Violation
		reported := map[types.UID]bool{}
		replay(ctx, t, func(e timeline.Entry, _, after *world) {
			if after.job == nil || finished(after.job.Status) == nil {
				return
			}
			for _, p := range after.podsOf(after.job.UID) {
				for _, f := range p.Finalizers {
					if f == ctx.Finalizer && !reported[p.UID] {
						reported[p.UID] = true
						out = append(out, violation("finalizer-released", e, "pod %s keeps %s after the Job finished", p.Name, f))
					}
				}
			}
		})
		return out
	},
}

// ManagedBySilence: a Job whose manager does not run gets no status and no pods.
var ManagedBySilence = Invariant{
	Name:        "managedby-silence",
	Description: "a Job with a foreign spec.managedBy gets no status write and no pod from the built-in controller",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		if !ctx.ForeignManagedBy {
			return nil
		}
		var out []Violation
		var jobUID types.UID
		for _, e := range jobEntries(ctx, t) {
			jobUID = e.Job().UID
			s := e.Job().Status
			if s.Active != 0 || s.Succeeded != 0 || s.Failed != 0 || s.StartTime != nil || len(s.Conditions) > 0 ||
				s.Ready != nil || s.Terminating != nil || s.UncountedTerminatedPods != nil || s.CompletedIndexes != "" {
				out = append(out, violation("managedby-silence", e, "status written: %+v", s))
				break
			}
		}
		for _, e := range t.Of("Pod") {
			if ref := metav1.GetControllerOf(e.Pod()); ref != nil && ref.UID == jobUID && e.Type == timeline.Added {
				out = append(out, violation("managedby-silence", e, "pod %s created for the Job", e.Name))
				break
			}
		}
		return out
	},
}

// BuiltInManager is the field manager of the built-in controller's writes.
const BuiltInManager = "kube-controller-manager"

// builtInWrote tells whether managedFields record a write of the built-in
// controller manager to the status subresource (status) or to the object
// itself. Pods are judged by the latter only: other controllers of
// kube-controller-manager (PodGC, taint eviction) rightly write pod status.
func builtInWrote(fields []metav1.ManagedFieldsEntry, status bool) bool {
	for _, f := range fields {
		if f.Manager == BuiltInManager && (f.Subresource == "status") == status {
			return true
		}
	}
	return false
}

// DelegationRespected: a Job whose spec.managedBy names another controller is
// never written by the built-in one — neither its status nor its pods, as the
// objects' managedFields tell (KEP-4368). This holds for every run of the
// reference or an external controller, not only for the foreign-manager scenario.
var DelegationRespected = Invariant{
	Name:        "delegation-respected",
	Description: "the built-in controller writes neither the status nor the pods of a Job managed by another controller (managedFields)",
	Since:       "v1.32.0",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		var jobUID types.UID
		for _, e := range jobEntries(ctx, t) {
			j := e.Job()
			if j.Spec.ManagedBy == nil || *j.Spec.ManagedBy == batchv1.JobControllerName {
				return nil
			}
			jobUID = j.UID
			if builtInWrote(j.ManagedFields, true) {
				out = append(out, violation("delegation-respected", e, "%s wrote the status of a Job managed by %s", BuiltInManager, *j.Spec.ManagedBy))
				break
			}
		}
		for _, e := range t.Of("Pod") {
			p := e.Pod()
			if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == jobUID && builtInWrote(p.ManagedFields, false) {
				out = append(out, violation("delegation-respected", e, "%s wrote pod %s of a Job it does not manage", BuiltInManager, p.Name))
				break
			}
		}
		return out
	},
}
