// Package scale is the scale suite (issue #32): Jobs of thousands of pods
// (scenarios/catalog's scale/<form>/, 1,000 pods on 100 kwok nodes or
// 10,000 on 1,000) against each controller under test, one Job at a time on
// one local cluster, every invariant judged over the whole recording — and
// the controllers measured side by side: time to finish, pods created per
// second at the peak, API requests (the apiserver's audit log, by user),
// status writes and conflicts, CPU and peak memory of their processes, and
// the harness's own cost; every other controller's run is compared with the
// built-in's run of the same Job (the differential verdict, issue #56).
// Beside the reference controller runs a copy slowed
// on purpose (a few pods per sync): the table must show it slower, and no
// invariant may fail it for being slow. jobconform run --suites scale (make
// scale) runs it; make test runs the 600 form.
package scale

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/controller"
	"github.com/jobconform/jobconform/internal/apiaudit"
	"github.com/jobconform/jobconform/internal/cluster"
	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/process"
	"github.com/jobconform/jobconform/reports"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/catalog"
	"github.com/jobconform/jobconform/scenarios/oracle"
	"github.com/jobconform/jobconform/suites/ginkgoreport"
	"github.com/jobconform/jobconform/suites/internal/controllers"
	"github.com/jobconform/jobconform/suites/internal/harness"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

// Description is the suite's name in Ginkgo's reports.
const Description = "jobconform scale"

// BuiltInUser is the identity kube-controller-manager's Job controller uses
// (--use-service-account-credentials): the built-in's requests in the audit log.
const BuiltInUser = kube.JobControllerUser

// Slowed is the reference controller slowed on purpose: it creates or
// deletes at most SlowedPodsPerSync pods per sync (upstream: 500), which
// breaks no promise. It runs the scenarios SlowedRuns names when the
// reference controller is under test.
var Slowed = runner.Controller{Name: "reference-slowed", ManagedBy: ptr.To("jobconform.io/reference-slowed"), Finalizer: controller.TrackingFinalizer}

// SlowedPodsPerSync is the slowed reference's cap; SlowedUser its identity
// (its API requests counted apart from the reference's).
const (
	SlowedPodsPerSync = 10
	SlowedUser        = "jobconform:reference-controller-slowed"
)

// SlowedRuns tells whether the slowed reference runs scenario name: the
// Job that only completes, in each form.
func SlowedRuns(name string) bool { return strings.HasSuffix(name, "indexed-complete") }

var once sync.Once

// Register adds the suite's specs and set-up to Ginkgo's global suite, once.
func Register() { once.Do(register) }

// The suite runs in one process (jobconform run gives it one): a spec's
// measurements assume it is the only Job on the cluster.
var env struct {
	setup   *harness.Env
	slowed  *controllers.Reference
	client  kubernetes.Interface
	version string
	form    string
	// scenarios and under are the form's scenarios and the controllers
	// under test, as the spec tree was built from them.
	scenarios []*scenarios.Scenario
	under     []runner.Controller
	// progress shows each spec's course as it runs; closeProgress closes it.
	progress      io.Writer
	closeProgress func() error
	// recordings is where a failed spec's whole recording goes ("": kept
	// nowhere): the report holds only its compact form.
	recordings string
	// oracle is the differential verdict; oracleDir its store when the
	// options name none (removed at the end).
	oracle    *harness.Oracle
	oracleDir string
}

func register() {
	BeforeSuite(setUp, NodeTimeout(60*time.Minute))
	AfterSuite(tearDown)
	registerScenarios()
	ReportAfterSuite("verdicts", func(report Report) {
		ginkgoreport.PrintVerdicts(os.Stdout, "jobconform scale verdicts (Kubernetes "+env.version+", "+env.form+" form)", report)
		runs, err := ginkgoreport.Runs(report)
		if err != nil {
			fmt.Fprintf(os.Stdout, "scale figures: %v\n", err)
			return
		}
		fmt.Fprintf(os.Stdout, "\njobconform scale figures (Kubernetes %s, %s form; ratios to the built-in)\n\n%s\n", env.version, env.form, reports.ScaleTable(runs))
	})
}

