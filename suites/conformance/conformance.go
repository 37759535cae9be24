// Package conformance is the conformance suite: every conformance scenario
// (jobconform's catalog and the user's, harness.Scenarios) against every
// controller under test, on a local cluster (default) or an existing one.
// Register adds its specs to Ginkgo's suite; the package's test and
// "jobconform run" run them. Spec names carry the controller; labels carry
// the scenario's features, so
//
//	go test ./suites/conformance -args -ginkgo.label-filter=podReplacementPolicy
//
// runs one feature. Its settings are internal/options' (harness.Settings):
// jobconform run hands them to every process in JOBCONFORM_OPTIONS; a run
// started by go test or go tool ginkgo reads the JOBCONFORM_* variables that
// docs/running.md lists beside each flag.
package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"k8s.io/client-go/kubernetes"

	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/pods"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/oracle"
	"github.com/jobconform/jobconform/suites/ginkgoreport"
	"github.com/jobconform/jobconform/suites/internal/harness"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

// Description is the suite's name in Ginkgo's reports.
const Description = "jobconform conformance"

var once sync.Once

// Register adds the suite's specs and set-up to Ginkgo's global suite, once;
// call it before RunSpecs.
func Register() { once.Do(register) }

// env is what every spec needs; set up once per process.
var env struct {
	client kubernetes.Interface
	worker kubernetes.Interface // a dispatcher's worker cluster (nil without one)
	// kubeconfig and workerKubeconfig reach the two clusters.
	kubeconfig, workerKubeconfig string
	version                      string
	pods                         pods.Target
	nodes                        string
	gates                        string
	auditLog                     string // runner.Options.AuditLog
	// oracle is the differential verdict's, shared by the processes
	// through its store.
	oracle *harness.Oracle
}

// setup is process 1's cluster and controllers, torn down in SynchronizedAfterSuite.
var setup *harness.Env

type shared struct {
	Kubeconfig       string
	WorkerKubeconfig string
	Version          string
	Pods             pods.Target
	Nodes            string
	Gates            string
	Oracle           options.Oracle
	AuditLog         string
}

// oracleDir is process 1's store of the built-in's runs when the options
// name none, removed after the suite.
var oracleDir string

func run(ctx context.Context, s *scenarios.Scenario, c runner.Controller) *runner.Result {
	return runner.RunWith(ctx, env.client, env.version, s, c, runner.Options{Pods: env.pods, Nodes: env.nodes, Gates: env.gates, Metrics: metricsOf(c), Worker: env.worker, RunID: harness.RunID(),
		AuditLog: env.auditLog, PrepareNamespace: harness.PrepareNamespace(c, env.kubeconfig, env.workerKubeconfig)})
}

func runScenario(ctx context.Context, s *scenarios.Scenario, c runner.Controller) {
	once := func() *runner.Result { return run(ctx, s, c) }
	// The built-in again for the scenario's noise (--oracle-twice): judged
	// too, after both are kept (two that end apart: racy).
	r, again, err := env.oracle.Spec(ctx, s, c, once, once)
	Expect(err).NotTo(HaveOccurred(), "keeping the built-in's run as the oracle")
	harness.Attach(r, s.Features)
	if r.Skipped != "" {
		Skip(r.Skipped)
	}
	why := fmt.Sprintf("%s on Kubernetes %s: %s", c.Name, env.version, s.Description)
	Expect(r.Failures()).To(BeEmpty(), "%s", why)
	harness.ExpectAgain(again, why)
}

// metricsOf reads the /metrics of controller c. Only the first process holds
// the set-up; Ginkgo runs the serial specs, the only ones that read them, there.
func metricsOf(c runner.Controller) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		if setup == nil {
			return "", fmt.Errorf("%w from this suite process (only its first holds the set-up)", runner.ErrNoMetrics)
		}
		return setup.Metrics(ctx, c)
	}
}

func register() {
	registerSetUp()
	registerScenarios()
	if harness.FirstShard() {
		registerDispatcherControls()
	}
	// The verdict table on the terminal.
	ReportAfterSuite("verdicts", func(report Report) {
		ginkgoreport.PrintVerdicts(os.Stdout, "jobconform conformance verdicts (Kubernetes "+env.version+nodesNote(env.nodes)+")", report)
	})
}

