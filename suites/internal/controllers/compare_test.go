package controllers_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/controller"
	"github.com/jobconform/jobconform/internal/cluster"
	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/internal/pods"
	"github.com/jobconform/jobconform/internal/recorder"
	"github.com/jobconform/jobconform/scenarios/invariants"
	"github.com/jobconform/jobconform/suites/internal/controllers"
)

func TestControllers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real cluster")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "reference controller against the built-in")
}

// A comparison scenario: the same Job and the same actions, once for each
// controller; the Job status sequences must be equal.
type comparison struct {
	name string
	job  func() *batchv1.Job
	// act disturbs the running Job (nil: nothing); settled says when to stop recording.
	act     func(ctx context.Context, client kubernetes.Interface, ns string, rec *recorder.Recorder)
	settled func(s batchv1.JobStatus) bool
}

func hasCondition(s batchv1.JobStatus, t batchv1.JobConditionType) bool {
	for _, c := range s.Conditions {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// deleteRunningPod waits for a Ready pod and the Job's ready=1, then deletes the pod.
func deleteRunningPod(ctx context.Context, client kubernetes.Interface, ns string, rec *recorder.Recorder) {
	GinkgoHelper()
	_, err := rec.WaitFor(ctx, time.Minute, "Job ready=1", func(e recorder.Entry) bool {
		return e.Kind == "Job" && ptr.Deref(e.Job().Status.Ready, 0) == 1
	})
	Expect(err).NotTo(HaveOccurred())
	list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	Expect(list.Items).To(HaveLen(1))
	Expect(client.CoreV1().Pods(ns).Delete(ctx, list.Items[0].Name, metav1.DeleteOptions{})).To(Succeed())
}

var comparisons = []comparison{
	{
		name: "KEP-3939 podReplacementPolicy Failed, SIGTERM-trapping pod deleted",
		job: func() *batchv1.Job {
			j := pods.NewJob("cmp", 1, pods.RunForever().TrapSIGTERM(5*time.Second, 143))
			j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
			return j
		},
		act: deleteRunningPod,
		settled: func(s batchv1.JobStatus) bool {
			return s.Failed == 1 && s.Active == 1 && ptr.Deref(s.Ready, 0) == 1 && ptr.Deref(s.Terminating, 0) == 0
		},
	},
	{
		name: "KEP-3939 podReplacementPolicy TerminatingOrFailed, SIGTERM-trapping pod deleted",
		job: func() *batchv1.Job {
			j := pods.NewJob("cmp", 1, pods.RunForever().TrapSIGTERM(15*time.Second, 143))
			j.Spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
			return j
		},
		act: deleteRunningPod,
		settled: func(s batchv1.JobStatus) bool {
			return s.Failed == 1 && s.Active == 1 && ptr.Deref(s.Ready, 0) == 1 && ptr.Deref(s.Terminating, 0) == 0
		},
	},
	{
		name: "deferred Failed: backoffLimit=0, one of two pods fails, the other traps SIGTERM",
		job: func() *batchv1.Job {
			b := pods.RunForever().TrapSIGTERM(3*time.Second, 143).ForIndex(1, pods.RunFor(2*time.Second, 1))
			j := pods.NewJob("cmp", 2, b)
			j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
			j.Spec.BackoffLimit = ptr.To[int32](0)
			return j
		},
		settled: func(s batchv1.JobStatus) bool { return hasCondition(s, batchv1.JobFailed) },
	},
	{
		// The deleted pod still runs its SIGTERM trap when its replacement
		// succeeds: SuccessCriteriaMet at once, Complete only after the trap.
		name: "deferred Complete: the replacement succeeds while the deleted pod still terminates",
		job: func() *batchv1.Job {
			j := pods.NewJob("cmp", 1, pods.Succeed(3*time.Second).TrapSIGTERM(20*time.Second, 143))
			j.Spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
			return j
		},
		act:     deleteRunningPod,
		settled: func(s batchv1.JobStatus) bool { return hasCondition(s, batchv1.JobComplete) },
	},
}

// clusterVersion is the Kubernetes release of the suite's cluster.
var clusterVersion string

var _ = Describe("reference controller", Ordered, func() {
	var (
		c      cluster.Cluster
		client kubernetes.Interface
	)
	var ref *controllers.Reference
	BeforeAll(func(ctx SpecContext) {
		var err error
		c, err = cluster.Create(ctx, "local", cluster.Config{Version: os.Getenv("JOBCONFORM_K8S_VERSION"), Progress: GinkgoWriter})
		Expect(err).NotTo(HaveOccurred())
		clusterVersion = c.Version()
		DeferCleanup(c.Stop)
		client = c.Client()
		bin, err := controllers.BuildReference(ctx, GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		Expect(controllers.GrantReference(ctx, client, controllers.ReferenceUser)).To(Succeed())
		kc, err := c.UserKubeconfig(controllers.ReferenceUser)
		Expect(err).NotTo(HaveOccurred())
		ref = &controllers.Reference{Binary: bin, Kubeconfig: kc, LogDir: c.LogDir()}
		Expect(ref.Start(ctx)).To(Succeed())
		DeferCleanup(ref.Stop)
	}, NodeTimeout(40*time.Minute))

	for _, cmp := range comparisons {
		It("matches the built-in controller's status sequence: "+cmp.name, func(ctx SpecContext) {
			var seqs [2][]string
			var wg sync.WaitGroup
			for i, managedBy := range []*string{nil, ptr.To(controller.DefaultName)} {
				wg.Add(1)
				go func() {
					defer GinkgoRecover()
					defer wg.Done()
					seqs[i] = runComparison(ctx, client, cmp, managedBy)
				}()
			}
			wg.Wait()
			AddReportEntry("built-in", strings.Join(seqs[0], "\n"))
			AddReportEntry("reference", strings.Join(seqs[1], "\n"))
			Expect(seqs[1]).To(Equal(seqs[0]), "reference (second) differs from built-in (first)")
		}, SpecTimeout(3*time.Minute))
	}

	// Exactly-once accounting across crashes: the controller is SIGKILLed 20
	// times while a 200-pod Job runs and pods are deleted under it; the final
	// counters must equal what the pods really did.
	It("counts every pod exactly once across 20 SIGKILLs", func(ctx SpecContext) {
		ns, err := kube.CreateNamespace(ctx, client, "crash", "")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx context.Context) { _ = kube.DeleteNamespace(ctx, client, ns) })
		rec, err := recorder.Start(ctx, client, ns)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(rec.Stop)
		job := pods.NewJob("crash", 200, pods.Succeed(3*time.Second))
		job.Spec.Parallelism = ptr.To[int32](20)
		job.Spec.BackoffLimit = ptr.To[int32](1000)
		job.Spec.ManagedBy = ptr.To(controller.DefaultName)
		_, err = client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())

		done := func() bool {
			j, err := client.BatchV1().Jobs(ns).Get(ctx, "crash", metav1.GetOptions{})
			return err == nil && (hasCondition(j.Status, batchv1.JobComplete) || hasCondition(j.Status, batchv1.JobFailed))
		}
		kills, deleted := 0, 0
		var killedAt []time.Time
		for kills < 20 && !done() {
			// Let the controller work a little, then crash it mid-flight.
			Eventually(func() int { return len(rec.Of("Pod")) }).WithContext(ctx).WithTimeout(time.Minute).Should(BeNumerically(">", 0))
			time.Sleep(time.Duration(700+100*(kills%5)) * time.Millisecond) // the crash moments are the input, not a wait for state
			if kills%2 == 0 {
				deleted += deleteSomeRunning(ctx, client, ns, 2)
			}
			killedAt = append(killedAt, time.Now())
			Expect(ref.Kill()).To(Succeed())
			kills++
			Expect(ref.Start(ctx)).To(Succeed())
		}
		GinkgoWriter.Printf("%d kills, %d pods deleted under the controller\n", kills, deleted)
		Expect(kills).To(Equal(20), "the Job finished before 20 kills: make it longer")

		final, err := rec.WaitFor(ctx, 4*time.Minute, "the Job finished", func(e recorder.Entry) bool {
			return e.Kind == "Job" && (hasCondition(e.Job().Status, batchv1.JobComplete) || hasCondition(e.Job().Status, batchv1.JobFailed))
		})
		Expect(err).NotTo(HaveOccurred())
		// Judge once the pods' watch has delivered what the Job's did.
		Expect(rec.CatchUp(ctx, client, ns, 10*time.Second)).To(Succeed())
		succeeded, failed, either := realOutcomes(rec)
		status := final.Job().Status
		expectInvariants(rec, "crash", job.Spec.ManagedBy, killedAt...)
		GinkgoWriter.Printf("final status succeeded=%d failed=%d; pods that succeeded %d, failed %d, deleted running then succeeded %d\n",
			status.Succeeded, status.Failed, succeeded, failed, either)
		Expect(hasCondition(status, batchv1.JobComplete)).To(BeTrue(), "the Job failed: %v", status.Conditions)
		// Every pod counted once: none lost, none twice; the ambiguous ones on either side.
		Expect(status.Succeeded+status.Failed).To(BeEquivalentTo(succeeded+failed+either), "counters vs pods that finished")
		Expect(status.Succeeded).To(BeNumerically(">=", succeeded), "succeeded counter vs pods that surely succeeded")
		Expect(status.Succeeded).To(BeNumerically("<=", succeeded+either), "succeeded counter vs pods that may have")
		Expect(status.Failed).To(BeNumerically(">=", failed), "failed counter vs pods that surely failed or were deleted")
		Expect(succeeded).To(BeNumerically(">=", 200-either))
		Expect(failed + either).To(BeNumerically(">=", deleted))

		list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		for _, p := range list.Items {
			Expect(p.Finalizers).NotTo(ContainElement(controller.TrackingFinalizer), "pod %s of the finished Job keeps the finalizer", p.Name)
		}
	}, SpecTimeout(8*time.Minute))

	// The KEP-3939 rollback drill's core: restarted with its gate off, the
	// controller replaces at once and stops reporting terminating; on again, it reports it.
	It("restarted with JobPodReplacementPolicy off, behaves as before KEP-3939", func(ctx SpecContext) {
		Expect(ref.Restart(ctx, map[string]bool{"JobPodReplacementPolicy": false})).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(ref.Restart(ctx, map[string]bool{})).To(Succeed()) })
		ns, err := kube.CreateNamespace(ctx, client, "gate-off", "")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func(ctx context.Context) { _ = kube.DeleteNamespace(ctx, client, ns) })
		rec, err := recorder.Start(ctx, client, ns)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(rec.Stop)
		job := pods.NewJob("gate-off", 1, pods.RunForever().TrapSIGTERM(20*time.Second, 143))
		job.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
		job.Spec.ManagedBy = ptr.To(controller.DefaultName)
		_, err = client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred())
		deleteRunningPod(ctx, client, ns, rec)
		_, err = rec.WaitFor(ctx, time.Minute, "the deleted pod counted failed while it terminates", func(e recorder.Entry) bool {
			return e.Kind == "Job" && e.Job().Status.Failed == 1
		})
		Expect(err).NotTo(HaveOccurred())
		for _, e := range rec.Of("Job") {
			Expect(e.Job().Status.Terminating).To(BeNil(), "status.terminating reported with the gate off")
		}
	})

	It("wrote no Job status the apiserver rejected as Invalid", func(ctx SpecContext) {
		m, err := ref.Metrics(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(m).To(ContainSubstring("jobconform_reference_job_controller_syncs_total"))
		Expect(m).NotTo(ContainSubstring(`status_write_errors_total{reason="Invalid"}`))
		// Metrics restart with the process; the log spans every run.
		log, err := os.ReadFile(ref.LogPath())
		Expect(err).NotTo(HaveOccurred())
		Expect(string(log)).To(ContainSubstring("reference Job controller running"))
		Expect(string(log)).NotTo(ContainSubstring("BUG: the apiserver rejected a Job status write"))
	})
})

