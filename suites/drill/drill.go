// Package drill is the drill suite (label "drill"): upgrade–downgrade drills
// on a local cluster of their own each, with Jobs in flight while the control
// plane changes release, feature gates or emulated version in place (etcd
// keeps its data). For each drill and controller, an Ordered container runs
// the whole drill in its BeforeAll — flights started before the first change
// and again in every state, changes in the version-skew policy's order — and
// then has one spec per flight (its invariants, checked with the promises
// every release of the path makes, the changes counted as restarts) and one
// for the drill's own checks (fields survive every change; no finished pod
// lost in a handover). Register adds the specs to Ginkgo's suite.
//
// Settings (harness.Settings): as the conformance suite's, and what to fly:
// the catalog's drills (--drills; default options.DefaultDrills), or a path
// of releases with the default drill's flights (--drill-path), which may break
// the version-skew policy only with --unsupported-skew.
package drill

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/jobconform/jobconform/chaos"
	"github.com/jobconform/jobconform/internal/cluster"
	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/catalog"
	"github.com/jobconform/jobconform/suites/ginkgoreport"
	"github.com/jobconform/jobconform/suites/internal/controllers"
	"github.com/jobconform/jobconform/suites/internal/harness"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

// Description is the suite's name in Ginkgo's reports.
const Description = "jobconform drills"

var once sync.Once

// Register adds the suite's specs to Ginkgo's global suite, once.
func Register() { once.Do(register) }

// selected is the drills to run, from the environment.
func selected() ([]*scenarios.Drill, map[string]*scenarios.Scenario, error) {
	drills, flights, err := catalog.LoadDrills()
	if err != nil {
		return nil, nil, err
	}
	byName := map[string]*scenarios.Drill{}
	var names []string
	for _, d := range drills {
		byName[d.Name] = d
		names = append(names, d.Name)
	}
	st, err := harness.Settings()
	if err != nil {
		return nil, nil, err
	}
	if p := st.DrillPath; p != "" {
		path, err := scenarios.ParseDrillPath(p)
		if err != nil {
			return nil, nil, err
		}
		base := byName[options.DefaultDrills[0]]
		d := &scenarios.Drill{Name: "path " + p, Description: "the path " + p + " with the flights of " + base.Name,
			Path: path, Flights: base.Flights, TerminateAtSwap: base.TerminateAtSwap, UnsupportedSkew: st.UnsupportedSkew}
		if err := d.Validate(flights); err != nil {
			return nil, nil, fmt.Errorf("--drill-path %s: %w", p, err)
		}
		return []*scenarios.Drill{d}, flights, nil
	}
	want := options.DefaultDrills
	if len(st.Drills) > 0 {
		want = st.Drills
	}
	var out []*scenarios.Drill
	for _, n := range want {
		d := byName[strings.TrimSpace(n)]
		if d == nil {
			return nil, nil, fmt.Errorf("--drills: no drill %q (the catalog has %s)", n, strings.Join(names, ", "))
		}
		out = append(out, d)
	}
	return out, flights, nil
}

// flown is one flight of a drill: the scenario, the state it started in, its result.
type flown struct {
	state  int
	flight *scenarios.Scenario
	result *runner.Result
}

// referenceBinary is the reference controller built once by process 1 for
// every drill's cluster ("" when the settings name one).
var referenceBinary string

// shared is what process 1 hands every process.
type shared struct {
	ReferenceBinary string
	Oracle          sharedOracle
}

