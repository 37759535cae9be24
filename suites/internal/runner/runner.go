// Package runner runs one scenario against one Job controller on a cluster:
// it creates the Job in a fresh namespace, records everything, walks the
// steps, lets the cluster settle and checks every invariant over the timeline.
package runner

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/chaos"
	"github.com/jobconform/jobconform/controller"
	"github.com/jobconform/jobconform/controller/dispatch"
	"github.com/jobconform/jobconform/internal/apiaudit"
	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/internal/pods"
	"github.com/jobconform/jobconform/internal/process"
	"github.com/jobconform/jobconform/internal/recorder"
	"github.com/jobconform/jobconform/internal/starvation"
	"github.com/jobconform/jobconform/internal/timeline"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/bugs"
	"github.com/jobconform/jobconform/scenarios/invariants"
	"github.com/jobconform/jobconform/scenarios/oracle"
	"github.com/jobconform/jobconform/suites/internal/controllers"
)

// JobName is the name of every scenario's Job (each runs in its own namespace).
const JobName = "job"

// AbsentManager is the spec.managedBy of managedBy-silence scenarios: nothing answers to it.
const AbsentManager = "jobconform.io/absent-controller"

// Controller is a Job controller under test.
type Controller struct {
	// Name appears in spec names and reports: builtin, reference, or the user's.
	Name string
	// ManagedBy is written into each Job's spec.managedBy (nil: the built-in's Jobs).
	ManagedBy *string
	// Finalizer is the controller's pod tracking finalizer.
	Finalizer string
	// Faults are the deliberate bugs the controller runs with: a negative
	// control, whose failures are the harness catching them.
	Faults []string
	// Dispatched: the controller is a dispatcher (Kueue's MultiKueue, the
	// reference dispatcher): it runs each Job as a copy on a worker cluster
	// (Options.Worker), whose own Job controller makes the pods, and copies
	// the copy's status back. The Job's promises about its pods are judged
	// on the copy, and carried to the manager's Job, which the user sees, by
	// the mirror checks (invariants.Context.Copy, invariants.Mirror).
	Dispatched bool
	// JobLabels are added to each Job (Kueue's queue label). Queues: the
	// controller queues Jobs — suspends them at creation (Kueue's webhook)
	// and starts them once admitted — so it owns spec.suspend.
	JobLabels map[string]string
	Queues    bool
	// Release is the controller's own release where its known bugs
	// (scenarios/bugs, Bug.Controller) are reckoned by it: Kueue's.
	Release string
	// User is the identity the controller's API requests carry, where the
	// harness knows it: the requests the differential verdict compares are
	// read from the apiserver's audit log by it ("": not read).
	User string
}

// Dispatcher is the reference dispatcher (controller/dispatch); its copies
// are run by the worker's built-in Job controller, whose finalizer the pods carry.
var Dispatcher = Controller{Name: "dispatcher", ManagedBy: ptr.To(dispatch.DefaultName), Finalizer: batchv1.JobTrackingFinalizer, Dispatched: true}

// MultiKueue is Kueue's MultiKueue (issue #31): Jobs submitted to a
// LocalQueue of the manager cluster (Options.PrepareNamespace makes it),
// suspended at creation by Kueue's Job webhook, run on the worker by its
// built-in Job controller once both clusters' Kueue admitted them.
var MultiKueue = Controller{Name: "multikueue", ManagedBy: ptr.To("kueue.x-k8s.io/multikueue"), Finalizer: batchv1.JobTrackingFinalizer, Dispatched: true,
	JobLabels: map[string]string{"kueue.x-k8s.io/queue-name": "jobconform"}, Queues: true}

// BuiltIn is kube-controller-manager's Job controller.
var BuiltIn = Controller{Name: "builtin", Finalizer: batchv1.JobTrackingFinalizer, User: kube.JobControllerUser}

// Reference is jobconform's reference controller.
var Reference = Controller{Name: "reference", ManagedBy: ptr.To(controller.DefaultName), Finalizer: controller.TrackingFinalizer, User: controllers.ReferenceUser}