// deleteSomeRunning deletes up to n running pods (grace 1s) and returns how many.
func deleteSomeRunning(ctx context.Context, client kubernetes.Interface, ns string, n int) int {
	list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0
	}
	count := 0
	for _, p := range list.Items {
		if count == n {
			break
		}
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			// Only if still as listed: a pod that succeeded meanwhile is no
			// running pod deleted (seen once: 19 deleted-running counted of 20).
			pre := metav1.Preconditions{ResourceVersion: ptr.To(p.ResourceVersion)}
			if client.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1), Preconditions: &pre}) == nil {
				count++
			}
		}
	}
	return count
}

// realOutcomes counts, from the recorded timeline, the pods that succeeded,
// the pods that failed (phase Failed, or deleted before succeeding), and the
// pods that were deleted while running and then succeeded within their grace
// period: under podReplacementPolicy TerminatingOrFailed a controller that saw
// such a pod terminating counts it failed (KEP-3939), one that first saw it
// Succeeded (it was down meanwhile) counts it succeeded — either is right,
// once.
func realOutcomes(rec *recorder.Recorder) (succeeded, failed, either int) {
	outcome := map[types.UID]string{}
	for _, e := range rec.Of("Pod") {
		p := e.Pod()
		switch {
		case p.Status.Phase == corev1.PodSucceeded && (outcome[p.UID] == "terminating" || p.DeletionTimestamp != nil):
			// Deleted first (the test deletes running pods only), even when
			// no version of it showed the deletion before the success
			// (rehearsal of 2026-12-02: 19 of 20 deleted pods counted).
			outcome[p.UID] = "either"
		case p.Status.Phase == corev1.PodSucceeded && outcome[p.UID] != "either":
			outcome[p.UID] = "succeeded"
		case outcome[p.UID] == "succeeded" || outcome[p.UID] == "either":
		case p.Status.Phase == corev1.PodFailed:
			outcome[p.UID] = "failed"
		case p.DeletionTimestamp != nil && outcome[p.UID] != "failed":
			outcome[p.UID] = "terminating"
		case e.Type == recorder.Deleted:
			outcome[p.UID] = "failed"
		default:
			if _, ok := outcome[p.UID]; !ok {
				outcome[p.UID] = "running"
			}
		}
	}
	for _, o := range outcome {
		switch o {
		case "succeeded":
			succeeded++
		case "failed", "terminating":
			failed++
		case "either":
			either++
		}
	}
	return succeeded, failed, either
}

