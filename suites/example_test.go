package suites_test

// A controller team's test, as it would sit in their repository: an
// e2e-framework environment creates a local cluster and starts their
// controller (here jobconform's reference controller under the team's own
// managedBy name), and a Ginkgo spec per scenario asks jobconform for a
// verdict. go test -short skips it: it starts a cluster.

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/e2e-framework/pkg/env"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/envfuncs"

	"github.com/jobconform/jobconform/controller"
	"github.com/jobconform/jobconform/suites"
)

// The team's controller: what its Jobs say in spec.managedBy, the finalizer
// it tracks pods with.
var mine = suites.Controller{Name: "my-job-controller", ManagedBy: "example.com/my-job-controller", Finalizer: controller.TrackingFinalizer}

var (
	testenv    env.Environment
	kubeconfig string
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // the tests skip themselves
	}
	testenv = env.NewWithConfig(envconf.New())
	name := envconf.RandomName("example", 16)
	dir, err := os.MkdirTemp("", "jobconform-example-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var ctl *suites.Process
	testenv.Setup(
		envfuncs.CreateClusterWithOpts(suites.NewClusterProvider(), name),
		func(ctx context.Context, cfg *envconf.Config) (context.Context, error) {
			kubeconfig = cfg.KubeconfigFile()
			ctl, err = suites.StartReference(ctx, kubeconfig, mine.ManagedBy, dir)
			return ctx, err
		},
	)
	testenv.Finish(
		func(ctx context.Context, _ *envconf.Config) (context.Context, error) {
			if ctl == nil {
				return ctx, nil
			}
			return ctx, ctl.Stop()
		},
		envfuncs.DestroyCluster(name),
	)
	code := testenv.Run(m)
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func TestMyJobController(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "my Job controller, judged by jobconform")
}

var _ = Describe("my Job controller", func() {
	all, err := suites.Conformance()
	if err != nil {
		It("loads jobconform's scenarios", func() { Fail(err.Error()) })
		return
	}
	for _, name := range []string{"prp-failed-sigterm", "complete-simple", "suspend-resume"} {
		It("keeps the promises of "+name, func(ctx SpecContext) {
			s := suites.Find(all, name)
			Expect(s).NotTo(BeNil(), "scenario %s", name)
			var opts []suites.JudgeOption
			if name == "complete-simple" {
				// The built-in twice: its spread learned, so the pods'
				// and conditions' delays after their causes are compared.
				opts = append(opts, suites.WithOracleTwice())
			}
			v, err := suites.Judge(ctx, kubeconfig, s, mine, opts...)
			Expect(err).NotTo(HaveOccurred())
			Expect(v.Skipped).To(BeEmpty())
			Expect(v.Failures).To(BeEmpty(), "%s:\n%s", name, strings.Join(v.Failures, "\n"))
			// Compared with the cluster's built-in, run there first.
			Expect(v.Compared).To(BeTrue(), "differential verdict: %s", v.OracleNote)
			if len(opts) > 0 {
				Expect(v.Untimed).To(BeEmpty(), "timing compared against the built-in's two runs")
			} else {
				Expect(v.Untimed).To(ContainSubstring("ran once"), "timing not compared against one run, and said so")
			}
			// The verdict stands on a recording of the run: the Job under
			// the team's managedBy name, and its pods.
			jobs := 0
			for _, e := range v.Recording {
				if e.Kind == "Job" {
					jobs++
					Expect(e.Job().Spec.ManagedBy).To(HaveValue(Equal(mine.ManagedBy)))
				}
			}
			Expect(jobs).To(BeNumerically(">", 1), "the Job's changes in the recording")
		})
	}
})

// Judge one scenario of the catalogue against a controller already running
// on the cluster a kubeconfig reaches.
func ExampleJudge() {
	ctx := context.Background()
	all, err := suites.Conformance()
	if err != nil {
		panic(err)
	}
	v, err := suites.Judge(ctx, filepath.Join(os.Getenv("HOME"), ".kube", "config"), suites.Find(all, "prp-failed-sigterm"), suites.BuiltIn)
	if err != nil {
		panic(err) // the harness's error: the cluster unreachable, an API error
	}
	fmt.Println(v.Scenario, v.Passed(), strings.Join(v.Failures, "\n"))
}
