// Package runner runs one scenario against one Job controller on a cluster:
// it creates the Job in a fresh namespace, records everything, walks the
// steps, lets the cluster settle and checks every invariant over the timeline.
package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/chaos"
	"github.com/jobconform/jobconform/controller"
	"github.com/jobconform/jobconform/controller/dispatch"
	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/internal/process"
	"github.com/jobconform/jobconform/internal/recorder"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/bugs"
	"github.com/jobconform/jobconform/scenarios/invariants"
	"github.com/jobconform/jobconform/scenarios/oracle"
	"github.com/jobconform/jobconform/scenarios/pods"
	"github.com/jobconform/jobconform/scenarios/timeline"
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
var BuiltIn = Controller{Name: "builtin", Finalizer: batchv1.JobTrackingFinalizer}

// Reference is jobconform's reference controller.
var Reference = Controller{Name: "reference", ManagedBy: ptr.To(controller.DefaultName), Finalizer: controller.TrackingFinalizer}

// StepResult is what happened at one step.
type StepResult struct {
	Index   int
	What    string
	OK      bool
	Skipped bool
	Message string
	Time    time.Time
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
	// controller's is compared with. Differences are that comparison's, and
	// OracleNote says why a run was not compared ("" when it was, or
	// nothing asked for it).
	Observation *oracle.Observation
	Differences []oracle.Difference
	OracleNote  string
}

// Options are what some scenarios need beyond a client.
type Options struct {
	// Chaos acts for chaos steps (nil: scenarios with chaos steps fail to run).
	Chaos chaos.Environment
	// Seed drives every random choice of the chaos steps.
	Seed uint64
	// Pods adapts the pods to the cluster's nodes (real kubelets run a local image).
	Pods pods.Target
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
}