// setUp brings up the cluster of the form's kwok nodes, the controllers
// under test and the slowed reference beside them, and warms them up.
func setUp(ctx SpecContext) {
	st, err := harness.Settings()
	Expect(err).NotTo(HaveOccurred())
	env.form = st.ScaleForm()
	shape, ok := catalog.ScaleForms[env.form]
	Expect(ok).To(BeTrue(), "scale form %q", env.form)
	env.progress, env.closeProgress, err = harness.OpenProgress(st.ProgressFile, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	if st.ProgressFile != "" {
		env.recordings = filepath.Dir(st.ProgressFile)
	}
	o := harness.OptionsOf(st)
	o.Progress, o.TempDir = GinkgoWriter, GinkgoT().TempDir()
	o.Cluster.Nodes, o.Cluster.NodesPerGroup, o.Cluster.NodeLeaseSeconds = shape.NodeGroups, shape.NodesPerGroup, shape.NodeLeaseSeconds
	o.Cluster.AuditUsers = []string{BuiltInUser, controllers.ReferenceUser, SlowedUser}
	fmt.Fprintf(GinkgoWriter, "scale suite (%s): a local cluster of %d kwok nodes\n", env.form, shape.NodeGroups*shape.NodesPerGroup)
	env.setup, err = harness.Setup(ctx, o)
	Expect(err).NotTo(HaveOccurred())
	if env.setup.Reference != nil {
		Expect(samePriority(ctx, env.setup.Cluster.Client(), controllers.ReferenceUser, SlowedUser)).To(Succeed())
		env.slowed, err = env.setup.StartReferenceWith(ctx, o.TempDir, controllers.Reference{Name: *Slowed.ManagedBy, MaxPodsPerSync: SlowedPodsPerSync, User: SlowedUser})
		Expect(err).NotTo(HaveOccurred())
	}
	env.client, env.version, err = kube.Client(env.setup.Kubeconfig, env.setup.Version)
	Expect(err).NotTo(HaveOccurred())
	setUpOracle(st.Oracle)
	if len(env.under) > 0 {
		warm, err := warmUpScenario(env.scenarios)
		Expect(err).NotTo(HaveOccurred())
		warmUp(ctx, warm, env.under[0])
	}
}

// setUpOracle makes the differential verdict from the options: the
// built-in's runs kept in o.Dir (or a directory of the suite's), or read
// from o.From; run on this cluster when the built-in is not under test.
func setUpOracle(o options.Oracle) {
	GinkgoHelper()
	if !o.Off && o.From == "" && o.Dir == "" {
		var err error
		env.oracleDir, err = os.MkdirTemp("", "jobconform-scale-oracle-")
		Expect(err).NotTo(HaveOccurred())
		o.Dir = env.oracleDir
	}
	env.oracle = &harness.Oracle{Off: o.Off, Twice: o.Twice, Store: oracle.Store{Dir: o.Dir},
		RunBuiltIn: func(ctx context.Context, s *scenarios.Scenario) *runner.Result {
			return measuredOnly(ctx, s, runner.BuiltIn)
		}}
	if o.From != "" {
		env.oracle.From = &oracle.Store{Dir: o.From}
	}
}

// tearDown stops what setUp started.
func tearDown() {
	var errs []error
	if env.slowed != nil {
		errs = append(errs, env.slowed.Stop())
	}
	if env.setup != nil {
		errs = append(errs, env.setup.Stop())
	}
	if env.closeProgress != nil {
		errs = append(errs, env.closeProgress())
	}
	if env.oracleDir != "" {
		errs = append(errs, os.RemoveAll(env.oracleDir))
	}
	Expect(errors.Join(errs...)).To(Succeed())
}

// registerScenarios adds a spec per scale scenario and controller.
func registerScenarios() {
	Describe("scale", func() {
		st, err := harness.Settings()
		if err != nil {
			It("reads the settings", func() { Fail(err.Error()) })
			return
		}
		all, err := catalog.LoadScale(st.ScaleForm())
		if err != nil {
			It("loads the scenarios", func() { Fail(err.Error()) })
			return
		}
		cs, err := harness.ControllersUnderTest()
		if err != nil {
			It("reads the controllers under test", func() { Fail(err.Error()) })
			return
		}
		env.scenarios, env.under = all, cs // for the warm-up
		for _, s := range harness.MyShard(Description, all, cs) {
			for _, c := range Controllers(cs, s.Name) {
				// The built-in's specs first (the specs run one at a time,
				// in random order).
				It(fmt.Sprintf("[%s] %s", c.Name, s.Name), Label(append([]string{"scale"}, s.Features...)...), harness.BuiltInFirst(c), func(ctx SpecContext) {
					run(ctx, s, c)
				}, SpecTimeout(s.Timeout.Duration+5*time.Minute))
			}
		}
	})
}

// samePriority gives users the API priority the built-in Job controller
// has (API Priority and Fairness: kube-system's service accounts are served
// at priority level workload-high; any other user at global-default, with
// half its concurrency), as an operator would for a production controller.
// Without it a saturated apiserver answered the reference 429 nine times
// as often as the built-in at 10,000 pods, and the table compared priority
// levels, not controllers.
func samePriority(ctx context.Context, client kubernetes.Interface, users ...string) error {
	var subjects []flowcontrolv1.Subject
	for _, u := range users {
		subjects = append(subjects, flowcontrolv1.Subject{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: u}})
	}
	fs := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: "jobconform-reference-controllers"},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload-high"},
			MatchingPrecedence:         850, // after kube-controller-manager's 800, before kube-system's 900
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByNamespaceType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: subjects,
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{flowcontrolv1.VerbAll}, APIGroups: []string{flowcontrolv1.APIGroupAll},
					Resources: []string{flowcontrolv1.ResourceAll}, ClusterScope: true, Namespaces: []string{flowcontrolv1.NamespaceEvery}}},
			}},
		},
	}
	_, err := client.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// Controllers are the controllers that run scenario name: those under
