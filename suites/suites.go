// Package suites judges a Job controller from your own Go tests, with the
// scenarios, checks and verdicts of jobconform run.
//
// A test brings up a local cluster — NewClusterProvider is one for
// sigs.k8s.io/e2e-framework (envfuncs.CreateClusterWithOpts), its nodes
// played by kwok — or uses any cluster a kubeconfig reaches. It starts the
// controller to judge (StartCommand runs yours with KUBECONFIG set;
// StartReference runs jobconform's reference controller under a managedBy
// name of your choice), or leaves it to what already runs there. Then
// Judge runs one scenario of the catalogue (Conformance) or one of your own
// (scenarios.Parse) against it and returns the Verdict: every broken step
// and invariant, a line each, and the recording of the Job and its pods.
//
// A verdict here is a run's own: the differential verdict against the
// built-in controller, the chaos scenarios and the HTML report are
// jobconform run's.
//
// The example test in this directory (example_test.go) is a controller
// team's test: e2e-framework creates the cluster and starts the controller,
// Ginkgo holds a spec per scenario.
package suites

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"k8s.io/utils/ptr"
	"sigs.k8s.io/e2e-framework/support"

	"github.com/jobconform/jobconform/internal/cluster"
	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/internal/timeline"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/catalog"
	"github.com/jobconform/jobconform/suites/internal/controllers"
	"github.com/jobconform/jobconform/suites/internal/harness"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

// Controller is a Job controller to judge.
type Controller struct {
	// Name names it in verdicts.
	Name string
	// ManagedBy is the spec.managedBy value it reconciles (KEP-4368); ""
	// for the built-in Job controller of the cluster.
	ManagedBy string
	// Finalizer is the tracking finalizer it puts on its pods (""; none:
	// the checks of finalizer tracking are off).
	Finalizer string
}

// BuiltIn is the cluster's own Job controller (kube-controller-manager).
var BuiltIn = Controller{Name: runner.BuiltIn.Name, Finalizer: runner.BuiltIn.Finalizer}

// Reference is jobconform's reference controller under its own managedBy
// name; StartReference runs it under another one.
var Reference = Controller{Name: runner.Reference.Name, ManagedBy: *runner.Reference.ManagedBy, Finalizer: runner.Reference.Finalizer}

// Scenario is one scenario: a Job, its pods' behaviour, steps and awaits.
type Scenario = scenarios.Scenario

// Timeline is the recording of a run: every change of the Job, its pods,
// the nodes and the events, in order (Verdict.Recording); Entry is one
// change of it.
type (
	Timeline = timeline.Timeline
	Entry    = timeline.Entry
)

// Conformance is the conformance suite's scenarios of jobconform's
// catalogue (those of the chaos suite need a cluster jobconform controls).
func Conformance() ([]*Scenario, error) {
	set, err := catalog.Assemble(true)
	if err != nil {
		return nil, err
	}
	return set.Conformance, nil
}

// Find is the scenario of ss named name, or nil.
func Find(ss []*Scenario, name string) *Scenario {
	for _, s := range ss {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Verdict is one scenario's run against one controller.
type Verdict struct {
	Scenario, Controller string
	// Version is the cluster's Kubernetes release (vX.Y.Z).
	Version string
	// Skipped says why the scenario makes no promise for this controller
	// at this release ("" when it ran).
	Skipped string
	// Failures are every broken step and invariant, a line each, each
	// timing verdict saying when the machine was starved meanwhile.
	Failures []string
	// Recording is every change of the Job, its pods and its events, as
	// the run saw them.
	Recording Timeline
	// Start and End bound the run.
	Start, End time.Time
}

// Passed tells whether the scenario ran and nothing broke.
func (v Verdict) Passed() bool { return v.Skipped == "" && len(v.Failures) == 0 }

// Judge runs scenario s against controller c on the cluster kubeconfig
// reaches, in a namespace of its own that it deletes afterwards, and
// judges the run. c must be running (StartCommand, StartReference, or the
// cluster's own). The pods run busybox: the cluster's nodes must be kwok's
// or able to pull it. An error is the harness's (the cluster unreachable,
// an API error), not a verdict.
func Judge(ctx context.Context, kubeconfig string, s *Scenario, c Controller) (Verdict, error) {
	client, version, err := kube.Client(kubeconfig, "")
	if err != nil {
		return Verdict{}, err
	}
	rc := runner.Controller{Name: c.Name, Finalizer: c.Finalizer}
	if c.ManagedBy != "" {
		rc.ManagedBy = ptr.To(c.ManagedBy)
	}
	v := Verdict{Scenario: s.Name, Controller: c.Name, Version: version}
	if v.Skipped, err = runner.Inapplicable(s, rc, version); err != nil || v.Skipped != "" {
		return v, err
	}
	r := runner.Run(ctx, client, version, s, rc)
	if r.Err != nil {
		return v, fmt.Errorf("scenario %s: %w", s.Name, r.Err)
	}
	v.Failures, v.Recording, v.Start, v.End = r.Failures(), r.Timeline, r.Start, r.End
	return v, nil
}

// NewClusterProvider is a local cluster as an e2e-framework cluster
// provider: a real etcd, kube-apiserver, kube-controller-manager and
// kube-scheduler of the release WithVersion names (default: jobconform's),
// built from their Go modules on first use and cached (or downloaded:
// $JOBCONFORM_BINARIES), kwok playing the nodes. Everything it starts
// binds 127.0.0.1 and ends with Destroy.
func NewClusterProvider() support.E2EClusterProviderWithLifeCycle {
	return cluster.E2EProvider()
}

// Process is a controller this package started.
type Process struct {
	stop func() error
	// Log is the file its output goes to.
	Log string
}

// Stop ends it (SIGTERM, then SIGKILL after a grace period) and whatever
// it started.
func (p *Process) Stop() error { return p.stop() }

// StartCommand starts your controller with a shell command, KUBECONFIG set
// to kubeconfig, its output in logFile; an error when it exits within its
// first seconds.
func StartCommand(ctx context.Context, kubeconfig, command, logFile string) (*Process, error) {
	p, err := harness.StartCommand(ctx, kubeconfig, command, logFile)
	if err != nil {
		return nil, err
	}
	return &Process{stop: func() error { return p.Stop(10 * time.Second) }, Log: logFile}, nil
}

// StartReference builds jobconform's reference controller into dir (with
// the go command: the jobconform module must be in your build list) and
// starts it against kubeconfig, reconciling the Jobs whose spec.managedBy
// is managedBy ("": Reference's own), until it serves its health check.
func StartReference(ctx context.Context, kubeconfig, managedBy, dir string) (*Process, error) {
	bin, err := controllers.BuildReference(ctx, dir)
	if err != nil {
		return nil, err
	}
	ref := &controllers.Reference{Binary: bin, Kubeconfig: kubeconfig, LogDir: filepath.Join(dir, "logs"), Name: managedBy}
	if err := ref.Start(ctx); err != nil {
		_ = ref.Stop()
		return nil, err
	}
	return &Process{stop: ref.Stop, Log: ref.LogPath()}, nil
}
