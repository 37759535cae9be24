// Package chaos is the chaos suite: the chaos scenarios (jobconform's catalog,
// scenarios/catalog/chaos, and the user's scenarios with chaos steps) against
// every controller under test, plus two checks of the harness itself when
// jobconform's catalog is in: the same seed gives the same action log, and a
// deliberately broken reference controller is caught. Node loss and restarts
// would disturb scenarios running beside them, so every spec brings up a
// cluster of its own (local by default, or kind) with only the controller it
// judges: specs run in parallel and none can disturb another's verdict.
// Register adds the specs to Ginkgo's suite.
//
// Settings (harness.Settings): as the conformance suite's, and --chaos-seed,
// the seed of every random choice (default: from the clock; printed).
package chaos

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/chaos"
	"github.com/jobconform/jobconform/controller"
	"github.com/jobconform/jobconform/internal/cluster"
	"github.com/jobconform/jobconform/internal/mutants"
	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/release"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/oracle"
	"github.com/jobconform/jobconform/suites/ginkgoreport"
	"github.com/jobconform/jobconform/suites/internal/controllers"
	"github.com/jobconform/jobconform/suites/internal/harness"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

// Description is the suite's name in Ginkgo's reports.
const Description = "jobconform chaos"

var once sync.Once

// Register adds the suite's specs and set-up to Ginkgo's global suite, once;
// call it before RunSpecs.
func Register() { once.Do(register) }

// shared is what process 1 hands every process: the seed, and the reference
// controller's binary built once for every cluster.
type shared struct {
	Seed            uint64
	ReferenceBinary string
	// OracleDir is the store of the built-in's runs the processes share
	// ("" with --no-oracle or --oracle-from, whose OracleFrom is read).
	OracleDir, OracleFrom string
	OracleOff             bool
}

// theOracle is the differential verdict (issue #56), as in the conformance
// suite; the built-in runs each chaos scenario twice, each on a cluster of
// its own, and what its runs differ in is that scenario's noise.
var theOracle *harness.Oracle

var suite shared

// nodeMonitorGrace makes lost nodes NotReady sooner than the default 50s;
// kwok renews node leases every 10s, so 30s still tolerates a late renewal.
const nodeMonitorGrace = "30s"

// newEnv brings up a cluster of the spec's own, named for it, with the
// controllers cs (the reference controller among them when it is judged);
// it is stopped when the spec ends. On a cluster given by --kubeconfig every
// spec shares it, and a reference controller of the spec's own answers to a
// name of the spec's own (judge reads it from env.Reference).
func newEnv(ctx context.Context, name string, cs ...runner.Controller) *harness.Env {
	GinkgoHelper()
	o, err := harness.OptionsFromEnv()
	Expect(err).NotTo(HaveOccurred())
	o.Progress, o.TempDir = GinkgoWriter, GinkgoT().TempDir()
	o.Controllers, o.ReferenceBinary = cs, suite.ReferenceBinary
	if o.ProviderName() == "existing" {
		o.ReferenceName = fmt.Sprintf("%s-%08x", controller.DefaultName, crc32.ChecksumIEEE([]byte(name)))
	} else {
		o.Cluster.Name = clusterName(name)
	}
	if o.ProviderName() == "local" { // kind sets kube-controller-manager's flags through kubeadm, which the harness does not patch
		o.Cluster.ExtraArgs = map[cluster.Component][]string{cluster.ControllerManager: {"--node-monitor-grace-period=" + nodeMonitorGrace}}
	}
	env, err := harness.Setup(ctx, o)
	harness.SkipIfCannotRunContainers(err)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(env.Stop)
	return env
}

// judged is c as the spec's env runs it: a reference controller under the
// name it was started with.
func judged(c runner.Controller, env *harness.Env) runner.Controller {
	if c.Name == runner.Reference.Name && env.Reference != nil {
		c.ManagedBy = ptr.To(env.Reference.Name)
	}
	return c
}

// skipInapplicable skips, before a cluster is brought up for nothing, a
// scenario that makes no promise for c at the release the harness would start.
func skipInapplicable(s *scenarios.Scenario, c runner.Controller) {
	GinkgoHelper()
	o, err := harness.OptionsFromEnv()
	Expect(err).NotTo(HaveOccurred())
	if o.ProviderName() == "existing" {
		return // its release is known once connected
	}
	v, err := release.Resolve(o.Cluster.Version)
	Expect(err).NotTo(HaveOccurred())
	why, err := runner.Inapplicable(s, c, v)
	Expect(err).NotTo(HaveOccurred())
	if s.Nodes != "" && s.Nodes != cmp.Or(o.Cluster.NodeKind, cluster.NodesKwok) {
		why = fmt.Sprintf("scenario runs on %s nodes only", s.Nodes)
	}
	if why != "" {
		// The report and the matrix still learn what was skipped, where, for whom.
		now := time.Now()
		nodes, gates := o.ReportedSetup()
		harness.Attach(&runner.Result{Scenario: s.Name, Controller: c.Name, Version: v, Skipped: why, Start: now, End: now, Nodes: nodes, Gates: gates}, s.Features)
		Skip(why)
	}
}

