// Package chaos is the chaos suite: the chaos scenarios (jobconform's catalog,
// scenarios/catalog/chaos, and the user's scenarios with chaos steps) against
// every controller under test, on a local cluster (default) or kind, plus two
// checks of the harness itself when jobconform's catalog is in: the same seed
// gives the same action log, and a deliberately broken reference controller
// is caught. Every spec is Serial: node loss and restarts would disturb
// scenarios running beside them. Register adds the specs to Ginkgo's suite.
//
// Environment: as the conformance suite, and
//
//	JOBCONFORM_CHAOS_SEED   seed of every random choice (default: from the clock; printed)
package chaos

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/controller"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/suites/cluster"
	"github.com/jobconform/jobconform/suites/internal/controllers"
	"github.com/jobconform/jobconform/suites/internal/ginkgoreport"
	"github.com/jobconform/jobconform/suites/internal/harness"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

// Description is the suite's name in Ginkgo's reports.
const Description = "jobconform chaos"

var once sync.Once

// Register adds the suite's specs and set-up to Ginkgo's global suite, once;
// call it before RunSpecs.
func Register() { once.Do(register) }

// SeedEnv sets the seed of a chaos run.
const SeedEnv = "JOBCONFORM_CHAOS_SEED"

var (
	setup  *harness.Env // process 1 only: every spec is Serial
	client kubernetes.Interface
	seed   uint64
)

// nodeMonitorGrace makes lost nodes NotReady sooner than the default 50s;
// kwok renews node leases every 10s, so 30s still tolerates a late renewal.
const nodeMonitorGrace = "30s"

func run(ctx context.Context, s *scenarios.Scenario, c runner.Controller, ref *controllers.Reference) *runner.Result {
	GinkgoHelper()
	env, err := setup.Chaos(c, ref)
	if err != nil {
		Skip(err.Error())
	}
	r := runner.RunWith(ctx, client, setup.Version, s, c, runner.Options{Chaos: env, Seed: seed, Pods: setup.Pods, Nodes: setup.Nodes})
	ginkgoreport.Attach(r, s.Features)
	return r
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
		o.Progress, o.TempDir = GinkgoWriter, GinkgoT().TempDir()
		if o.ProviderName() == "local" { // kind sets kube-controller-manager's flags through kubeadm, which the harness does not patch
			o.Cluster.ExtraArgs = map[cluster.Component][]string{cluster.ControllerManager: {"--node-monitor-grace-period=" + nodeMonitorGrace}}
		}
		setup, err = harness.Setup(ctx, o)
		harness.SkipIfCannotRunContainers(err)
		Expect(err).NotTo(HaveOccurred())
		client, setup.Version, err = harness.Client(setup.Kubeconfig, setup.Version)
		Expect(err).NotTo(HaveOccurred())
		seed = uint64(time.Now().UnixNano())
		if s := os.Getenv(SeedEnv); s != "" {
			seed, err = strconv.ParseUint(s, 10, 64)
			Expect(err).NotTo(HaveOccurred(), "%s=%q: give an unsigned integer", SeedEnv, s)
		}
		fmt.Fprintf(os.Stdout, "jobconform chaos: seed %d (rerun with %s=%d)\n", seed, SeedEnv, seed)
		AddReportEntry("jobconform.seed", seed)
		return nil
	}, func(context.Context, []byte) {}, NodeTimeout(40*time.Minute))

	SynchronizedAfterSuite(func() {}, func() {
		if setup != nil {
			Expect(setup.Stop()).To(Succeed())
		}
	})

	Describe("chaos", Label("chaos"), Serial, func() {
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
		for _, s := range all {
			for _, c := range cs {
				It(fmt.Sprintf("[%s] %s", c.Name, s.Name), Label(s.Features...), func(ctx SpecContext) {
					r := run(ctx, s, c, setup.Reference)
					if r.Skipped != "" {
						Skip(r.Skipped)
					}
					failures := r.Failures()
					Expect(failures).To(BeEmpty(), "%s on Kubernetes %s (seed %d): %s", c.Name, setup.Version, seed, s.Description)
				}, SpecTimeout(10*time.Minute))
			}
		}

		if !set.Builtin {
			return // the checks of the harness below run scenarios of jobconform's catalog
		}

		It("[reference] seeded-soak twice with one seed gives one action log", func(ctx SpecContext) {
			if setup.Reference == nil {
				Skip("the reference controller is not under test")
			}
			soak := find(all, "seeded-soak")
			first := run(ctx, soak, runner.Reference, setup.Reference)
			second := run(ctx, soak, runner.Reference, setup.Reference)
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
			Expect(logOf(second)).To(Equal(logOf(first)), "seed %d", seed)
			AddReportEntry("action log", strings.Join(logOf(first), "\n"))
		}, SpecTimeout(20*time.Minute))

		// A broken controller must be caught, and the report must name the broken
		// promise and when it broke. The broken controller answers to its own
		// managedBy value, beside the real reference controller.
		DescribeTable("catches a deliberately broken reference controller",
			func(ctx SpecContext, fault, scenario, invariant string) {
				if setup.Cluster.Provider() != "local" {
					Skip("the broken controller runs on the local provider")
				}
				name := "jobconform.io/broken-" + fault
				broken, err := setup.StartReference(ctx, GinkgoT().TempDir(), name, []string{fault})
				Expect(err).NotTo(HaveOccurred())
				DeferCleanup(broken.Stop)
				c := runner.Controller{Name: "broken-" + fault, ManagedBy: ptr.To(name), Finalizer: controller.TrackingFinalizer, Faults: []string{fault}}
				r := run(ctx, find(all, scenario), c, broken)
				failures := r.Failures()
				AddReportEntry("verdict on the broken controller", strings.Join(failures, "\n"))
				Expect(failures).To(ContainElement(MatchRegexp(`^invariant %s at \d\d:\d\d:\d\d\.\d{3} `, invariant)),
					"the %s fault must break %s (and the report must say when)", fault, invariant)
			},
			Entry("creating replacements while pods terminate", "replace-terminating", "node-loss-prp-failed-out-of-service", "replacement-waits-under-failed", SpecTimeout(10*time.Minute)),
			Entry("writing Failed before the pods have terminated", "early-terminal", "controller-crash-during-failure-target", "terminal-only-when-pods-terminal", SpecTimeout(10*time.Minute)),
		)
	})

	// The verdict table on the terminal, and the seed again.
	ReportAfterSuite("verdicts", func(report Report) {
		ginkgoreport.PrintVerdicts(os.Stdout, fmt.Sprintf("jobconform chaos verdicts (seed %d)", seed), report)
	})
}