func register() {
	SynchronizedBeforeSuite(func(ctx SpecContext) []byte {
		o, err := harness.OptionsFromEnv()
		Expect(err).NotTo(HaveOccurred())
		st, err := harness.Settings()
		Expect(err).NotTo(HaveOccurred())
		cs, err := harness.ControllersUnderTest()
		Expect(err).NotTo(HaveOccurred())
		drills, flights, err := selected()
		Expect(err).NotTo(HaveOccurred())
		sh := shared{ReferenceBinary: o.ReferenceBinary, Oracle: oracleSetUp(st.Oracle, cs, drills, flights)}
		if sh.Oracle.OwnDir {
			DeferCleanup(os.RemoveAll, sh.Oracle.Dir) // after every process is done (SynchronizedAfterSuite)
		}
		if sh.ReferenceBinary == "" {
			dir, err := os.MkdirTemp("", "jobconform-drill-")
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(os.RemoveAll, dir) // after every process is done (SynchronizedAfterSuite)
			sh.ReferenceBinary, err = controllers.BuildReference(ctx, dir)
			Expect(err).NotTo(HaveOccurred())
		}
		data, _ := json.Marshal(sh)
		return data
	}, func(_ context.Context, data []byte) {
		var sh shared
		Expect(json.Unmarshal(data, &sh)).To(Succeed())
		referenceBinary, theOracle = sh.ReferenceBinary, oracleOf(sh.Oracle)
	}, NodeTimeout(10*time.Minute))

	Describe("drill", Label("drill"), func() {
		drills, flights, err := selected()
		if err != nil {
			It("loads the drills", func() { Fail(err.Error()) })
			return
		}
		cs, err := harness.ControllersUnderTest()
		if err != nil {
			It("reads the controllers under test", func() { Fail(err.Error()) })
			return
		}
		for _, d := range drills {
			for _, c := range cs {
				describeDrill(d, flights, c)
			}
		}
	})

	// The verdict table on the terminal.
	ReportAfterSuite("verdicts", func(report Report) {
		ginkgoreport.PrintVerdicts(os.Stdout, "jobconform drill verdicts", report)
	})
}

func describeDrill(d *scenarios.Drill, flights map[string]*scenarios.Scenario, c runner.Controller) {
	labels := Labels{"drill"}
	title := fmt.Sprintf("[%s] %s", c.Name, d.Name)
	if scenarios.CheckSkew(d.Path) != nil {
		labels = append(labels, "unsupported-skew")
		title += " (unsupported version skew)"
	}
	// ContinueOnFailure: one flight's failure must not hide the others'
	// verdicts. The built-in's drills first: the others' flights wait for its.
	Describe(title, Ordered, ContinueOnFailure, labels, harness.BuiltInFirst(c), func() {
		var run, again *drillRun
		BeforeAll(func(ctx SpecContext) {
			run, again = flyJudged(ctx, d, flights, c)
		}, NodeTimeout(45*time.Minute))

		It("keeps every field and every finished pod across each change", func() {
			AddReportEntry("drill path", describePath(d))
			AddReportEntry("per step", strings.Join(run.steps, "\n"))
			if err := scenarios.CheckSkew(d.Path); err != nil {
				AddReportEntry("unsupported version skew", err.Error())
			}
			for _, r := range []*drillRun{run, again} { // again: the built-in's drill flown again, judged alike
				if r == nil {
					continue
				}
				for _, s := range r.swaps {
					if s.Err != nil {
						Fail(fmt.Sprintf("%s failed: %v", s.Log, s.Err))
					}
				}
				Expect(r.survival).To(BeEmpty(), "drill %s", d.Name)
			}
		})

		for k := range d.Path {
			for _, name := range d.Flights {
				It(fmt.Sprintf("%s started at step %d (%s)", name, k, d.Path[k]), Label(flights[name].Features...), func(ctx SpecContext) {
					f := run.flight(k, name)
					if f == nil {
						Skip("the drill did not reach this step")
					}
					r := f.result
					r.Version = describeVersions(d)
					if c.Name != runner.BuiltIn.Name {
						judgeFlight(ctx, d, k, flights[name], c, r)
					}
					failures := r.Failures()
					if step, off := managedByOff(d, k); off && c.ManagedBy != nil {
						failures = twoControllerRisk(failures, r.Namespace+"/"+runner.JobName, step)
					}
					harness.Attach(r, f.flight.Features)
					if r.Skipped != "" {
						Skip(r.Skipped)
					}
					Expect(failures).To(BeEmpty(), "%s in drill %s", name, d.Name)
					if again != nil {
						if g := again.flight(k, name); g != nil {
							harness.ExpectAgain(g.result, fmt.Sprintf("%s in drill %s", name, d.Name))
						}
					}
				})
			}
		}
	})
}