// registerSetUp brings the cluster and the controllers up on the first
// process, and hands every process the clients, the oracle's store and the
// settings it needs.
func registerSetUp() {
	SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
		o, err := harness.OptionsFromEnv()
		Expect(err).NotTo(HaveOccurred())
		o.Progress, o.TempDir = GinkgoWriter, GinkgoT().TempDir()
		setup, err = harness.Setup(ctx, o)
		harness.SkipIfCannotRunContainers(err)
		Expect(err).NotTo(HaveOccurred())
		st, err := harness.Settings()
		Expect(err).NotTo(HaveOccurred())
		if !st.Oracle.Off && st.Oracle.From == "" && st.Oracle.Dir == "" {
			oracleDir, err = os.MkdirTemp("", "jobconform-oracle-")
			Expect(err).NotTo(HaveOccurred())
			st.Oracle.Dir = oracleDir
		}
		data, _ := json.Marshal(shared{setup.Kubeconfig, setup.WorkerKubeconfig, setup.Version, setup.Pods, setup.Nodes, setup.Gates, st.Oracle, setup.AuditLog})
		return data
	}, func(ctx SpecContext, data []byte) {
		var s shared
		Expect(json.Unmarshal(data, &s)).To(Succeed())
		env.oracle = &harness.Oracle{Off: s.Oracle.Off, Twice: s.Oracle.Twice, Store: oracle.Store{Dir: s.Oracle.Dir},
			RunBuiltIn: func(ctx context.Context, sc *scenarios.Scenario) *runner.Result { return run(ctx, sc, runner.BuiltIn) }}
		if s.Oracle.From != "" {
			env.oracle.From = &oracle.Store{Dir: s.Oracle.From}
		}
		var err error
		env.client, env.version, err = kube.Client(s.Kubeconfig, s.Version)
		env.pods, env.nodes, env.gates, env.auditLog = s.Pods, s.Nodes, s.Gates, s.AuditLog
		env.kubeconfig, env.workerKubeconfig = s.Kubeconfig, s.WorkerKubeconfig
		Expect(err).NotTo(HaveOccurred())
		if s.WorkerKubeconfig != "" {
			env.worker, _, err = kube.Client(s.WorkerKubeconfig, s.Version)
			Expect(err).NotTo(HaveOccurred())
		}
	}, NodeTimeout(40*time.Minute))

	SynchronizedAfterSuite(func() {}, func() {
		if oracleDir != "" {
			_ = os.RemoveAll(oracleDir)
		}
		if setup != nil {
			Expect(setup.Stop()).To(Succeed())
		}
	})
}

// registerScenarios adds a spec per scenario and controller under test.
func registerScenarios() {
	Describe("conformance", func() {
		set, err := harness.Scenarios()
		if err != nil {
			It("loads the scenarios", func() { Fail(err.Error()) })
			return
		}
		cs, err := harness.ControllersUnderTest()
		if err != nil {
			It("reads the controllers under test", func() { Fail(err.Error()) })
			return
		}
		all := harness.MyShard(Description, set.Conformance, cs)
		// Twice (--oracle-twice): the built-in's two runs, and the
		// others' wait for both.
		twice := time.Duration(1)
		if st, err := harness.Settings(); err == nil && st.Oracle.Twice {
			twice = 2
		}
		for _, p := range harness.Pairs(all, cs) {
			// The built-in's run of a scenario is handed out before the
			// others' (a higher priority), which wait for it as their oracle:
			// their time includes that wait.
			// One run more each way: a run on a starved machine, or one
			// that differs from the built-in's, is run again (harness.Oracle.Spec).
			priority, timeout := harness.Priority(Description, p.Text()), 12*time.Minute+(twice+1)*5*time.Minute
			if p.Controller.Name == runner.BuiltIn.Name {
				priority, timeout = harness.OraclePriority(Description, p, cs), (twice+1)*5*time.Minute
			}
			args := []any{Label(p.Scenario.Features...), priority, func(ctx SpecContext) {
				runScenario(ctx, p.Scenario, p.Controller)
			}, SpecTimeout(timeout)}
			if p.Scenario.Serial {
				// Alone on the shared cluster, after the others: its load
				// would slow the controllers the others time.
				args = append(args, Serial)
			}
			It(p.Text(), args...)
		}
	})
}