// StepResult is what happened at one step.
type StepResult struct {
	Index   int
	What    string
	OK      bool
	Skipped bool
	Message string
	Time    time.Time
	// TimedOut: an await's state did not come within its timeout (a
	// timing verdict, read against the starvation meter).
	TimedOut bool
	// KnownBug: the step failed as a known upstream bug of the release
	// makes it fail (the message names the bug).
	KnownBug bool
}

// Result is one scenario run.
type Result struct {
	Scenario   string
	Controller string
	Version    string
	Namespace  string
	// Skipped says why the scenario did not apply (version).
	Skipped    string
	Steps      []StepResult
	Invariants []invariants.Result
	Timeline   timeline.Timeline
	Start, End time.Time
	// Err is a failure of the harness, not of the controller (API errors...).
	Err error
	// Seed drove the chaos choices; Chaos lists the actions carried out.
	Seed  uint64
	Chaos []chaos.Record
	// Faults: the controller was broken on purpose (Controller.Faults).
	Faults []string
	// Nodes is what played the nodes (Options.Nodes).
	Nodes string
	// Gates are the feature gates set on the cluster (Options.Gates).
	Gates string
	// Judging is how long the invariants took over the recording;
	// JudgingCPU the harness process's processor time meanwhile (all its
	// threads: the judging, the garbage collector, the recorder's
	// informers). Judging well above JudgingCPU is time spent waiting for a
	// processor the cluster held.
	Judging, JudgingCPU time.Duration
	// MirrorLags are, for a dispatched Job, how late each distinct status of
	// the worker's copy reached the manager's Job (invariants.CheckMirror).
	MirrorLags []time.Duration
	// TailPending are the invariants whose verdict on the run's final state
	// was not in when the recording had settled, and TailWait how much
	// longer it was recorded for them (awaitTail).
	TailPending []string
	TailWait    time.Duration
	// Observation is what the run showed that does not depend on timing
	// (scenarios/oracle): the built-in's is the oracle another
	// controller's is compared with. Compared says the run was compared,
	// Differences are that comparison's, and OracleNote says why a run was
	// not compared ("" when it was, or nothing asked for it). Untimed says
	// why a compared run's delays were not (oracle.WhyUntimed).
	Observation *oracle.Observation
	Compared    bool
	Differences []oracle.Difference
	OracleNote  string
	Untimed     string
	// Starvation is how starved the machine was while the scenario ran
	// (internal/starvation): a timing verdict that fails while it was red
	// says so.
	Starvation starvation.Reading
	// Again says, when this run stands in for an earlier run of the same
	// scenario and controller that failed only in ways a busy machine can
	// cause in a correct controller's run, why that one was run again and
	// how it failed (harness.Oracle.Spec).
	Again string
}

// Options are what some scenarios need beyond a client.
type Options struct {
	// Chaos acts for chaos steps (nil: scenarios with chaos steps fail to run).
	Chaos chaos.Environment
	// Seed drives every random choice of the chaos steps.
	Seed uint64
	// Pods adapts the pods to the cluster's nodes (real kubelets run a local image).
	Pods pods.Target
	// ChaosMesh, when set, has Chaos Mesh carry out the pod chaos
	// (chaos.Injector's ChaosMesh).
	ChaosMesh dynamic.Interface
	// RunID labels the run's namespace (kube.RunLabel): what jobconform
	// run finds its leftovers on a cluster it did not create by.
	RunID string
	// Nodes names what plays the nodes ("kubelet" for real kubelets; "" for
	// kwok or a cluster whose nodes the harness did not choose), for reports.
	Nodes string
	// Gates names the feature gates the cluster was given beyond its
	// release's defaults ("JobManagedBy=true"), for reports.
	Gates string
	// Disruptions, when set, lists what others did to the cluster during the
	// run (a drill's component swaps), read once the steps are done: the
	// checks treat them as the chaos suite's restarts, and the report shows them.
	Disruptions func() []chaos.Record
	// Metrics reads the /metrics of the controller under test, for the
	// scenarios that judge its counters (nil, or an error wrapping
	// ErrNoMetrics: they are not judged, and the run says why).
	Metrics func(context.Context) (string, error)
	// Worker is the worker cluster of a dispatched controller
	// (Controller.Dispatched): where the Job's copy and its pods run.
	Worker kubernetes.Interface
	// MirrorWithin bounds how late the worker's copy's status may reach the
	// manager's Job (invariants.CheckMirror; default invariants.MirrorWithin).
	MirrorWithin time.Duration
	// PrepareNamespace, when set, readies a scenario's namespace for the
	// controller once it exists (on both clusters of a dispatched one): a
	// queueing controller's LocalQueue.
	PrepareNamespace func(ctx context.Context, ns string) error
	// AuditLog is the apiserver's audit log of the controllers' requests
	// (cluster.Cluster.AuditLog; "": none kept): the requests the
	// differential verdict compares are read from it (requests.go).
	AuditLog string
}

