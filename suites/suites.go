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
// A controller other than the built-in is also held to the differential
// verdict: Judge runs the scenario against the cluster's built-in Job
// controller first, on the same cluster, and compares what a user can
// observe (scenarios/oracle); WithOracleFrom reads the built-in's runs an
// earlier jobconform run kept instead, WithoutOracle skips it (the
// verdict says it was not compared). The chaos scenarios and the HTML
// report are jobconform run's.
//
// The example test in this directory (example_test.go) is a controller
// team's test: e2e-framework creates the cluster and starts the controller,
// Ginkgo holds a spec per scenario.
package suites

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/e2e-framework/support"

	"github.com/jobconform/jobconform/internal/cluster"
	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/timeline"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/catalog"
	"github.com/jobconform/jobconform/scenarios/oracle"
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
	// Compared tells whether the run was compared with the built-in's (the
	// differential verdict); Differences are that comparison's, a line
	// each (those not allowed are among Failures too), and OracleNote
	// says why it was not compared. Untimed says why a compared run's
	// delays after their causes were not compared ("": they were; they
	// are only against a built-in that ran twice, WithOracleTwice).
	Compared    bool
	Differences []string
	OracleNote  string
	Untimed     string
	// Again says why this verdict is that of a second run: the first
	// failed only by timing while the machine was starved, or only by
	// differences from the built-in's run ("": the first run's verdict).
	Again string
}

// JudgeOption changes how Judge judges.
type JudgeOption func(*judging)

type judging struct {
	oracleOff, oracleTwice bool
	oracleFrom             string
	gates                  string
}

// WithGates names the feature gates the cluster was given beyond its
// release's defaults ("JobManagedBy=true,…"): the run is recorded with
// them, and a kept run of the built-in (WithOracleFrom) serves only a run
// on a cluster of the same gates, as in the suites. The node kind is read
// from the cluster itself.
func WithGates(gates map[string]bool) JudgeOption {
	return func(j *judging) { j.gates = options.FormatGates(gates) }
}

// WithOracleFrom takes the built-in's runs from dir, the oracle directory
// an earlier jobconform run kept (<artifacts>/<release>/oracle), instead
// of running the built-in: a run of another release or other nodes, or of
// no such scenario, is not compared, and the verdict says why.
func WithOracleFrom(dir string) JudgeOption { return func(j *judging) { j.oracleFrom = dir } }

// WithOracleTwice runs the built-in twice for the comparison, as explore
// and --oracle-twice do: what its two runs differ in is the scenario's
// noise, not compared, and the delays of the run's pods and conditions
// after their causes are compared with the built-in's (once, they are not:
// Verdict.Untimed). Without effect with WithOracleFrom.
func WithOracleTwice() JudgeOption { return func(j *judging) { j.oracleTwice = true } }

// WithoutOracle skips the differential verdict (Verdict.OracleNote says so).
func WithoutOracle() JudgeOption { return func(j *judging) { j.oracleOff = true } }

// Passed tells whether the scenario ran and nothing broke.
func (v Verdict) Passed() bool { return v.Skipped == "" && len(v.Failures) == 0 }

// Judge runs scenario s against controller c on the cluster kubeconfig
// reaches, in a namespace of its own that it deletes afterwards, and
// judges the run, a controller other than the built-in also against the
// built-in's run of s (the package's doc says how). c must be running
// (StartCommand, StartReference, or the cluster's own). The pods run
// busybox: the cluster's nodes must be kwok's or able to pull it. An error is the harness's (the cluster unreachable,
// an API error), not a verdict.
func Judge(ctx context.Context, kubeconfig string, s *Scenario, c Controller, opts ...JudgeOption) (Verdict, error) {
	var j judging
	for _, o := range opts {
		o(&j)
	}
	if j.oracleFrom != "" {
		// Before anything: a wrong directory wastes no run.
		if fi, err := os.Stat(j.oracleFrom); err != nil || !fi.IsDir() {
			return Verdict{}, fmt.Errorf("WithOracleFrom(%q): give the oracle directory of an earlier jobconform run (<artifacts>/<release>/oracle)", j.oracleFrom)
		}
	}
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
	nodes, err := harness.NodeKind(ctx, client)
	if err != nil {
		return v, err
	}
	ro := runner.Options{Nodes: nodes, Gates: j.gates}
	o := judgeOracle{cleanup: func() {}}
	if rc.Name != runner.BuiltIn.Name {
		if o, err = j.oracle(client, version, ro); err != nil {
			return v, err
		}
	}
	defer o.cleanup()
	// As in the suites (harness.Oracle.Spec): a run that failed only by
	// timing on a starved machine, or only by differences from the
	// built-in, is run again and the verdict is the second run's (Again).
	run := func() *runner.Result { return runner.RunWith(ctx, client, version, s, rc, ro) }
	r, _, err := o.Spec(ctx, s, rc, run, run)
	if r.Err != nil {
		return v, fmt.Errorf("scenario %s: %w", s.Name, r.Err)
	}
	if err != nil {
		return v, err
	}
	if rc.Name != runner.BuiltIn.Name {
		v.Compared, v.OracleNote, v.Untimed = r.Compared, r.OracleNote, r.Untimed
		for _, d := range r.Differences {
			v.Differences = append(v.Differences, d.String())
		}
	}
	v.Failures, v.Recording, v.Start, v.End, v.Again = r.Failures(), r.Timeline, r.Start, r.End, r.Again
	return v, nil
}

// judgeOracle is Judge's differential verdict, and what it leaves to remove.
type judgeOracle struct {
	*harness.Oracle
	cleanup func()
}

// oracle is the differential verdict of one Judge: the built-in's run made
// on the same cluster, kept in a directory of its own, or read from an
// earlier run's.
func (j judging) oracle(client kubernetes.Interface, version string, ro runner.Options) (judgeOracle, error) {
	o := &harness.Oracle{Off: j.oracleOff, Twice: j.oracleTwice}
	if j.oracleFrom != "" {
		o.From = &oracle.Store{Dir: j.oracleFrom}
		return judgeOracle{o, func() {}}, nil
	}
	dir, err := os.MkdirTemp("", "jobconform-judge-oracle-")
	if err != nil {
		return judgeOracle{}, err
	}
	o.Store = oracle.Store{Dir: dir}
	o.RunBuiltIn = func(ctx context.Context, s *scenarios.Scenario) *runner.Result {
		return runner.RunWith(ctx, client, version, s, runner.BuiltIn, ro)
	}
	return judgeOracle{o, func() { _ = os.RemoveAll(dir) }}, nil
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
