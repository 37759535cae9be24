// The conformance suite: every catalog scenario against every controller
// under test, on a local cluster (default) or an existing one. Spec names
// carry the controller; labels carry the scenario's features, so
//
//	go test ./suites/conformance -args -ginkgo.label-filter=podReplacementPolicy
//
// runs one feature. Environment:
//
//	JOBCONFORM_K8S_VERSION     Kubernetes release of the local cluster
//	JOBCONFORM_PROVIDER        local (default) or kind (needs Docker and the kindest/node image)
//	JOBCONFORM_KUBECONFIG      use this existing cluster instead of creating one
//	JOBCONFORM_CONTROLLERS     comma list of builtin, reference, external (default builtin,reference)
//	JOBCONFORM_EXTERNAL_MANAGED_BY / JOBCONFORM_EXTERNAL_FINALIZER   the external controller
//	JOBCONFORM_EXTERNAL_COMMAND  start it with this shell command (KUBECONFIG set to the cluster's);
//	                             without it, the external controller must already run
package conformance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/catalog"
	"github.com/jobconform/jobconform/suites/cluster/kind"
	"github.com/jobconform/jobconform/suites/cluster/local"
	"github.com/jobconform/jobconform/suites/controllers"
	"github.com/jobconform/jobconform/suites/process"
	"github.com/jobconform/jobconform/suites/recorder"
	"github.com/jobconform/jobconform/suites/runner"
)

func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real cluster")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "jobconform conformance")
}

// env is what every spec needs; set up once.
var env struct {
	client  kubernetes.Interface
	version string
}

// process-1 state, torn down in SynchronizedAfterSuite.
var (
	cluster     *local.Cluster
	kindCluster *kind.Cluster
	ref         *controllers.Reference
	external    *process.Process
)

func controllersUnderTest() ([]runner.Controller, error) {
	names := os.Getenv("JOBCONFORM_CONTROLLERS")
	if names == "" {
		names = "builtin,reference"
	}
	var out []runner.Controller
	for _, n := range strings.Split(names, ",") {
		switch strings.TrimSpace(n) {
		case "builtin":
			out = append(out, runner.BuiltIn)
		case "reference":
			out = append(out, runner.Reference)
		case "external":
			mb := os.Getenv("JOBCONFORM_EXTERNAL_MANAGED_BY")
			if mb == "" {
				return nil, fmt.Errorf("JOBCONFORM_CONTROLLERS has external: set JOBCONFORM_EXTERNAL_MANAGED_BY to its spec.managedBy value")
			}
			out = append(out, runner.Controller{Name: mb, ManagedBy: ptr.To(mb), Finalizer: os.Getenv("JOBCONFORM_EXTERNAL_FINALIZER")})
		default:
			return nil, fmt.Errorf("JOBCONFORM_CONTROLLERS: unknown controller %q (use builtin, reference, external)", n)
		}
	}
	return out, nil
}

func usesReference(cs []runner.Controller) bool {
	for _, c := range cs {
		if c.Name == runner.Reference.Name {
			return true
		}
	}
	return false
}

type shared struct {
	Kubeconfig string
	Version    string
}

var _ = SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
	cs, err := controllersUnderTest()
	Expect(err).NotTo(HaveOccurred())
	var s shared
	switch provider := os.Getenv("JOBCONFORM_PROVIDER"); {
	case os.Getenv("JOBCONFORM_KUBECONFIG") != "":
		s.Kubeconfig = os.Getenv("JOBCONFORM_KUBECONFIG")
	case provider == "kind":
		kindCluster, err = kind.Start(ctx, kind.Config{Version: os.Getenv("JOBCONFORM_K8S_VERSION")})
		Expect(err).NotTo(HaveOccurred(), "JOBCONFORM_PROVIDER=kind")
		s.Kubeconfig = kindCluster.Kubeconfig()
	case provider != "" && provider != "local":
		Fail(fmt.Sprintf("JOBCONFORM_PROVIDER=%q: use local or kind (or JOBCONFORM_KUBECONFIG for an existing cluster)", provider))
	default:
		cluster, err = local.Start(ctx, local.Config{Version: os.Getenv("JOBCONFORM_K8S_VERSION"), Progress: GinkgoWriter})
		Expect(err).NotTo(HaveOccurred())
		s.Kubeconfig, s.Version = cluster.Kubeconfig(), cluster.Version()
	}
	// Controller logs go beside the cluster's, else to $ARTIFACTS.
	logDir := os.Getenv("ARTIFACTS")
	if cluster != nil {
		logDir = cluster.LogDir()
	}
	if logDir == "" {
		logDir = os.TempDir()
	}
	if usesReference(cs) {
		bin, err := controllers.BuildReference(ctx, GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		ref = &controllers.Reference{Binary: bin, Kubeconfig: s.Kubeconfig, LogDir: logDir}
		if cluster != nil {
			client := cluster.Client()
			Expect(controllers.GrantReference(ctx, client)).To(Succeed())
			ref.Kubeconfig, err = cluster.ClientKubeconfig(controllers.ReferenceUser)
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(ref.Start(ctx)).To(Succeed())
	}
	if cmd := os.Getenv("JOBCONFORM_EXTERNAL_COMMAND"); cmd != "" {
		Expect(os.MkdirAll(logDir, 0o755)).To(Succeed())
		external = process.New("external-controller", filepath.Join(logDir, "external-controller.log"))
		external.SetCommand("/bin/sh", "-c", "KUBECONFIG="+s.Kubeconfig+" exec "+cmd)
		Expect(external.Start()).To(Succeed())
		GinkgoWriter.Printf("external controller started: %s (log %s)\n", cmd, external.LogPath)
	}
	data, _ := json.Marshal(s)
	return data
}, func(ctx SpecContext, data []byte) {
	var s shared
	Expect(json.Unmarshal(data, &s)).To(Succeed())
	rc, err := clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
	Expect(err).NotTo(HaveOccurred(), "kubeconfig %s", s.Kubeconfig)
	rc.QPS, rc.Burst = 100, 200
	env.client, err = kubernetes.NewForConfig(rc)
	Expect(err).NotTo(HaveOccurred())
	env.version = s.Version
	if env.version == "" {
		info, err := env.client.Discovery().ServerVersion()
		Expect(err).NotTo(HaveOccurred(), "cluster at %s unreachable: check the kubeconfig and that the cluster runs", rc.Host)
		env.version = info.GitVersion
	}
}, NodeTimeout(40*time.Minute))