// Unexplained tells whether the run failed for a reason no known upstream
// bug of its release explains: a harness error, a differential, a step or
// an invariant broken without a bug named. Such a built-in run may be a
// starved await or a flake, and is run again before it is given up as the
// oracle.
func (r *Result) Unexplained() bool {
	if r.Err != nil || len(oracle.Failing(r.Differences)) > 0 {
		return true
	}
	for _, s := range r.Steps {
		if !s.OK && !s.Skipped && !s.KnownBug {
			return true
		}
	}
	for _, inv := range r.Invariants {
		if len(inv.Violations) > 0 && inv.KnownBug == "" {
			return true
		}
	}
	return false
}

// KnownBugs are the IDs of the known upstream bugs that explain r's
// failures (scenarios/bugs), nil when r broke nothing or any of its
// failures is unexplained.
func (r *Result) KnownBugs() []string {
	if r.Unexplained() {
		return nil
	}
	var out []string
	for _, f := range r.Failures() {
		for _, id := range bugs.In(f) {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// ByMachine tells whether r failed, and only in ways a busy machine can
// cause in a correct controller's run: an await that timed out, an upper
// bound in time (a Late invariant), a difference from the built-in's run.
func (r *Result) ByMachine() bool {
	return r.Unexplained() && r.brokenOnlyBy(true)
}

// OnlyDiffers tells whether r failed by differences from the built-in's
// run alone: every step and invariant held.
func (r *Result) OnlyDiffers() bool {
	return len(oracle.Failing(r.Differences)) > 0 && r.brokenOnlyBy(false)
}

// brokenOnlyBy tells whether r had no harness error and broke no step or
// invariant but those a known bug explains — and, with timing, timing
// verdicts (awaits timed out, Late invariants).
func (r *Result) brokenOnlyBy(timing bool) bool {
	if r.Err != nil {
		return false
	}
	for _, s := range r.Steps {
		if !s.OK && !s.Skipped && !s.KnownBug && !(timing && s.TimedOut) {
			return false
		}
	}
	for _, inv := range r.Invariants {
		if len(inv.Violations) > 0 && inv.KnownBug == "" && !(timing && invariants.IsLate(inv.Invariant)) {
			return false
		}
	}
	return true
}

// Failures lists every broken step and invariant, for a verdict and a report.
func (r *Result) Failures() []string {
	var out []string
	if r.Err != nil {
		out = append(out, "harness error: "+r.Err.Error())
	}
	starved := ""
	if note := r.Starvation.Note(); note != "" {
		starved = " [" + note + "]"
	}
	for _, s := range r.Steps {
		if !s.OK && !s.Skipped {
			msg := fmt.Sprintf("step %d (%s): %s", s.Index, s.What, s.Message)
			if s.TimedOut {
				msg += starved
			}
			out = append(out, msg)
		}
	}
	for _, inv := range r.Invariants {
		late := invariants.IsLate(inv.Invariant)
		for _, v := range inv.Violations {
			msg := "invariant " + v.String()
			if late {
				msg += starved
			}
			out = append(out, msg)
		}
	}
	for _, d := range oracle.Failing(r.Differences) {
		out = append(out, "differential "+d.String())
	}
	return out
}

// Run runs s against c on the cluster client reaches, whose Kubernetes release is version.
func Run(ctx context.Context, client kubernetes.Interface, version string, s *scenarios.Scenario, c Controller) *Result {
	return RunWith(ctx, client, version, s, c, Options{})
}

// Inapplicable says why scenario s makes no promise for controller c at
// Kubernetes version ("" when it does): suites that bring up a cluster per
// scenario ask before they do.
func Inapplicable(s *scenarios.Scenario, c Controller, version string) (string, error) {
	if !s.ForController(c.Name) {
		return fmt.Sprintf("scenario is for the %s controller(s) only", strings.Join(s.Controllers, ", ")), nil
	}
	ok, err := scenarios.Applies(s.Versions, version)
	if err != nil {
		return "", err
	}
	if !ok {
		return fmt.Sprintf("scenario holds for Kubernetes %s, the cluster runs %s", s.Versions, version), nil
	}
	return "", nil
}

// RunWith is Run with options (chaos).
func RunWith(ctx context.Context, client kubernetes.Interface, version string, s *scenarios.Scenario, c Controller, o Options) *Result {
	r := &Result{Scenario: s.Name, Controller: c.Name, Version: version, Start: time.Now(), Seed: o.Seed, Faults: c.Faults, Nodes: o.Nodes, Gates: o.Gates}
	defer func() { r.End = time.Now() }()
	if s.HasChaos() && o.Chaos == nil && s.ForController(c.Name) {
		r.Err = fmt.Errorf("scenario %s injects chaos: run it from the chaos suite (suites/chaos)", s.Name)
		return r
	}
	if r.Skipped, r.Err = applies(s, c, version, o); r.Skipped != "" || r.Err != nil {
		return r
	}
	// The counters are read first, before the scenario's time starts: the
	// wait for the others' Jobs to finish is not the scenario's.
	var metrics *metricsRun
	var metricsSkip string
	if s.Metrics {
		var err error
		if metrics, metricsSkip, err = startMetrics(ctx, client, c, o.Metrics); err != nil {
			r.Err = err
			return r
		}
	}
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(s.Timeout.Duration, 3*time.Minute))
	defer cancel()
	meter := startMeter(ctx, client)
	defer meter.Stop()

	auditFrom := apiaudit.Size(o.AuditLog)
	ns, err := kube.CreateNamespace(ctx, client, namespacePrefix(c.Name), o.RunID)
	if err != nil {
		r.Err = err
		return r
	}
	r.Namespace = ns
	defer deleteNamespace(client, ns, slices.Contains(s.Job.Template.Finalizers, kube.HoldFinalizer))
	rec, podClient, stopRecording, err := startRecording(ctx, client, c, o, ns)
	if err != nil {
		r.Err = err
		return r
	}
	defer func() { stopRecording(); r.Timeline = rec.Entries() }()
	defer liftRefusal(s, podClient, ns)()
	if o.PrepareNamespace != nil {
		if err := o.PrepareNamespace(ctx, ns); err != nil {
			r.Err = fmt.Errorf("prepare namespace %s for %s: %w", ns, c.Name, err)
			return r
		}
	}

	job, created, err := createJob(ctx, client, ns, s, c, o)
	if err != nil {
		r.Err = err
		return r
	}
	if job.Spec.ManagedBy != nil && created.Spec.ManagedBy == nil {
		// The apiserver dropped the field: the built-in controller takes the
		// Job, so no verdict here would be on the controller under test.
		_ = client.BatchV1().Jobs(ns).Delete(ctx, JobName, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
		r.Skipped = fmt.Sprintf("Kubernetes %s dropped spec.managedBy (its JobManagedBy feature gate is off, as by default before 1.32): "+
			"%s cannot be judged on this cluster; start it with --feature-gates JobManagedBy=true", version, c.Name)
		return r
	}
	inj := startChaos(o, ns)
	if inj != nil {
		defer closeChaos(inj, r)
	}
	copyName := copyNameOf(c)
	current := created.UID
	r.Steps = stepper{client: client, pods: podClient, ns: ns, copy: copyName, rec: rec, inj: inj, version: version, builtIn: c.ManagedBy == nil, controller: c, finalizer: c.Finalizer,
		job: job, current: &current}.runSteps(ctx, s.Steps)
	if r.Skipped = recreateSkipped(r.Steps); r.Skipped != "" {
		return r // as when the first Job lost its spec.managedBy: nothing to judge
	}
	if metricsSkip != "" {
		r.Steps = append(r.Steps, StepResult{Index: len(r.Steps), What: "metrics", Skipped: true, Message: metricsSkip, Time: time.Now()})
	}
	judge(ctx, r, judged{client: client, version: version, s: s, c: c, o: o, ns: ns, copyName: copyName, rec: rec, inj: inj, metrics: metrics, meter: meter, auditFrom: auditFrom})
	return r
}

// copyNameOf is the name the recording gives the worker's copy of a
// dispatched Job ("" for other controllers).
func copyNameOf(c Controller) string {
	if c.Dispatched {
		return JobName + recorder.WorkerSuffix
	}
	return ""
}

// judged is what the end of a run reads: the run's settings, its
// recording, its chaos and its counters.
type judged struct {
	client   kubernetes.Interface
	version  string
	s        *scenarios.Scenario
	c        Controller
	o        Options
	ns       string
	copyName string
	rec      *recorder.Recorder
	inj      *chaos.Injector
	metrics  *metricsRun
	meter    *starvation.Meter
	// auditFrom is how long the audit log was before the run began.
	auditFrom int64
}

// judge ends run r: it records on until the final state is judged
// (settle.go), then checks every invariant over the recording and
// observes it for the differential verdict.
func judge(ctx context.Context, r *Result, j judged) {
	s, c, o, rec, inj := j.s, j.c, j.o, j.rec, j.inj
	// What the invariants know of the run besides its timeline: the chaos and
	// the others' disruptions as they stand when called.
	ictxNow := func() invariants.Context {
		var policyOff []timeline.Span
		var restarts []time.Time
		if inj != nil {
			policyOff = gateOffSpans(inj.Records(), "JobPodReplacementPolicy")
			restarts = restartTimes(inj.Records())
		}
		for _, d := range disruptionsSince(o, r.Start) {
			restarts = append(restarts, restartBounds(d)...)
		}
		restarts = append(restarts, refusalTimes(r.Steps)...)
		sort.Slice(restarts, func(i, j int) bool { return restarts[i].Before(restarts[j]) })
		return invariants.Context{BuiltIn: c.ManagedBy == nil, Copy: j.copyName, PolicyOff: policyOff, Restarts: restarts, StatusRefused: statusRefusals(s, r.Steps), Gaps: rec.Gaps(), Job: JobName, Version: j.version, Finalizer: c.Finalizer, ForeignManagedBy: s.ForeignManagedBy, End: time.Now(),
			ReadyWithin: s.ReadyWithin.Duration, Starved: starvedBetween(j.meter)}
	}
	settle(ctx, rec, invariants.SettleWindow, 30*time.Second)
	if c.Dispatched {
		awaitMirror(ctx, rec, ictxNow, cmp.Or(o.MirrorWithin, invariants.MirrorWithin))
	}
	awaitOwedEvents(ctx, rec, ictxNow)
	r.TailPending, r.TailWait = awaitTail(ctx, rec, ictxNow)
	r.Chaos = disruptionsSince(o, r.Start)
	ictx := ictxNow()
	if j.metrics != nil {
		var err error
		if ictx.Metrics, err = j.metrics.finish(ctx); err != nil {
			r.Err = fmt.Errorf("metrics after the run: %w", err)
		}
	}
	judging := time.Now()
	judgingCPU, _ := process.SelfUsage()
	entries := rec.Entries()
	r.Invariants = invariants.CheckAll(ictx, entries)
	r.Observation = oracle.ObserveWith(entries, JobName, c.Finalizer, ictx.Gaps)
	r.Observation.Controller, r.Observation.Version, r.Observation.Nodes, r.Observation.Gates = c.Name, j.version, o.Nodes, o.Gates
	r.Observation.Scenario = oracle.Fingerprint(s)
	if len(r.Chaos) > 0 || len(ictx.Restarts) > 0 || (j.inj != nil && len(j.inj.Records()) > 0) {
		// A disruption's own time (chaos, a restart, a lost node) differs by
		// controller and by run: what follows it is not timed. The run's
		// own chaos steps count too (their records reach r.Chaos only when
		// the chaos is undone, after judging): a pod killed or a node
		// drained lands on other pods from run to run (the chaos suite's
		// seeded-soak and drain-ignored, 2026-12-07, timed by mistake).
		r.Observation.Clocks, r.Observation.Untimed = nil, "a disruption (chaos, a restart, a lost node) in the run"
	} else {
		r.Observation.Starved(ictx.Starved)
	}
	if ictx.Metrics != nil {
		r.Observation.Counters = ictx.Metrics.Rises()
	}
	if err := readRequests(r, c, o.AuditLog, j.auditFrom, j.ns); err != nil && r.Err == nil {
		r.Err = err
	}
	if c.Dispatched {
		r.Observation.Dispatched(c.Queues)
	}
	if c.Dispatched {
		var mirror invariants.Result
		mirror, r.MirrorLags = invariants.Mirror(ictx, entries, o.MirrorWithin)
		r.Invariants = append(r.Invariants, mirror, managerPods(j.client, j.ns))
	}
	j.meter.Stop()
	r.Starvation = starvation.Summarize(j.meter.Samples())
	lag, rewritten := statusLag(entries)
	r.Starvation.StatusLag, r.Starvation.EndsRewritten = lag.Seconds(), rewritten
	r.Judging = time.Since(judging)
	cpu, _ := process.SelfUsage()
	r.JudgingCPU = cpu - judgingCPU
}

// recreateSkipped is why a Job created again under its name was not run
// ("" when it was, or none was): the apiserver dropped its spec.managedBy;
// or why the controller's pod changes could not be refused (its identity
// unknown to the harness): the rest was not run either.
func recreateSkipped(steps []StepResult) string {
	for _, st := range steps {
		if st.Skipped && strings.HasPrefix(st.What, "act ") && restAfter[strings.TrimPrefix(st.What, "act ")] != "" {
			return st.Message
		}
	}
	return ""
}

// deleteNamespace deletes a run's namespace, within 30s, also when the run
// was interrupted; held: its pods may carry kube.HoldFinalizer, released
// once the namespace is terminating (no pod can be made there since).
func deleteNamespace(client kubernetes.Interface, ns string, held bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = kube.DeleteNamespace(ctx, client, ns)
	if held {
		_ = kube.ReleaseHeld(ctx, client, ns)
	}
}

// createJob creates scenario s's Job for controller c in ns, and returns
// it as asked for and as created.
func createJob(ctx context.Context, client kubernetes.Interface, ns string, s *scenarios.Scenario, c Controller, o Options) (job, created *batchv1.Job, err error) {
	if job, err = buildJob(s, c, o.Pods); err != nil {
		return nil, nil, err
	}
	if created, err = client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		return nil, nil, fmt.Errorf("create the Job: %w", err)
	}
	return job, created, nil
}

// startChaos makes the chaos steps' injector (nil without o.Chaos).
func startChaos(o Options, ns string) *chaos.Injector {
	if o.Chaos == nil {
		return nil
	}
	inj := chaos.NewInjector(o.Chaos, ns, JobName, o.Seed)
	inj.ChaosMesh, inj.PauseImage = o.ChaosMesh, o.Pods.PauseImage
	return inj
}

// closeChaos undoes the chaos: lost nodes return and gates reset even when
// the run failed.
func closeChaos(inj *chaos.Injector, r *Result) {
	cctx, ccancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer ccancel()
	if err := inj.Close(cctx); err != nil && r.Err == nil {
		r.Err = fmt.Errorf("undo chaos: %w", err)
	}
	r.Chaos = inj.Records()
}

// applies says why scenario s is not run against c here ("" when it is):
// not for this controller or release (Inapplicable), not for these nodes,
// or a promise a dispatcher cannot keep across clusters.
func applies(s *scenarios.Scenario, c Controller, version string, o Options) (string, error) {
	if skip, err := Inapplicable(s, c, version); skip != "" || err != nil {
		return skip, err
	}
	if (s.Nodes == "kwok" && o.Nodes == "kubelet") || (s.Nodes == "kubelet" && o.Nodes != "kubelet") {
		return fmt.Sprintf("scenario runs on %s nodes only", s.Nodes), nil
	}
	if o.Chaos != nil {
		if why := chaos.Unmet(o.Chaos, s.ChaosActions()...); why != "" {
			return "not applicable on this cluster: its chaos " + why, nil
		}
	}
	if !c.Dispatched {
		return "", nil
	}
	if o.Worker == nil {
		return "", fmt.Errorf("%s runs Jobs on a worker cluster, and the suite gave it none", c.Name)
	}
	if skip := NotAcrossClusters(s, c); skip != "" {
		return skip, nil
	}
	if c.Queues && ptr.Deref(s.Job.Suspend, false) {
		return fmt.Sprintf("%s starts a Job submitted suspended once it admits it (its queueing owns spec.suspend): a scenario of a Job that stays suspended makes no promise here", c.Name), nil
	}
	return "", nil
}

// startRecording records namespace ns — on both clusters for a dispatched
// controller, whose pods run on the worker (podClient) — until stop.
func startRecording(ctx context.Context, client kubernetes.Interface, c Controller, o Options, ns string) (rec *recorder.Recorder, podClient kubernetes.Interface, stop func(), err error) {
	if !c.Dispatched {
		rec, err = recorder.Start(ctx, client, ns)
		if err != nil {
			return nil, nil, nil, err
		}
		return rec, client, rec.Stop, nil
	}
	// The namespace exists on the worker before the copy does, so that
	// its recording starts before anything happens there.
	if _, err := o.Worker.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return nil, nil, nil, fmt.Errorf("create namespace %s on the worker cluster: %w", ns, err)
	}
	deleteWorkerNS := func() { deleteNamespace(o.Worker, ns, false) }
	if rec, err = recorder.StartMirrored(ctx, client, o.Worker, ns); err != nil {
		deleteWorkerNS()
		return nil, nil, nil, err
	}
	return rec, o.Worker, func() { rec.Stop(); deleteWorkerNS() }, nil
}

// namespacePrefix makes a DNS label out of a controller name such as
// "example.com/my-controller".
func namespacePrefix(controller string) string {
	var b strings.Builder
	b.WriteString("jc-")
	for _, r := range strings.ToLower(controller) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
		if b.Len() >= 40 {
			break
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// buildJob renders the scenario's Job for controller c.
func buildJob(s *scenarios.Scenario, c Controller, target pods.Target) (*batchv1.Job, error) {
	b, err := s.Pods.Behavior()
	if err != nil {
		return nil, err
	}
	spec := s.Job.DeepCopy()
	if spec.Template.Spec.RestartPolicy == "" {
		spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	}
	b.Apply(&spec.Template)
	target.Adapt(&spec.Template)
	spec.ManagedBy = c.ManagedBy
	if s.ForeignManagedBy {
		spec.ManagedBy = ptr.To(AbsentManager)
	}
	labels := map[string]string{"jobconform.io/scenario": s.Name}
	for k, v := range c.JobLabels {
		labels[k] = v
	}
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: JobName, Labels: labels}, Spec: *spec}, nil
}