// managedByOff tells whether the built-in's JobManagedBy gate is off in a
// state from k on (the flight started at k lives through it), naming it.
func managedByOff(d *scenarios.Drill, k int) (string, bool) {
	for i := k; i < len(d.Path); i++ {
		if on, set := d.Path[i].FeatureGates["JobManagedBy"]; set && !on {
			return fmt.Sprintf("step %d (%s)", i, d.Path[i]), true
		}
	}
	return "", false
}

// drillRun is a finished drill.
type drillRun struct {
	mu       sync.Mutex
	flown    []flown
	swaps    []chaos.Record
	survival []string
	steps    []string // per step, what was done and checked
}

func (r *drillRun) flight(k int, name string) *flown {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.flown {
		if r.flown[i].state == k && r.flown[i].flight.Name == name {
			return &r.flown[i]
		}
	}
	return nil
}

func (r *drillRun) records() []chaos.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]chaos.Record(nil), r.swaps...)
}

// fly runs drill d against controller c on a cluster of its own, named name.
func fly(ctx context.Context, name string, d *scenarios.Drill, flights map[string]*scenarios.Scenario, c runner.Controller) *drillRun {
	GinkgoHelper()
	o, err := harness.OptionsFromEnv()
	Expect(err).NotTo(HaveOccurred())
	if o.ProviderName() != "local" {
		Skip("drills change the control plane in place, which only the local provider can: " + o.ProviderName() + " cannot")
	}
	o.Progress, o.TempDir, o.ReferenceBinary = GinkgoWriter, GinkgoT().TempDir(), referenceBinary
	o.Cluster.Name = name
	o.Cluster.Version = d.Path[0].Version
	gates := map[string]bool{}
	for k, v := range o.Cluster.FeatureGates {
		gates[k] = v
	}
	for k, v := range d.Path[0].FeatureGates {
		gates[k] = v
	}
	o.Cluster.FeatureGates = gates
	o.Controllers = []runner.Controller{c}
	env, err := harness.Setup(ctx, o)
	harness.SkipIfCannotRunContainers(err)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(env.Stop)
	client := env.Cluster.Client()

	run := &drillRun{}
	low := lowest(d)
	var wg sync.WaitGroup
	start := func(k int) {
		for _, name := range d.Flights {
			f := *flights[name]
			f.Name = fmt.Sprintf("%s-s%d", name, k)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer GinkgoRecover()
				r := runner.RunWith(ctx, client, low, &f, c, runner.Options{Pods: env.Pods, Nodes: env.Nodes, Disruptions: run.records, AuditLog: env.AuditLog})
				r.Scenario = fmt.Sprintf("%s: %s at step %d", d.Name, name, k)
				run.mu.Lock()
				run.flown = append(run.flown, flown{state: k, flight: flights[name], result: r})
				run.mu.Unlock()
			}()
		}
	}
	start(0)
	for k := 1; k < len(d.Path); k++ {
		// Holding a state is the drill's input (how long Jobs run under it), not a wait for something.
		select {
		case <-ctx.Done():
			Fail("drill interrupted: " + ctx.Err().Error())
		case <-time.After(d.HoldTime()):
		}
		before := snapshotJobs(ctx, client)
		deleted := terminateOne(ctx, client, before, d.TerminateAtSwap)
		t0 := time.Now()
		change(ctx, env.Cluster, d, k, run)
		controllersBack(ctx, client)
		after := snapshotJobs(ctx, client)
		lost := survival(before, after, fmt.Sprintf("step %d (%s)", k, d.Path[k]))
		run.survival = append(run.survival, lost...)
		run.steps = append(run.steps, fmt.Sprintf("step %d → %s: changed in %s; %d pods deleted mid-trap before it; fields and counters of %d Jobs compared across it (%d lost); %d flights started after it",
			k, d.Path[k], time.Since(t0).Round(100*time.Millisecond), deleted, len(before), len(lost), len(d.Flights)))
		start(k)
	}
	wg.Wait()
	return run
}