var notName = regexp.MustCompile(`[^a-z0-9-]+`)

// clusterName names a spec's cluster (and its log directory) after the
// spec, at most 40 characters: kind names its node containers and their
// hostnames (63 at most) after the cluster, "-control-plane" included.
func clusterName(s string) string {
	name := "chaos-" + strings.Trim(notName.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(name) > 40 {
		name = fmt.Sprintf("%s-%08x", strings.TrimRight(name[:31], "-"), crc32.ChecksumIEEE([]byte(s)))
	}
	return name
}

// run runs scenario s against controller c (ref: its process, for a
// reference controller) on env's cluster and attaches the result; a run the
// cluster cannot judge (1.31 without JobManagedBy dropped spec.managedBy)
// skips the spec with the reason.
func run(ctx context.Context, env *harness.Env, s *scenarios.Scenario, c runner.Controller, ref *controllers.Reference) *runner.Result {
	GinkgoHelper()
	r := runOnly(ctx, env, s, c, ref)
	harness.Attach(r, s.Features)
	if r.Skipped != "" {
		Skip(r.Skipped)
	}
	return r
}

// runOnly is run without the result attached or the spec skipped (the
// oracle's turn comes between).
func runOnly(ctx context.Context, env *harness.Env, s *scenarios.Scenario, c runner.Controller, ref *controllers.Reference) *runner.Result {
	GinkgoHelper()
	ce, err := env.Chaos(c, ref)
	if err != nil {
		Skip(err.Error())
	}
	cm, err := env.ChaosMesh()
	Expect(err).NotTo(HaveOccurred())
	return runner.RunWith(ctx, env.Cluster.Client(), env.Version, s, c, runner.Options{Chaos: ce, ChaosMesh: cm, Seed: suite.Seed, Pods: env.Pods, Nodes: env.Nodes, Gates: env.Gates, RunID: harness.RunID(), AuditLog: env.AuditLog})
}

// runBuiltIn runs s against the built-in on a cluster of its own: the
// built-in's run again for its noise, or made for the oracle when the
// built-in is not under test.
func runBuiltIn(ctx context.Context, name string, s *scenarios.Scenario) *runner.Result {
	GinkgoHelper()
	env := newEnv(ctx, name, runner.BuiltIn)
	return runOnly(ctx, env, s, runner.BuiltIn, nil)
}

// judgedSpec is a chaos spec of s and c: the run on a cluster of its own,
// the built-in's kept as the oracle (run twice: its noise learned), any
// other controller's compared with it (issue #56).
func judgedSpec(ctx context.Context, s *scenarios.Scenario, c runner.Controller) {
	skipInapplicable(s, c)
	var env *harness.Env
	// Each run on a cluster of its own, named apart: the built-in's run
	// again for its noise, and any run again (harness.Oracle.Spec).
	runs := 0
	named := func(what string) string {
		runs++
		if runs == 1 {
			return what
		}
		return fmt.Sprintf("again%d-%s", runs, what)
	}
	first := func() *runner.Result {
		env = newEnv(ctx, named(c.Name+"-"+s.Name), c)
		return runOnly(ctx, env, s, judged(c, env), env.Reference)
	}
	rerun := func() *runner.Result { return runBuiltIn(ctx, named("builtin-"+s.Name), s) }
	r, again, err := theOracle.Spec(ctx, s, c, first, rerun)
	Expect(err).NotTo(HaveOccurred(), "keeping the built-in's run as the oracle")
	harness.Attach(r, s.Features)
	if r.Skipped != "" {
		Skip(r.Skipped)
	}
	why := fmt.Sprintf("%s on Kubernetes %s (seed %d): %s", c.Name, env.Version, suite.Seed, s.Description)
	Expect(r.Failures()).To(BeEmpty(), "%s", why)
	harness.ExpectAgain(again, why)
}

// oracleStore is where the built-in's chaos runs are kept: the run's
// directory for them, or one of the suite's own ("" when none is kept).
func oracleStore(o options.Oracle) string {
	GinkgoHelper()
	if o.Off || o.From != "" || o.Dir != "" {
		return o.Dir
	}
	dir, err := os.MkdirTemp("", "jobconform-chaos-oracle-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir) // after every process is done (SynchronizedAfterSuite)
	return dir
}

// setUpOracle makes this process's theOracle from the shared settings: the
// built-in twice only where another controller is compared with it.
func setUpOracle() {
	GinkgoHelper()
	cs, err := harness.ControllersUnderTest()
	Expect(err).NotTo(HaveOccurred())
	others := slices.ContainsFunc(cs, func(c runner.Controller) bool { return c.Name != runner.BuiltIn.Name })
	var made atomic.Int32 // names the clusters of the built-in's runs made for the oracle apart
	theOracle = &harness.Oracle{Off: suite.OracleOff, Twice: others, Store: oracle.Store{Dir: suite.OracleDir},
		RunBuiltIn: func(ctx context.Context, s *scenarios.Scenario) *runner.Result {
			return runBuiltIn(ctx, fmt.Sprintf("builtin-%d-%s", made.Add(1), s.Name), s)
		}}
	if suite.OracleFrom != "" {
		theOracle.From = &oracle.Store{Dir: suite.OracleFrom}
	}
}

func find(all []*scenarios.Scenario, name string) *scenarios.Scenario {
	for _, s := range all {
		if s.Name == name {
			return s
		}
	}
	Fail("no chaos scenario " + name)
	return nil
}

func register() {
	SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
		o, err := harness.OptionsFromEnv()
		Expect(err).NotTo(HaveOccurred())
		sh := shared{Seed: uint64(time.Now().UnixNano()), ReferenceBinary: o.ReferenceBinary}
		st, err := harness.Settings()
		Expect(err).NotTo(HaveOccurred())
		if st.ChaosSeed != nil {
			sh.Seed = *st.ChaosSeed
		}
		if sh.ReferenceBinary == "" {
			// Built once here, not once per cluster. A directory of the
			// suite's (not GinkgoT's, removed when this node ends).
			dir, err := os.MkdirTemp("", "jobconform-chaos-")
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(os.RemoveAll, dir) // runs after every process is done (SynchronizedAfterSuite)
			sh.ReferenceBinary, err = controllers.BuildReference(ctx, dir)
			Expect(err).NotTo(HaveOccurred())
		}
		sh.OracleOff, sh.OracleFrom, sh.OracleDir = st.Oracle.Off, st.Oracle.From, oracleStore(st.Oracle)
		fmt.Fprintf(os.Stdout, "jobconform chaos: seed %d (rerun with --chaos-seed %d)\n", sh.Seed, sh.Seed)
		AddReportEntry("jobconform.seed", sh.Seed)
		data, _ := json.Marshal(sh)
		return data
	}, func(_ context.Context, data []byte) {
		Expect(json.Unmarshal(data, &suite)).To(Succeed())
		setUpOracle()
	}, NodeTimeout(10*time.Minute))

	Describe("chaos", Label("chaos"), func() {
		set, err := harness.Scenarios()
		if err != nil {
			It("loads the scenarios", func() { Fail(err.Error()) })
			return
		}
		all := set.Chaos
		if len(all) == 0 {
			return // the user's scenarios have no chaos steps
		}
		cs, err := harness.ControllersUnderTest()
		if err != nil {
			It("reads the controllers under test", func() { Fail(err.Error()) })
			return
		}
		o, err := harness.OptionsFromEnv()
		if err != nil {
			It("reads the settings", func() { Fail(err.Error()) })
			return
		}
		existing := o.ProviderName() == "existing"
		if set.Builtin && harness.FirstShard() && !existing { // they run scenarios of jobconform's catalog, on clusters of their own
			harnessChecks(all, cs)
		}
		all = harness.MyShard(Description, all, cs)
		for _, p := range harness.Pairs(all, cs) {
			s, c := p.Scenario, p.Controller
			decorators := []any{Label(s.Features...), harness.Priority(Description, p.Text())}
			if existing && disruptsNodes(s) {
				// The specs share the user's cluster: a drained node must not
				// evict another spec's pods.
				decorators = append(decorators, Serial)
			}
			timeout := 10 * time.Minute
			if c.Name == runner.BuiltIn.Name {
				decorators[1] = harness.OraclePriority(Description, p, cs)
			} else {
				timeout += 2 * 6 * time.Minute // waiting for the built-in's two runs
			}
			It(p.Text(), append(decorators, func(ctx SpecContext) {
				judgedSpec(ctx, s, c)
			}, SpecTimeout(timeout))...)
		}
	})

	// The verdict table on the terminal, and the seed again.
	ReportAfterSuite("verdicts", func(report Report) {
		ginkgoreport.PrintVerdicts(os.Stdout, fmt.Sprintf("jobconform chaos verdicts (seed %d)", suite.Seed), report)
	})
}