// runComparison runs one scenario in a fresh namespace and returns the Job's
// status sequence.
func runComparison(ctx context.Context, client kubernetes.Interface, cmp comparison, managedBy *string) []string {
	GinkgoHelper()
	who := "builtin"
	if managedBy != nil {
		who = "reference"
	}
	ns, err := kube.CreateNamespace(ctx, client, "cmp-"+who, "")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx context.Context) { _ = kube.DeleteNamespace(ctx, client, ns) })
	rec, err := recorder.Start(ctx, client, ns)
	Expect(err).NotTo(HaveOccurred())
	defer rec.Stop()
	job := cmp.job()
	job.Spec.ManagedBy = managedBy
	_, err = client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{})
	Expect(err).NotTo(HaveOccurred())
	if cmp.act != nil {
		cmp.act(ctx, client, ns, rec)
	}
	_, err = rec.WaitFor(ctx, 2*time.Minute, who+" Job settled", func(e recorder.Entry) bool {
		return e.Kind == "Job" && cmp.settled(e.Job().Status)
	})
	if err != nil {
		AddReportEntry(who+" timeline", rec.Dump("Job", "Pod"))
	}
	Expect(err).NotTo(HaveOccurred())
	Expect(rec.CatchUp(ctx, client, ns, 10*time.Second)).To(Succeed())
	expectInvariants(rec, "cmp", managedBy)
	return statusSequence(rec)
}

