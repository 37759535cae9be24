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
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/controller"
	"github.com/jobconform/jobconform/scenarios/pods"
	"github.com/jobconform/jobconform/suites/cluster/local"
	"github.com/jobconform/jobconform/suites/controllers"
	"github.com/jobconform/jobconform/suites/kube"
	"github.com/jobconform/jobconform/suites/recorder"
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
			j := kube.NewJob("cmp", 1, pods.RunForever().TrapSIGTERM(5*time.Second, 143))
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
			j := kube.NewJob("cmp", 1, pods.RunForever().TrapSIGTERM(15*time.Second, 143))
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
			j := kube.NewJob("cmp", 2, b)
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
			j := kube.NewJob("cmp", 1, pods.Succeed(3*time.Second).TrapSIGTERM(20*time.Second, 143))
			j.Spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
			return j
		},
		act:     deleteRunningPod,
		settled: func(s batchv1.JobStatus) bool { return hasCondition(s, batchv1.JobComplete) },
	},
}

var _ = Describe("reference controller", Ordered, func() {
	var (
		c      *local.Cluster
		client kubernetes.Interface
	)
	BeforeAll(func(ctx SpecContext) {
		var err error
		c, err = local.Start(ctx, local.Config{Version: os.Getenv("JOBCONFORM_K8S_VERSION"), Progress: GinkgoWriter})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.Stop)
		client = c.Client()
		bin, err := controllers.BuildReference(ctx, GinkgoT().TempDir())
		Expect(err).NotTo(HaveOccurred())
		Expect(controllers.GrantReference(ctx, client)).To(Succeed())
		kc, err := c.ClientKubeconfig(controllers.ReferenceUser)
		Expect(err).NotTo(HaveOccurred())
		ref := &controllers.Reference{Binary: bin, Kubeconfig: kc, LogDir: c.LogDir()}
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
})

// runComparison runs one scenario in a fresh namespace and returns the Job's
// status sequence.
func runComparison(ctx context.Context, client kubernetes.Interface, cmp comparison, managedBy *string) []string {
	GinkgoHelper()
	who := "builtin"
	if managedBy != nil {
		who = "reference"
	}
	ns, err := kube.CreateNamespace(ctx, client, "cmp-"+who)
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
	return statusSequence(rec)
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