// change moves the control plane from state k-1 to state k in the
// version-skew policy's order: on the way up kube-apiserver first, then the
// controller-manager and the scheduler; on the way down the reverse.
func change(ctx context.Context, cl cluster.Cluster, d *scenarios.Drill, k int, run *drillRun) {
	GinkgoHelper()
	from, to := d.Path[k-1], d.Path[k]
	order := []cluster.Component{cluster.APIServer, cluster.ControllerManager, cluster.Scheduler}
	if down(from, to) {
		order = []cluster.Component{cluster.ControllerManager, cluster.Scheduler, cluster.APIServer}
	}
	r := cluster.Restart{Version: to.Version, FeatureGates: to.FeatureGates, ResetFeatureGates: true, EmulatedVersion: emulated(d, to)}
	for _, comp := range order {
		t0 := time.Now()
		err := cl.RestartComponent(ctx, comp, r)
		rec := chaos.Record{Start: t0, Time: time.Now(), Log: fmt.Sprintf("step %d: %s %s → %s", k, comp, from, to),
			Effect: fmt.Sprintf("%s runs %s", comp, to), Err: err}
		if comp == cluster.APIServer {
			// The checks give the controllers' watches time to come back.
			rec.Action.APIServerRestart = &chaos.Restart{}
		}
		run.mu.Lock()
		run.swaps = append(run.swaps, rec)
		run.mu.Unlock()
		fmt.Fprintf(GinkgoWriter, "%s %s (%s)\n", t0.Format("15:04:05.000"), rec.Log, time.Since(t0).Round(time.Millisecond))
		Expect(err).NotTo(HaveOccurred(), rec.Log)
		if comp == cluster.ControllerManager {
			// Healthy is not initialised: a controller-manager whose apiserver
			// goes away while it builds its controllers exits (seen on the way
			// down, where the apiserver follows it).
			controllersBack(ctx, cl.Client())
		}
	}
}

// controllersBack waits until the controller-manager acts again after a
// change (a new namespace gets its default ServiceAccount): its informers
// relist with back-off once the apiserver is back, and the flights started
// next must not time out waiting for it.
func controllersBack(ctx context.Context, client kubernetes.Interface) {
	GinkgoHelper()
	ns, err := kube.CreateNamespaceWithin(ctx, client, "drill-probe", 2*time.Minute)
	Expect(err).NotTo(HaveOccurred(), "the controller-manager did not come back after the change")
	_ = kube.DeleteNamespace(ctx, client, ns)
}

// snapshotJobs reads every Job of the flights.
func snapshotJobs(ctx context.Context, client kubernetes.Interface) snapshot {
	GinkgoHelper()
	jobs, err := client.BatchV1().Jobs(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: "jobconform.io/scenario"})
	Expect(err).NotTo(HaveOccurred())
	out := snapshot{}
	for _, j := range jobs.Items {
		out[j.Namespace+"/"+j.Name] = j
	}
	return out
}

// terminateOne deletes one running pod of each named flight's live Jobs: its
// SIGTERM trap runs while the components change.
func terminateOne(ctx context.Context, client kubernetes.Interface, jobs snapshot, names []string) int {
	GinkgoHelper()
	n := 0
	for _, j := range jobs {
		if !flightOf(j, names) || kube.JobFinished(&j) {
			continue
		}
		pods, err := client.CoreV1().Pods(j.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + j.Name})
		Expect(err).NotTo(HaveOccurred())
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				err := client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{})
				fmt.Fprintf(GinkgoWriter, "%s deleted pod %s/%s before the change (err %v)\n", time.Now().Format("15:04:05.000"), p.Namespace, p.Name, err)
				if err == nil {
					n++
				}
				break
			}
		}
	}
	return n
}

func flightOf(j batchv1.Job, names []string) bool {
	s := j.Labels["jobconform.io/scenario"]
	for _, n := range names {
		if strings.HasPrefix(s, n+"-s") {
			return true
		}
	}
	return false
}