// test, and the slowed reference beside the reference where SlowedRuns.
func Controllers(under []runner.Controller, name string) []runner.Controller {
	out := append([]runner.Controller(nil), under...)
	for _, c := range under {
		if c.Name == runner.Reference.Name && len(c.Faults) == 0 && SlowedRuns(name) {
			out = append(out, Slowed)
		}
	}
	return out
}

// run is the spec of s and c: its measured run, the built-in's kept as the
// oracle and any other controller's compared with it (issue #56).
func run(ctx context.Context, s *scenarios.Scenario, c runner.Controller) {
	var figures *reports.Figures
	first := func() *runner.Result {
		r, f := measured(ctx, s, c)
		figures = f
		return r
	}
	rerun := func() *runner.Result { return measuredOnly(ctx, s, runner.BuiltIn) }
	r, again, err := env.oracle.Spec(ctx, s, c, first, rerun)
	Expect(err).NotTo(HaveOccurred(), "keeping the built-in's run as the oracle")
	if c.Name != runner.BuiltIn.Name { // the progress line said how the run ended before this
		fmt.Fprintf(env.progress, "[%s] %s: %s\n", c.Name, s.Name, compared(r))
	}
	harness.AttachFigures(r, s.Features, figures)
	if r.Skipped != "" {
		Skip(r.Skipped)
	}
	why := fmt.Sprintf("%s on Kubernetes %s: %s", c.Name, env.version, s.Description)
	Expect(r.Failures()).To(BeEmpty(), "%s", why)
	harness.ExpectAgain(again, why)
}

// compared is how r fared against the built-in's run, for the progress.
func compared(r *runner.Result) string {
	if !r.Compared {
		return r.OracleNote
	}
	failing := oracle.Failing(r.Differences)
	if len(failing) == 0 {
		return fmt.Sprintf("compared with the built-in's run: no difference (%d allowed)", len(r.Differences))
	}
	return fmt.Sprintf("compared with the built-in's run: %d differences (%s)", len(failing), failing[0])
}

// measuredOnly is measured without its figures: a run of the built-in's
// for the oracle alone.
func measuredOnly(ctx context.Context, s *scenarios.Scenario, c runner.Controller) *runner.Result {
	r, _ := measured(ctx, s, c)
	return r
}

// measured runs s against c alone on the cluster, measured, and waits
// until its namespace is gone (the next run's figures are its own).
func measured(ctx context.Context, s *scenarios.Scenario, c runner.Controller) (*runner.Result, *reports.Figures) {
	m, err := startMeter(c)
	Expect(err).NotTo(HaveOccurred())
	spec := fmt.Sprintf("[%s] %s", c.Name, s.Name)
	stop := showProgress(ctx, env.progress, env.client, spec)
	r := runner.RunWith(ctx, env.client, env.version, s, c, runner.Options{Pods: env.setup.Pods})
	stop(outcome(r))
	f := m.finish(r, s)
	if len(r.Failures()) > 0 && env.recordings != "" {
		keepRecording(r, filepath.Join(env.recordings, fmt.Sprintf("recording-%s-%s.jsonl.gz", c.Name, s.Name)))
	}
	if r.Namespace != "" {
		if gone, waited := awaitRemoved(ctx, env.progress, env.client, spec, r.Namespace); !gone {
			AddReportEntry("scale figures: the next spec shares the cluster", fmt.Sprintf("namespace %s was still being removed after %s: the next spec's figures include its removal", r.Namespace, waited.Round(time.Second)))
		}
	}
	return r, f
}

// outcome is how a run ended, for the progress lines.
func outcome(r *runner.Result) string {
	switch n := len(r.Failures()); {
	case r.Skipped != "":
		return "skipped"
	case n > 0:
		return fmt.Sprintf("failed (%d failures), %s", n, judged(r))
	}
	return "passed, " + judged(r)
}

// judged is how long the judging took, and how much of it the suite
// process had the processor for (the rest it waited: the cluster's
// processes share the machine).
func judged(r *runner.Result) string {
	return fmt.Sprintf("judged in %s (%s CPU)", r.Judging.Round(10*time.Millisecond), r.JudgingCPU.Round(10*time.Millisecond))
}