// expectInvariants checks every invariant over the recorded run; restarts
// are when the controller was killed (it forgets its backoff record then).
func expectInvariants(rec *recorder.Recorder, job string, managedBy *string, restarts ...time.Time) {
	GinkgoHelper()
	ctx := invariants.Context{Job: job, Version: clusterVersion, Finalizer: batchv1.JobTrackingFinalizer, End: time.Now(), Restarts: restarts}
	if managedBy != nil {
		ctx.Finalizer = controller.TrackingFinalizer
	}
	for _, r := range invariants.CheckAll(ctx, rec.Entries()) {
		Expect(r.Violations).To(BeEmpty(), "invariant %s broken", r.Invariant)
	}
}

// statusSequence renders each distinct Job status, in order: counters,
// uncounted pods and True conditions with their reasons.
func statusSequence(rec *recorder.Recorder) []string {
	var out []string
	for _, e := range rec.Of("Job") {
		s := e.Job().Status
		var conds []string
		for _, c := range s.Conditions {
			conds = append(conds, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
		}
		us, uf := 0, 0
		if u := s.UncountedTerminatedPods; u != nil {
			us, uf = len(u.Succeeded), len(u.Failed)
		}
		line := fmt.Sprintf("active=%d ready=%d terminating=%d succeeded=%d failed=%d uncounted=%d/%d %v",
			s.Active, ptr.Deref(s.Ready, -1), ptr.Deref(s.Terminating, -1), s.Succeeded, s.Failed, us, uf, conds)
		if len(out) == 0 || out[len(out)-1] != line {
			out = append(out, line)
		}
	}
	return out
}