// registerDispatcherControls: a dispatcher that drops part of the status, or
// copies it late, must be caught: one broken on purpose answers to its own
// managedBy value beside the good one. On the first process, which holds
// the set-up, after the others.
func registerDispatcherControls() {
	DescribeTable("[dispatcher] catches a deliberately broken dispatcher", brokenDispatcherCaught,
		brokenDispatcher("that never mirrors status.terminating", "no-terminating", "prp-failed-sigterm",
			`^invariant mirror-[a-z]+ at \d\d:\d\d:\d\d\.\d{3} .*active=0 ready=0 terminating=0 `),
		brokenDispatcher("that copies each status 15s late", "late-status", "prp-failed-sigterm",
			`^invariant mirror-lag at \d\d:\d\d:\d\d\.\d{3} `),
		// Which check shows it is a race: the worker removes the copy
		// at once, and the dispatcher makes it again and the Job runs
		// again (mirror-once) when that comes before the copy's end
		// reached the manager's Job; when the end came first, the
		// manager's Job is removed while the removed copy's pods still
		// exist (foreground-waits-for-pods: rehearsal 28 of 2026-12-07).
		brokenDispatcher("that lets the worker remove a finished copy at once and makes it again", "ttl-to-worker", "ttl-after-finished",
			`^invariant (mirror-once at \d\d:\d\d:\d\d\.\d{3} .*the finished Job runs again|foreground-waits-for-pods at \d\d:\d\d:\d\d\.\d{3} )`),
	)
}

// brokenDispatcherCaught runs scenario against the reference dispatcher
// broken by fault and expects a failure matching failure.
func brokenDispatcherCaught(ctx SpecContext, fault, scenario, failure string) {
	cs, err := harness.ControllersUnderTest()
	Expect(err).NotTo(HaveOccurred())
	if !slices.ContainsFunc(cs, func(c runner.Controller) bool { return c.Name == runner.Dispatcher.Name }) {
		Skip("the reference dispatcher is not under test (--controllers dispatcher)")
	}
	Expect(setup).NotTo(BeNil(), "the serial specs run on the process that holds the set-up")
	set, err := harness.Scenarios()
	Expect(err).NotTo(HaveOccurred())
	i := slices.IndexFunc(set.Conformance, func(s *scenarios.Scenario) bool { return s.Name == scenario })
	Expect(i).NotTo(Equal(-1), "the catalog's scenario %s", scenario)
	s := set.Conformance[i]
	name := "jobconform.io/dispatcher-" + fault
	broken, err := setup.StartDispatcher(ctx, GinkgoT().TempDir(), name, []string{fault})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(broken.Stop)
	c := runner.Dispatcher
	c.Name, c.ManagedBy, c.Faults = "dispatcher-"+fault, &name, []string{fault}
	r := runner.RunWith(ctx, env.client, env.version, s, c, runner.Options{Pods: env.pods, Nodes: env.nodes, Gates: env.gates, Worker: env.worker, RunID: harness.RunID()})
	harness.Attach(r, s.Features)
	failures := r.Failures()
	AddReportEntry("verdict on the broken dispatcher", strings.Join(failures, "\n"))
	Expect(r.Err).NotTo(HaveOccurred())
	Expect(failures).To(ContainElement(MatchRegexp(failure)), "the %s fault must be caught (and the report must say when)", fault)
}

func nodesNote(nodes string) string {
	if nodes == "" {
		return ""
	}
	return ", " + nodes + " nodes"
}

// brokenDispatcher is a case of the broken-dispatcher table: scenario shows
// the fault (prp-failed-sigterm's pods trap SIGTERM and the Job waits for
// them, status.terminating > 0 for seconds; ttl-after-finished's copy is
// removed by the worker as soon as it finishes, the manager's Job 3 s later).
func brokenDispatcher(text, fault, scenario, failure string) TableEntry {
	return Entry(text, fault, scenario, failure, Serial, Label("managedBy", "multi-cluster"), harness.Priority(Description, "broken-dispatcher-"+fault), SpecTimeout(5*time.Minute))
}