// harnessChecks are the checks of the harness itself: one seed gives one
// action log, and broken controllers are caught.
func harnessChecks(all []*scenarios.Scenario, cs []runner.Controller) {
	// Two runs, each on a fresh cluster of its own, at the same time: the
	// action log depends on the seed alone.
	soakTwice := "[reference] seeded-soak twice with one seed gives one action log"
	It(soakTwice, harness.Priority(Description, soakTwice), func(ctx SpecContext) {
		if !underTest(cs, runner.Reference.Name) {
			Skip("the reference controller is not under test")
		}
		soak := find(all, "seeded-soak")
		envs := []*harness.Env{newEnv(ctx, "reference-seeded-soak-1", runner.Reference), newEnv(ctx, "reference-seeded-soak-2", runner.Reference)}
		results := make([]*runner.Result, len(envs))
		var wg sync.WaitGroup
		for i, env := range envs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer GinkgoRecover()
				r := runOnly(ctx, env, soak, runner.Reference, env.Reference)
				// Two runs of one seed held to one action log: a check of
				// the harness, its runs judged by the invariants alone.
				r.OracleNote = "not compared with the built-in: the harness's own check (one seed, one action log)"
				harness.Attach(r, soak.Features)
				if r.Skipped != "" {
					Skip(r.Skipped)
				}
				results[i] = r
			}()
		}
		wg.Wait()
		if results[0] == nil || results[1] == nil {
			return // a soak skipped (or failed) in its goroutine: Ginkgo has the verdict
		}
		first, second := results[0], results[1]
		Expect(first.Failures()).To(BeEmpty())
		Expect(second.Failures()).To(BeEmpty())
		logOf := func(r *runner.Result) []string {
			var out []string
			for _, c := range r.Chaos {
				out = append(out, c.Log)
			}
			return out
		}
		Expect(len(logOf(first))).To(BeNumerically(">=", soak.Steps[1].Chaos.Random.Actions))
		Expect(logOf(second)).To(Equal(logOf(first)), "seed %d", suite.Seed)
		AddReportEntry("action log", strings.Join(logOf(first), "\n"))
	}, SpecTimeout(20*time.Minute))

	// A broken controller must be caught, and the report must name the broken
	// promise and when it broke. The broken controller is a mutant of the
	// reference (internal/mutants) built from the checkout, answering to its
	// own managedBy value, on a cluster with no other controller of Jobs but
	// the built-in.
	DescribeTable("catches a deliberately broken reference controller",
		func(ctx SpecContext, fault, scenario, invariant string) {
			if o, _ := harness.OptionsFromEnv(); o.ProviderName() != "local" {
				Skip("the broken controller runs on the local provider")
			}
			env := newEnv(ctx, "broken-"+fault)
			name := "jobconform.io/broken-" + fault
			broken, err := env.StartMutant(ctx, GinkgoT().TempDir(), name, []string{fault})
			if errors.Is(err, mutants.ErrNoSource) {
				Skip(err.Error())
			}
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(broken.Stop)
			c := runner.Controller{Name: "broken-" + fault, ManagedBy: ptr.To(name), Finalizer: controller.TrackingFinalizer, Faults: []string{fault}}
			r := run(ctx, env, find(all, scenario), c, broken)
			failures := r.Failures()
			AddReportEntry("verdict on the broken controller", strings.Join(failures, "\n"))
			Expect(failures).To(ContainElement(MatchRegexp(`^invariant %s at \d\d:\d\d:\d\d\.\d{3} `, invariant)),
				"the %s fault must break %s (and the report must say when)", fault, invariant)
		},
		entry("creating replacements while pods terminate", "replace-terminating", "node-loss-prp-failed-out-of-service", "replacement-waits-under-failed"),
		entry("writing Failed before the pods have terminated", "early-terminal", "controller-crash-during-failure-target", "terminal-only-when-pods-terminal"),
	)
}

// disruptsNodes tells whether a chaos step of s cordons, drains or taints
// nodes (or preempts there).
func disruptsNodes(s *scenarios.Scenario) bool {
	for _, a := range s.ChaosActions() {
		if slices.Contains(a.Needs(), chaos.NeedNodeDisruption) {
			return true
		}
	}
	return false
}

func underTest(cs []runner.Controller, name string) bool {
	for _, c := range cs {
		if c.Name == name {
			return true
		}
	}
	return false
}

// entry is a case of the broken-controller table.
func entry(text, fault, scenario, invariant string) TableEntry {
	return Entry(text, fault, scenario, invariant, SpecTimeout(10*time.Minute), harness.Priority(Description, text))
}