// meter measures one run: the controller's process and API requests, every
// process's CPU, the harness's own.
type meter struct {
	c          runner.Controller
	acct       cluster.Accounting
	auditFrom  int64
	ctlCPU     time.Duration
	clusterCPU time.Duration
	otherCPU   time.Duration // the reference controllers', beside the cluster's
	selfCPU    time.Duration
	errs       []string
}

func startMeter(c runner.Controller) (*meter, error) {
	acct, ok := env.setup.Cluster.(cluster.Accounting)
	if !ok {
		return nil, fmt.Errorf("the %s provider cannot measure its processes: the scale suite runs on the local provider", env.setup.Cluster.Provider())
	}
	m := &meter{c: c, acct: acct, auditFrom: apiaudit.Size(acct.AuditLog())}
	if err := m.resetPeak(); err != nil {
		m.errs = append(m.errs, err.Error())
	}
	m.ctlCPU, _ = m.usage()
	m.clusterCPU, m.otherCPU = clusterCPU(acct), referencesCPU()
	m.selfCPU, _ = process.SelfUsage()
	return m, nil
}

// usage is the controller's process's CPU and peak memory, and its name.
func (m *meter) usage() (time.Duration, uint64) {
	var cpu time.Duration
	var peak uint64
	var err error
	switch ref := m.reference(); {
	case m.c.Name == runner.BuiltIn.Name:
		cpu, peak, err = m.acct.Usage(cluster.ControllerManager)
	case ref != nil:
		cpu, peak, err = ref.Usage()
	default:
		err = fmt.Errorf("the harness does not run %s: its CPU and memory are not measured", m.c.Name)
	}
	if err != nil {
		m.errs = append(m.errs, err.Error())
	}
	return cpu, peak
}

func (m *meter) resetPeak() error {
	if m.c.Name == runner.BuiltIn.Name {
		return m.acct.ResetPeak(cluster.ControllerManager)
	}
	if ref := m.reference(); ref != nil {
		return ref.ResetPeak()
	}
	return nil
}

func (m *meter) reference() *controllers.Reference {
	switch m.c.Name {
	case runner.Reference.Name:
		return env.setup.Reference
	case Slowed.Name:
		return env.slowed
	}
	return nil
}

func (m *meter) process() string {
	switch m.c.Name {
	case runner.BuiltIn.Name:
		return string(cluster.ControllerManager)
	case runner.Reference.Name, Slowed.Name:
		return "reference-controller"
	}
	return ""
}

// finish reads the figures of the run r of s.
func (m *meter) finish(r *runner.Result, s *scenarios.Scenario) *reports.Figures {
	f := &reports.Figures{Process: m.process(), JudgeSeconds: r.Judging.Seconds(), JudgeCPUSeconds: r.JudgingCPU.Seconds(), RecordingEntries: len(r.Timeline)}
	f.Pods = int(ptr.Deref(s.Job.Completions, 0))
	fromTimeline(r.Timeline, f)
	cpu, peak := m.usage()
	f.CPUSeconds, f.PeakMemory = (cpu - m.ctlCPU).Seconds(), peak
	self, selfPeak := process.SelfUsage()
	f.HarnessCPUSeconds, f.HarnessPeakMemory = (self - m.selfCPU).Seconds(), selfPeak
	f.RunCPUSeconds = (clusterCPU(m.acct) - m.clusterCPU + referencesCPU() - m.otherCPU).Seconds() + f.HarnessCPUSeconds
	user := controllers.ReferenceUser
	switch m.c.Name {
	case runner.BuiltIn.Name:
		user = BuiltInUser
	case Slowed.Name:
		user = SlowedUser
	}
	if err := fromAudit(m.acct.AuditLog(), m.auditFrom, user, f); err != nil {
		m.errs = append(m.errs, err.Error())
	}
	var size counter // the recording as JSON lines, counted, not kept: 250 MB at 10,000 pods
	if err := r.Timeline.WriteLines(&size); err == nil {
		f.RecordingBytes = int(size)
	}
	for _, e := range m.errs {
		AddReportEntry("scale figures: not measured", e)
	}
	return f
}

// counter counts the bytes written to it.
type counter int64

func (c *counter) Write(p []byte) (int, error) {
	*c += counter(len(p))
	return len(p), nil
}

func clusterCPU(a cluster.Accounting) time.Duration {
	var total time.Duration
	for _, d := range a.CPU() {
		total += d
	}
	return total
}

func referencesCPU() time.Duration {
	var total time.Duration
	for _, r := range []*controllers.Reference{env.setup.Reference, env.slowed} {
		if r == nil {
			continue
		}
		if cpu, _, err := r.Usage(); err == nil {
			total += cpu
		}
	}
	return total
}