// Failures lists every broken step and invariant, for a verdict and a report.
func (r *Result) Failures() []string {
	var out []string
	if r.Err != nil {
		out = append(out, "harness error: "+r.Err.Error())
	}
	for _, s := range r.Steps {
		if !s.OK && !s.Skipped {
			out = append(out, fmt.Sprintf("step %d (%s): %s", s.Index, s.What, s.Message))
		}
	}
	for _, inv := range r.Invariants {
		for _, v := range inv.Violations {
			out = append(out, "invariant "+v.String())
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
	if r.Skipped, r.Err = Inapplicable(s, c, version); r.Skipped != "" || r.Err != nil {
		return r
	}
	if (s.Nodes == "kwok" && o.Nodes == "kubelet") || (s.Nodes == "kubelet" && o.Nodes != "kubelet") {
		r.Skipped = fmt.Sprintf("scenario runs on %s nodes only", s.Nodes)
		return r
	}
	if c.Dispatched {
		if o.Worker == nil {
			r.Err = fmt.Errorf("%s runs Jobs on a worker cluster, and the suite gave it none", c.Name)
			return r
		}
		if r.Skipped = NotAcrossClusters(s, c); r.Skipped != "" {
			return r
		}
		if c.Queues && ptr.Deref(s.Job.Suspend, false) {
			r.Skipped = fmt.Sprintf("%s starts a Job submitted suspended once it admits it (its queueing owns spec.suspend): a scenario of a Job that stays suspended makes no promise here", c.Name)
			return r
		}
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
	timeout := s.Timeout.Duration
	if timeout == 0 {
		timeout = 3 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	ns, err := kube.CreateNamespace(ctx, client, namespacePrefix(c.Name))
	if err != nil {
		r.Err = err
		return r
	}
	r.Namespace = ns
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer ccancel()
		_ = kube.DeleteNamespace(cctx, client, ns)
	}()
	podClient := client // where the pods run
	var rec *recorder.Recorder
	if c.Dispatched {
		// The namespace exists on the worker before the copy does, so that
		// its recording starts before anything happens there.
		if _, err := o.Worker.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			r.Err = fmt.Errorf("create namespace %s on the worker cluster: %w", ns, err)
			return r
		}
		defer func() {
			cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer ccancel()
			_ = kube.DeleteNamespace(cctx, o.Worker, ns)
		}()
		podClient = o.Worker
		rec, err = recorder.StartMirrored(ctx, client, o.Worker, ns)
	} else {
		rec, err = recorder.Start(ctx, client, ns)
	}
	if err != nil {
		r.Err = err
		return r
	}
	defer func() { rec.Stop(); r.Timeline = rec.Entries() }()
	if o.PrepareNamespace != nil {
		if err := o.PrepareNamespace(ctx, ns); err != nil {
			r.Err = fmt.Errorf("prepare namespace %s for %s: %w", ns, c.Name, err)
			return r
		}
	}

	job, err := buildJob(s, c, o.Pods)
	if err != nil {
		r.Err = err
		return r
	}
	created, err := client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{})
	if err != nil {
		r.Err = fmt.Errorf("create the Job: %w", err)
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
	var inj *chaos.Injector
	if o.Chaos != nil {
		inj = chaos.NewInjector(o.Chaos, ns, JobName, o.Seed)
		defer func() {
			// Lost nodes return and gates reset even when the run failed.
			cctx, ccancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer ccancel()
			if err := inj.Close(cctx); err != nil && r.Err == nil {
				r.Err = fmt.Errorf("undo chaos: %w", err)
			}
			r.Chaos = inj.Records()
		}()
	}
	var copyName string
	if c.Dispatched {
		copyName = JobName + recorder.WorkerSuffix
	}
	current := created.UID
	r.Steps = stepper{client: client, pods: podClient, ns: ns, copy: copyName, rec: rec, inj: inj, version: version, builtIn: c.ManagedBy == nil, controller: c, finalizer: c.Finalizer,
		job: job, current: &current}.runSteps(ctx, s.Steps)
	for _, st := range r.Steps {
		if st.Skipped && st.What == "act "+scenarios.ActRecreateJob {
			// As when the first Job lost its spec.managedBy: nothing to judge.
			r.Skipped = st.Message
			return r
		}
	}
	if metricsSkip != "" {
		r.Steps = append(r.Steps, StepResult{Index: len(r.Steps), What: "metrics", Skipped: true, Message: metricsSkip, Time: time.Now()})
	}
	// What the invariants know of the run besides its timeline: the chaos and
	// the others' disruptions as they stand when called.
	ictxNow := func() invariants.Context {
		var policyOff []invariants.Span
		var restarts []time.Time
		if inj != nil {
			policyOff = gateOffSpans(inj.Records(), "JobPodReplacementPolicy")
			restarts = restartTimes(inj.Records())
		}
		for _, d := range disruptionsSince(o, r.Start) {
			restarts = append(restarts, restartBounds(d)...)
		}
		sort.Slice(restarts, func(i, j int) bool { return restarts[i].Before(restarts[j]) })
		return invariants.Context{BuiltIn: c.ManagedBy == nil, Copy: copyName, PolicyOff: policyOff, Restarts: restarts, Gaps: rec.Gaps(), Job: JobName, Version: version, Finalizer: c.Finalizer, ForeignManagedBy: s.ForeignManagedBy, End: time.Now(),
			ReadyWithin: s.ReadyWithin.Duration}
	}
	settle(ctx, rec, invariants.SettleWindow, 30*time.Second)
	awaitOwedEvents(ctx, rec, ictxNow)
	r.TailPending, r.TailWait = awaitTail(ctx, rec, ictxNow)
	r.Chaos = disruptionsSince(o, r.Start)
	ictx := ictxNow()
	if metrics != nil {
		if ictx.Metrics, err = metrics.finish(ctx); err != nil {
			r.Err = fmt.Errorf("metrics after the run: %w", err)
		}
	}
	judging := time.Now()
	judgingCPU, _ := process.SelfUsage()
	entries := rec.Entries()
	r.Invariants = invariants.CheckAll(ictx, entries)
	if !c.Dispatched {
		r.Observation = oracle.Observe(entries, JobName, c.Finalizer)
		r.Observation.Controller, r.Observation.Version = c.Name, version
	}
	if c.Dispatched {
		var mirror invariants.Result
		mirror, r.MirrorLags = invariants.Mirror(ictx, entries, o.MirrorWithin)
		r.Invariants = append(r.Invariants, mirror, managerPods(client, ns))
	}
	r.Judging = time.Since(judging)
	cpu, _ := process.SelfUsage()
	r.JudgingCPU = cpu - judgingCPU
	return r
}

// NotAcrossClusters says why scenario s makes no promise dispatcher c can
// keep across clusters ("" when it does): each reason is by design of the
// multi-cluster mode or of the dispatcher, stated in the verdict, never a
// silent skip.
func NotAcrossClusters(s *scenarios.Scenario, c Controller) string {
	switch {
	case s.HasChaos():
		return "multi-cluster runs: chaos across a manager and a worker cluster is not built yet (issue #31)"
	case s.Metrics:
		return "multi-cluster runs: the scenario judges a Job controller's /metrics; a dispatcher serves none of the Job controller's counters"
	case s.ForeignManagedBy:
		return "multi-cluster runs: the scenario is about a Job whose manager does not run; a dispatched Job's does"
	case slices.ContainsFunc(s.Steps, func(st scenarios.Step) bool { return st.Act != nil && st.Act.Kind == scenarios.ActRecreateJob }):
		return "multi-cluster runs: a Job deleted and created again under its name is not told apart from the one before it on the worker cluster yet (the recording's copies of the two share a name; issue #30)"
	}
	switch c.Name {
	case Dispatcher.Name:
		return notAcrossClustersReference(s)
	case MultiKueue.Name:
		return notAcrossClustersKueue(s)
	}
	return "" // what the two dispatchers above leave out by design, others are judged on
}

// notAcrossClustersKueue is what Kueue's MultiKueue leaves to Kueue's own
// contract (read in v0.17.0's source, seen in its runs): a Job in a queue is
// Kueue's to start, stop and size once admitted.
func notAcrossClustersKueue(s *scenarios.Scenario) string {
	for _, st := range s.Steps {
		if st.Act == nil || st.Act.Refused {
			continue
		}
		switch st.Act.Kind {
		case scenarios.ActSuspend:
			return "MultiKueue: Kueue owns spec.suspend of a Job in its queue and starts an admitted Job its user suspends again (jobframework reconciler, \"Job admitted, unsuspending\", Kueue v0.17.0): a Kueue user stops a Job by deactivating its Workload; the suspension this scenario judges does not happen, by design"
		case scenarios.ActScale:
			if ptr.Deref(s.Job.Parallelism, 1) == 0 {
				continue // no pod runs yet: Kueue queues the resized Job again before any does (passes, judged)
			}
			return "MultiKueue: a Job's parallelism is part of its Workload's admission; Kueue stops a running Job whose Workload no longer matches it and queues it again (jobframework reconciler, \"job with no matching workload, suspending\", Kueue v0.17.0): resizing a running Job is Kueue's elastic Jobs (feature gate ElasticJobsViaWorkloadSlices, alpha, off), by design"
		}
	}
	return ""
}

// notAcrossClustersReference is what the reference dispatcher leaves out by
// design: it copies a Job once and deletes the copy one way.
func notAcrossClustersReference(s *scenarios.Scenario) string {
	for _, st := range s.Steps {
		if st.Act == nil {
			continue
		}
		switch st.Act.Kind {
		case scenarios.ActSuspend, scenarios.ActResume, scenarios.ActScale, scenarios.ActPatchTemplate:
			return "multi-cluster runs: the scenario changes the Job's spec once it runs (" + st.Act.Kind + "); the reference dispatcher copies a Job to its worker once, so a later change to the manager's Job does not reach the running copy, by design"
		case scenarios.ActDeleteJob:
			return "multi-cluster runs: the scenario deletes the Job with a propagation policy; the reference dispatcher deletes the worker's copy in the background whatever the policy, by design"
		}
	}
	return ""
}

// managerPods: a dispatched Job gets no pod on the manager cluster — its
// built-in Job controller leaves a Job managed by another alone (KEP-4368).
// Judged once the run is over, from the manager's namespace.
func managerPods(client kubernetes.Interface, ns string) invariants.Result {
	res := invariants.Result{Invariant: "delegation-manager-pods", Applicable: true}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		res.Violations = append(res.Violations, invariants.Violation{Invariant: res.Invariant, Time: time.Now(),
			Message: "the harness could not list the manager's pods (no verdict on the controller): " + err.Error()})
		return res
	}
	for _, p := range list.Items {
		if kube.IsOwnedBy(&p, JobName) {
			res.Violations = append(res.Violations, invariants.Violation{Invariant: res.Invariant, Time: p.CreationTimestamp.Time,
				Message: fmt.Sprintf("pod %s was created on the manager cluster for a Job a dispatcher runs elsewhere", p.Name)})
		}
	}
	return res
}

// disruptionsSince are what others did to the cluster (o.Disruptions) from
// start on, and just before: a change that ended within RestartGrace of the
// start may still hold the controller back in the run (seen in a drill: the
// reference controller, its watches broken by the apiserver's replacement,
// first acted on a Job 19s after the flight created it).
func disruptionsSince(o Options, start time.Time) []chaos.Record {
	if o.Disruptions == nil {
		return nil
	}
	var out []chaos.Record
	for _, d := range o.Disruptions() {
		b := restartBounds(d)
		if b[len(b)-1].After(start.Add(-invariants.RestartGrace)) {
			out = append(out, d)
		}
	}
	return out
}

// restartTimes are the bounds (restartBounds) of the chaos actions that
// restarted the controller under test (a crash, a restart, other feature
// gates) or the apiserver it works through.
func restartTimes(records []chaos.Record) []time.Time {
	var out []time.Time
	var down time.Time // a controllerStop's, until its controllerStart
	for _, r := range records {
		a := r.Action
		if a.ControllerRestart != nil || a.FeatureGates != nil || a.APIServerRestart != nil || a.ControllerStop != nil || a.ControllerStart != nil {
			out = append(out, restartBounds(r)...)
		}
		switch {
		case a.ControllerStop != nil && a.ControllerStop.For.Duration == 0:
			down = r.Start
		case a.ControllerStart != nil && !down.IsZero():
			// The whole time down is disturbed, however long.
			for t := down.Add(invariants.RestartGrace / 2); t.Before(r.Start); t = t.Add(invariants.RestartGrace / 2) {
				out = append(out, t)
			}
			down = time.Time{}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// restartBounds are a restart's start and, when later, its end: the checks
// forgive lags for RestartGrace after a restart, and a controller's watches
// back off from when the apiserver is back, not from when it went away
// (seen in a drill: the reference controller's pod informer blind for 57s
// after the apiserver's replacement had ended). An apiserver's restart adds
// a bound RestartGrace after its end: client-go's reflector may wait twice
// before it relists, retrying the broken watch and then the list, each wait
// up to RestartGrace (seen in ten make runs: the reference controller's pod
// informer relisted 84s, its Job informer 80s, after the apiserver was back).
func restartBounds(r chaos.Record) []time.Time {
	out := []time.Time{r.Start}
	end := r.Start
	if r.Time.After(r.Start) {
		end = r.Time
		out = append(out, end)
	}
	if r.Action.APIServerRestart != nil {
		out = append(out, end.Add(invariants.RestartGrace))
	}
	return out
}

// gateOffSpans are the spans in which chaos steps had switched gate off in
// the controller under test: from the start of the restart that switched it
// off to the end of the one that switched it on again.
func gateOffSpans(records []chaos.Record, gate string) []invariants.Span {
	var out []invariants.Span
	var off *invariants.Span
	for _, r := range records {
		on, set := r.Action.FeatureGates[gate]
		if r.Action.FeatureGates != nil && len(r.Action.FeatureGates) == 0 {
			on, set = true, true // back to the defaults
		}
		switch {
		case !set:
		case !on && off == nil:
			off = &invariants.Span{From: r.Start}
		case on && off != nil:
			off.To = r.Time
			out = append(out, *off)
			off = nil
		}
	}
	if off != nil {
		out = append(out, *off)
	}
	return out
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

// stepper is what a scenario's steps act on and wait with.
type stepper struct {
	// client reaches the Job; pods the cluster its pods run on (a
	// dispatched Job's worker, else the same).
	client, pods kubernetes.Interface
	ns           string
	rec          *recorder.Recorder
	inj          *chaos.Injector
	// version is the cluster's release; builtIn tells whether the controller
	// under test is the built-in one, whose release's known bugs a failed
	// step names.
	version string
	builtIn bool
	// controller is the controller under test, whose own known bugs (at
	// its release) a failed step names too.
	controller Controller
	// finalizer is the controller's pod tracking finalizer (awaitGone).
	finalizer string
	// copy is the name the recording gives the worker's copy of a
	// dispatched Job ("" for others).
	copy string
	// job is the Job as the scenario made it (recreateJob makes it again);
	// current, when set, is the UID of the Job the steps follow: the
	// latest made under JobName.
	job     *batchv1.Job
	current *types.UID
}

// follows tells whether e is of the Job the steps follow (or of its copy):
// after recreateJob, not of the Job deleted. A dispatched Job's recording
// grafts the copy's metadata, UID included, onto the manager's Job
// (recorder.StartMirrored), and no dispatched run recreates its Job
// (NotAcrossClusters): there every entry of the name is followed.
func (sp stepper) follows(e recorder.Entry) bool {
	if e.Kind != "Job" || !sp.awaited(e.Name) {
		return false
	}
	return e.Name != JobName || sp.copy != "" || sp.current == nil || *sp.current == "" || e.Job().UID == *sp.current
}

// awaited tells whether an await is met by a status of the Job named name:
// the Job's, or a dispatched Job's copy on the worker. A dispatcher copies
// the newest status it has seen, so the manager's Job may skip one the copy
// held for milliseconds (seen: FailureTarget alone for 33 ms on the worker,
// shown with Failed on the manager 1.3 s later); the steps follow the Job
// controller's progress, and how the manager's Job shows it is the mirror
// invariants' (each status of the copy, or a later one, within
// invariants.MirrorWithin; never one the copy did not have; in order).
func (sp stepper) awaited(name string) bool {
	return name == JobName || (sp.copy != "" && name == sp.copy)
}

// runSteps runs the steps in order until one fails.
func (sp stepper) runSteps(ctx context.Context, steps []scenarios.Step) []StepResult {
	rec := sp.rec
	var out []StepResult
	// from is the first timeline entry an await may be satisfied by: the
	// previous await's match (two awaits in a row may be met by one status),
	// or, after an act or chaos, the Job's status as it stood when that began.
	// A status from before the step that changed the Job must not satisfy an
	// await of its outcome: "active 2, ready 2" after a resume was once met by
	// the Job's status from before the suspension.
	from := 0
	for i, st := range steps {
		if len(out) > 0 && out[len(out)-1].Skipped && steps[i-1].Act != nil && steps[i-1].Act.Kind == scenarios.ActRecreateJob {
			// The new Job is not the one the rest was written for.
			out = append(out, StepResult{Index: i, What: "the rest", Skipped: true, Time: time.Now(), Message: "follows a recreation that did not make the Job asked for"})
			break
		}
		if st.Await == nil && st.AwaitGone == nil {
			if e, ok := rec.Latest("Job", JobName); ok {
				from = e.Seq
			}
		}
		res, matched := sp.runStep(ctx, i, st, from)
		if matched >= 0 {
			from = matched
		}
		out = append(out, res)
		if !res.OK && !res.Skipped {
			break
		}
	}
	return out
}

// runStep runs step i; an await counts the timeline's entries from
// sequence number from on and also returns the entry that met it (-1 if none).
func (sp stepper) runStep(ctx context.Context, i int, st scenarios.Step, from int) (StepResult, int) {
	version := sp.version
	res := StepResult{Index: i, Time: time.Now()}
	switch {
	case st.Await != nil:
		res.What = "await " + describePattern(*st.Await)
	case st.AwaitGone != nil:
		res.What = "await the Job gone and its pods " + st.AwaitGone.Pods
	case st.Act != nil:
		res.What = "act " + st.Act.Kind
	default:
		res.What = "chaos " + st.Chaos.Describe()
	}
	if ok, _ := scenarios.Applies(st.Versions, version); !ok {
		res.Skipped, res.Message = true, "not a promise of Kubernetes "+version+" (step holds for "+st.Versions+")"
		return res, -1
	}
	if st.Chaos != nil {
		if err := sp.inj.Do(ctx, i, *st.Chaos); err != nil {
			res.Message = "the harness could not inject it (no verdict on the controller): " + err.Error()
			return res, -1
		}
		res.OK = true
		return res, -1
	}
	if st.Act != nil && st.Act.Kind == scenarios.ActRecreateJob {
		skip, err := sp.recreate(ctx, *st.Act)
		if err != nil {
			res.Message = err.Error()
			return res, -1
		}
		res.OK, res.Skipped, res.Message = skip == "", skip != "", skip
		return res, -1
	}
	if st.Act != nil {
		seen := len(sp.rec.Entries())
		if err := act(ctx, sp.client, sp.pods, sp.ns, *st.Act); err != nil {
			res.Message = err.Error()
			return res, -1
		}
		if st.Act.Kind == scenarios.ActFinishPod {
			// Done once a pod's end is seen (by the controller too, within a
			// watch's delay): the step after it acts on a Job whose
			// controller has the pod's end in hand (a sync queued for it).
			if _, err := sp.rec.WaitFrom(ctx, seen, 30*time.Second, "the pod's end", func(e recorder.Entry) bool {
				p := e.Pod()
				return p != nil && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed)
			}); err != nil {
				res.Message = "the pod told to finish did not end (no verdict on the controller): " + err.Error()
				return res, -1
			}
		}
		res.OK = true
		return res, -1
	}
	timeout := st.Timeout.Duration
	if timeout == 0 {
		timeout = time.Minute
	}
	if st.AwaitGone != nil {
		return sp.awaitGone(ctx, res, st, timeout)
	}
	var lastWhy string
	met, err := sp.rec.WaitFrom(ctx, from, timeout, res.What, func(e recorder.Entry) bool {
		if !sp.follows(e) || e.Type == recorder.Deleted {
			return false
		}
		ok, why := st.Await.Matches(e.Job().Status)
		if !ok {
			lastWhy = why
		}
		return ok
	})
	if err != nil {
		within := fmt.Sprintf("within %s", timeout)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= 0 {
			within = "before the scenario's own timeout ran out" // shorter than the step's
		}
		res.Message = fmt.Sprintf("not reached %s (last status: %s)", within, lastWhy) + sp.knownBug(st.KnownBugs)
		return res, -1
	}
	if hold := st.Holds.Duration; hold > 0 {
		// Met; now it must not stop matching for hold.
		broke, err := sp.rec.WaitFrom(ctx, met.Seq+1, hold, res.What+" to stop holding", func(e recorder.Entry) bool {
			if e.Kind != "Job" || e.Name != met.Name {
				return false
			}
			if e.Type == recorder.Deleted {
				lastWhy = "the Job was deleted"
				return true
			}
			ok, why := st.Await.Matches(e.Job().Status)
			lastWhy = why
			return !ok
		})
		switch {
		case err == nil:
			res.Message = fmt.Sprintf("held only %s of %s: %s", broke.Time.Sub(met.Time).Round(100*time.Millisecond), hold, lastWhy)
			return res, -1
		case ctx.Err() != nil:
			res.Message = fmt.Sprintf("the scenario's timeout ran out while the status had to hold for %s", hold)
			return res, -1
		}
		res.What += fmt.Sprintf(", holding %s", hold)
	}
	res.OK = true
	return res, met.Seq
}

// knownBug names, for a failed step, the first of the known bugs ids that
// the controller under test has at its release: the built-in's at the
// cluster's release, another's (Kueue's) at its own; or that the cluster's
// apiserver has, whichever the controller ("" if none).
func (sp stepper) knownBug(ids []string) string {
	if bug, ok := bugs.OfApiserver(ids, sp.version); ok {
		return " — " + bug.Describe(sp.version)
	}
	if sp.builtIn {
		if bug, ok := bugs.Of(ids, sp.version); ok {
			return " — " + bug.Describe(sp.version)
		}
	}
	if r := sp.controller.Release; r != "" {
		if bug, ok := bugs.OfController(ids, sp.controller.Name, r); ok {
			return " — " + bug.Describe(r)
		}
	}
	return ""
}

// awaitGone waits until the Job has been removed from the API and its pods
// are gone, or released (none deleted since the deletion began, none keeping
// the controller's tracking finalizer or a Job's reference), as the step says.
// The whole recording counts: a pod's state is its last entry.
func (sp stepper) awaitGone(ctx context.Context, res StepResult, st scenarios.Step, timeout time.Duration) (StepResult, int) {
	g := *st.AwaitGone
	pods := map[string]*corev1.Pod{}
	jobGone, deleting := false, false
	var deletedOrphans []string // released pods must stay: deleted once the Job's deletion began
	why := "the Job is not gone"
	met, err := sp.rec.WaitFrom(ctx, 0, timeout, res.What, func(e recorder.Entry) bool {
		switch {
		case e.Kind == "Job" && e.Name == JobName:
			if !sp.follows(e) {
				return false // a Job deleted before a recreateJob
			}
			jobGone = jobGone || e.Type == recorder.Deleted
			deleting = deleting || jobGone || e.Job().DeletionTimestamp != nil
		case e.Kind == "Pod" && e.Type == recorder.Deleted:
			if deleting && g.Pods == scenarios.PodsReleased {
				deletedOrphans = append(deletedOrphans, e.Name)
			}
			delete(pods, e.Name)
		case e.Kind == "Pod":
			pods[e.Name] = e.Pod()
		default:
			return false
		}
		if !jobGone {
			return false
		}
		if len(deletedOrphans) > 0 {
			why = fmt.Sprintf("the Job is gone; its pods were to stay, orphaned, but were deleted: %s", strings.Join(deletedOrphans, ", "))
			return false
		}
		var left []string
		for name, p := range pods {
			// Released: no tracking finalizer, and no Job controls it
			// (the garbage collector removed the deleted Job's reference).
			owned := slices.ContainsFunc(p.OwnerReferences, func(r metav1.OwnerReference) bool { return r.Kind == "Job" && ptr.Deref(r.Controller, false) })
			if g.Pods == scenarios.PodsGone || slices.Contains(p.Finalizers, sp.finalizer) || owned {
				left = append(left, name)
			}
		}
		sort.Strings(left)
		why = fmt.Sprintf("the Job is gone; pods not %s: %s", g.Pods, strings.Join(left, ", "))
		return len(left) == 0
	})
	if err != nil {
		res.Message = fmt.Sprintf("not reached within %s (%s)", timeout, why) + sp.knownBug(st.KnownBugs)
		return res, -1
	}
	res.OK = true
	return res, met.Seq
}

// recreate deletes the Job (Background) and creates it again at once under
// its name, as the scenario made it (delegated to AbsentManager with
// foreignManagedBy); the steps then follow the new Job. It returns why the
// rest is no promise when the apiserver dropped the spec.managedBy asked
// for (JobManagedBy off).
func (sp stepper) recreate(ctx context.Context, a scenarios.Action) (string, error) {
	if err := sp.client.BatchV1().Jobs(sp.ns).Delete(ctx, JobName, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}); err != nil {
		return "", fmt.Errorf("delete the Job: %w", err)
	}
	job := sp.job.DeepCopy()
	if a.ForeignManagedBy {
		job.Spec.ManagedBy = ptr.To(AbsentManager)
	}
	var created *batchv1.Job
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		created, err = sp.client.BatchV1().Jobs(sp.ns).Create(ctx, job, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return false, nil // the old Job is not removed yet
		}
		return err == nil, err
	})
	if err != nil {
		return "", fmt.Errorf("create the Job again: %w", err)
	}
	*sp.current = created.UID
	if job.Spec.ManagedBy != nil && created.Spec.ManagedBy == nil {
		return fmt.Sprintf("Kubernetes %s dropped spec.managedBy of the new Job (its JobManagedBy feature gate is off, as by default before 1.32): no delegation to judge", sp.version), nil
	}
	return "", nil
}

func describePattern(p scenarios.StatusPattern) string {
	var parts []string
	add := func(name string, v *int32) {
		if v != nil {
			parts = append(parts, fmt.Sprintf("%s=%d", name, *v))
		}
	}
	add("active", p.Active)
	add("ready", p.Ready)
	add("terminating", p.Terminating)
	add("succeeded", p.Succeeded)
	add("failed", p.Failed)
	if p.CompletedIndexes != nil {
		parts = append(parts, "completedIndexes="+*p.CompletedIndexes)
	}
	if p.FailedIndexes != nil {
		parts = append(parts, "failedIndexes="+*p.FailedIndexes)
	}
	for _, c := range p.Conditions {
		parts = append(parts, c)
	}
	for _, c := range p.NotConditions {
		parts = append(parts, "!"+c)
	}
	if p.Empty {
		parts = append(parts, "empty status")
	}
	return strings.Join(parts, " ")
}

// act performs one disturbance: on the Job through client, on its pods
// through podClient.
func act(ctx context.Context, client, podClient kubernetes.Interface, ns string, a scenarios.Action) error {
	if a.Refused {
		// The change must be refused as invalid; its being accepted is the failure.
		a.Refused = false
		switch err := act(ctx, client, podClient, ns, a); {
		case err == nil:
			return fmt.Errorf("the apiserver accepted the %s, which it must refuse here", a.Kind)
		case apierrors.IsInvalid(err):
			return nil
		default:
			return fmt.Errorf("the %s was refused, but not as invalid: %w", a.Kind, err)
		}
	}
	switch a.Kind {
	case scenarios.ActPatchTemplate:
		tmpl := map[string]any{}
		if len(a.Labels)+len(a.Annotations) > 0 {
			tmpl["metadata"] = map[string]any{"labels": a.Labels, "annotations": a.Annotations}
		}
		spec := map[string]any{}
		if len(a.Tolerations) > 0 {
			// A merge patch replaces the list: the template's own tolerations are kept by reading them first.
			job, err := client.BatchV1().Jobs(ns).Get(ctx, JobName, metav1.GetOptions{})
			if err != nil {
				return err
			}
			spec["tolerations"] = append(job.Spec.Template.Spec.Tolerations, a.Tolerations...)
		}
		if len(a.NodeSelector) > 0 {
			spec["nodeSelector"] = a.NodeSelector // a map: merged with the template's
		}
		if len(spec) > 0 {
			tmpl["spec"] = spec
		}
		patch := fmt.Sprintf(`{"spec":{"template":%s}}`, mustJSON(tmpl))
		_, err := client.BatchV1().Jobs(ns).Patch(ctx, JobName, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	case scenarios.ActSuspend, scenarios.ActResume:
		patch := fmt.Sprintf(`{"spec":{"suspend":%t}}`, a.Kind == scenarios.ActSuspend)
		_, err := client.BatchV1().Jobs(ns).Patch(ctx, JobName, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	case scenarios.ActDeleteJob:
		policy := a.Propagation
		if policy == "" {
			policy = metav1.DeletePropagationBackground
		}
		return client.BatchV1().Jobs(ns).Delete(ctx, JobName, metav1.DeleteOptions{PropagationPolicy: &policy})
	case scenarios.ActCreatePod:
		return createPod(ctx, podClient, ns, a.OwnedByOther, a.Index)
	case scenarios.ActScale:
		spec := map[string]any{}
		if a.Parallelism != nil {
			spec["parallelism"] = *a.Parallelism
		}
		if a.Completions != nil {
			spec["completions"] = *a.Completions
		}
		patch := fmt.Sprintf(`{"spec":%s}`, mustJSON(spec))
		_, err := client.BatchV1().Jobs(ns).Patch(ctx, JobName, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		return err
	}
	// A pod that changed between the list and a delete or an eviction (it
	// may have ended) is read again with the others: the act is done only on
	// a pod still in the state the scenario asks for.
	client = podClient
	for attempt := 1; ; attempt++ {
		targets, err := targetPods(ctx, client, ns, a)
		if err != nil {
			if attempt > 1 {
				return fmt.Errorf("%w (the pod chosen changed before the %s and none is left to act on: the scenario's pods end too soon for this machine's pace)", err, a.Kind)
			}
			return err
		}
		var errs []error
		changed := false
		for _, p := range targets {
			var err error
			switch a.Kind {
			case scenarios.ActDeletePod:
				err = chaos.DeletePodAsSeen(ctx, client, &p, a.GracePeriod)
			case scenarios.ActEvictPod:
				err = chaos.EvictPodAsSeen(ctx, client, &p)
			case scenarios.ActFinishPod:
				err = chaos.EndRun(ctx, client, &p, nil)
			case scenarios.ActSetGate:
				err = chaos.SetPodCondition(ctx, client, &p, a.Gate, a.Status)
			case scenarios.ActOrphanPod:
				err = patchPodMeta(ctx, client, &p, map[string]any{"ownerReferences": nil})
			case scenarios.ActReleasePod:
				err = releasePod(ctx, client, &p)
			}
			if apierrors.IsConflict(err) && attempt < 5 {
				changed = true
				continue
			}
			errs = append(errs, err)
		}
		if !changed {
			return errors.Join(errs...)
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
}

// targetPods: the pods of the Job the action names (by index, all, or the
// first listed): running ones, or for setGate any that is not finished.
func targetPods(ctx context.Context, client kubernetes.Interface, ns string, a scenarios.Action) ([]corev1.Pod, error) {
	list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if kube.PodTerminal(&p) != a.Finished || p.DeletionTimestamp != nil || !kube.IsOwnedBy(&p, JobName) {
			continue
		}
		// A readiness gate can be set on a pod that has not started; the
		// other actions need a running process (or, with finished, none).
		if a.Kind != scenarios.ActSetGate && !a.Finished && p.Status.Phase != corev1.PodRunning {
			continue
		}
		if a.Index != nil && p.Annotations[batchv1.JobCompletionIndexAnnotation] != fmt.Sprint(*a.Index) {
			continue
		}
		if a.Kind == scenarios.ActSetGate && !a.All && a.Index == nil && gateIs(&p, a.Gate, a.Status) {
			continue // one pod: one whose gate this changes (two setGates reach two pods)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no pod of the Job to act on", a.Kind)
	}
	if !a.All {
		out = out[:1]
	}
	return out, nil
}

// gateIs tells whether p's readiness-gate condition gate has status s.
func gateIs(p *corev1.Pod, gate corev1.PodConditionType, s corev1.ConditionStatus) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == gate {
			return c.Status == s
		}
	}
	return false
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of int32 always marshal
	}
	return string(b)
}

// patchPodMeta merges meta into pod p's metadata, as p was seen (a conflict
// if it changed since).
func patchPodMeta(ctx context.Context, client kubernetes.Interface, p *corev1.Pod, meta map[string]any) error {
	meta["resourceVersion"] = p.ResourceVersion
	patch := mustJSON(map[string]any{"metadata": meta})
	_, err := client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// releasePod removes from p the labels the Job's selector matches on.
func releasePod(ctx context.Context, client kubernetes.Interface, p *corev1.Pod) error {
	job, err := client.BatchV1().Jobs(p.Namespace).Get(ctx, JobName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	sel := job.Spec.Selector
	if sel == nil || len(sel.MatchLabels) == 0 || len(sel.MatchExpressions) > 0 {
		return fmt.Errorf("releasePod: the Job's selector %v is not one of matchLabels only; give the Job such a selector", sel)
	}
	drop := map[string]any{}
	for k := range sel.MatchLabels {
		drop[k] = nil
	}
	return patchPodMeta(ctx, client, p, map[string]any{"labels": drop})
}

// otherOwner names the ConfigMap that controls the pods createPod makes
// with ownedByOther (it must exist, or the garbage collector deletes them).
const otherOwner = "other-owner"

// createPod creates a pod from the Job's template, marked as brought by the
// scenario; ownedByOther gives it a controller other than the Job, index a
// completion index (annotation, label and hostname, as the controller sets
// them).
func createPod(ctx context.Context, client kubernetes.Interface, ns string, ownedByOther bool, index *int) error {
	job, err := client.BatchV1().Jobs(ns).Get(ctx, JobName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	tmpl := job.Spec.Template.DeepCopy()
	pod := &corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
	pod.GenerateName, pod.Namespace = JobName+"-brought-", ns
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[invariants.BroughtAnnotation] = "true"
	if index != nil {
		ix := strconv.Itoa(*index)
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		pod.Annotations[batchv1.JobCompletionIndexAnnotation], pod.Labels[batchv1.JobCompletionIndexAnnotation] = ix, ix
		pod.Spec.Hostname = JobName + "-" + ix
	}
	if ownedByOther {
		cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, otherOwner, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			cm, err = client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: otherOwner}}, metav1.CreateOptions{})
		}
		if err != nil {
			return err
		}
		pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(cm, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}
	}
	_, err = client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	return err
}