var _ = SynchronizedAfterSuite(func() {}, func() {
	if external != nil {
		_ = external.Stop(10 * time.Second)
	}
	if ref != nil {
		_ = ref.Stop()
	}
	if cluster != nil {
		_ = cluster.Stop()
	}
	if kindCluster != nil {
		_ = kindCluster.Stop()
	}
})

var _ = Describe("conformance", func() {
	all, err := catalog.Load()
	if err != nil {
		It("loads the catalog", func() { Fail(err.Error()) })
		return
	}
	cs, err := controllersUnderTest()
	if err != nil {
		It("reads the controllers under test", func() { Fail(err.Error()) })
		return
	}
	for _, s := range all {
		for _, c := range cs {
			It(fmt.Sprintf("[%s] %s", c.Name, s.Name), Label(s.Features...), func(ctx SpecContext) {
				runScenario(ctx, s, c)
			}, SpecTimeout(5*time.Minute))
		}
	}
})

func runScenario(ctx context.Context, s *scenarios.Scenario, c runner.Controller) {
	r := runner.Run(ctx, env.client, env.version, s, c)
	AddReportEntry("jobconform.result", summary(r), ReportEntryVisibilityNever)
	AddReportEntry("jobconform.timeline", timelineLines(r), ReportEntryVisibilityNever)
	if r.Skipped != "" {
		Skip(r.Skipped)
	}
	failures := r.Failures()
	if len(failures) > 0 {
		AddReportEntry("timeline", timelineText(r), ReportEntryVisibilityFailureOrVerbose)
	}
	Expect(failures).To(BeEmpty(), "%s on Kubernetes %s: %s", c.Name, env.version, s.Description)
}

// Result is the machine-readable verdict attached to each spec's report.
type Result struct {
	Scenario   string   `json:"scenario"`
	Controller string   `json:"controller"`
	Version    string   `json:"version"`
	Features   []string `json:"features,omitempty"`
	Failures   []string `json:"failures,omitempty"`
	Skipped    string   `json:"skipped,omitempty"`
	Seconds    float64  `json:"seconds"`
}

func summary(r *runner.Result) string {
	b, _ := json.Marshal(Result{Scenario: r.Scenario, Controller: r.Controller, Version: r.Version, Failures: r.Failures(),
		Skipped: r.Skipped, Seconds: r.End.Sub(r.Start).Seconds()})
	return string(b)
}

// timelineLines renders the timeline as JSON lines (time, type, kind, name, object).
func timelineLines(r *runner.Result) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, e := range r.Timeline {
		_ = enc.Encode(map[string]any{"time": e.Time, "type": e.Type, "kind": e.Kind, "name": e.Name, "object": e.Object})
	}
	return b.String()
}

func timelineText(r *runner.Result) string {
	var b strings.Builder
	for _, e := range r.Timeline {
		if e.Kind == "Job" || e.Kind == "Pod" {
			b.WriteString(recorder.Describe(e) + "\n")
		}
	}
	return b.String()
}

// The verdict table on the terminal.
var _ = ReportAfterSuite("verdicts", func(report Report) {
	type row struct{ name, verdict, secs string }
	var rows []row
	pass, fail, skip := 0, 0, 0
	for _, sr := range report.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt {
			continue
		}
		verdict := "PASS"
		switch {
		case sr.State.Is(types.SpecStateSkipped):
			verdict = "skip"
			skip++
		case sr.State.Is(types.SpecStateFailureStates):
			verdict = "FAIL"
			fail++
		default:
			pass++
		}
		rows = append(rows, row{sr.LeafNodeText, verdict, fmt.Sprintf("%.1fs", sr.RunTime.Seconds())})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	fmt.Printf("\njobconform verdicts (Kubernetes %s)\n", env.version)
	for _, r := range rows {
		fmt.Printf("  %-4s %7s  %s\n", r.verdict, r.secs, r.name)
	}
	fmt.Printf("%d passed, %d failed, %d skipped\n", pass, fail, skip)
})
