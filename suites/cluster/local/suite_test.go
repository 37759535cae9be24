package local_test

import (
	"context"
	"os"
	"strings"
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

	"github.com/jobconform/jobconform/scenarios/pods"
	"github.com/jobconform/jobconform/suites/cluster/local"
	"github.com/jobconform/jobconform/suites/k8sbin"
	"github.com/jobconform/jobconform/suites/kube"
	"github.com/jobconform/jobconform/suites/recorder"
)

// VersionsEnv lists the Kubernetes releases the integration specs run at
// (comma-separated); default: the harness's default release.
const VersionsEnv = "JOBCONFORM_K8S_VERSIONS"

func TestLocalProvider(t *testing.T) {
	if testing.Short() {
		t.Skip("integration specs start real clusters; skipped with -short")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "local provider")
}

func versions() []string {
	var out []string
	for _, v := range strings.Split(os.Getenv(VersionsEnv), ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		out = []string{k8sbin.DefaultVersion}
	}
	return out
}

var _ = Describe("local provider", func() {
	for _, v := range versions() {
		Context("Kubernetes "+v, Ordered, func() {
			var (
				c      *local.Cluster
				client kubernetes.Interface
			)
			BeforeAll(func(ctx SpecContext) {
				var err error
				c, err = local.Start(ctx, local.Config{Version: v, Progress: GinkgoWriter})
				Expect(err).NotTo(HaveOccurred())
				DeferCleanup(c.Stop)
				client = c.Client()
			}, NodeTimeout(40*time.Minute)) // may build the binaries first

			// newNamespace gives a spec its own namespace and a recorder on it.
			newNamespace := func(ctx context.Context, prefix string) (string, *recorder.Recorder) {
				ns, err := kube.CreateNamespace(ctx, client, prefix)
				Expect(err).NotTo(HaveOccurred())
				DeferCleanup(func(ctx context.Context) { _ = kube.DeleteNamespace(ctx, client, ns) })
				rec, err := recorder.Start(ctx, client, ns)
				Expect(err).NotTo(HaveOccurred())
				DeferCleanup(func() {
					if CurrentSpecReport().Failed() {
						AddReportEntry("timeline", rec.Dump("Job", "Pod", "Event"))
					}
					rec.Stop()
				})
				return ns, rec
			}

			It("serves the requested version with every node Ready", func(ctx SpecContext) {
				info, err := client.Discovery().ServerVersion()
				Expect(err).NotTo(HaveOccurred())
				want, _ := k8sbin.ParseVersion(v)
				Expect(info.GitVersion).To(Equal(want))
				nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
				Expect(err).NotTo(HaveOccurred())
				Expect(nodes.Items).To(HaveLen(3))
				for _, n := range nodes.Items {
					Expect(n.Labels).To(HaveKey(local.NodeGroupLabel))
				}
				Expect(local.ListenAddresses(c)).To(HaveEach(HavePrefix("127.0.0.1:")))
			})

			It("podReplacementPolicy Failed: no replacement until the terminating pod is Failed", func(ctx SpecContext) {
				ns, rec := newNamespace(ctx, "prp-failed")
				job := kube.NewJob("prp-failed", 1, pods.RunForever().TrapSIGTERM(5*time.Second, 143))
				job.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
				_, err := client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{})
				Expect(err).NotTo(HaveOccurred())

				first := waitPod(ctx, rec, "a running pod", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
				t0 := time.Now()
				Expect(client.CoreV1().Pods(ns).Delete(ctx, first.Name, metav1.DeleteOptions{})).To(Succeed())

				waitJob(ctx, rec, "terminating=1 active=0", func(s batchv1.JobStatus) bool {
					return ptr.Deref(s.Terminating, -1) == 1 && s.Active == 0
				})
				failed := waitPodEntry(ctx, rec, "the deleted pod Failed", func(p *corev1.Pod) bool {
					return p.Name == first.Name && p.Status.Phase == corev1.PodFailed
				})
				repl := waitPodEntry(ctx, rec, "a replacement pod", func(p *corev1.Pod) bool { return p.Name != first.Name })

				By("the trap held the pod for its 5s and it exited 143")
				Expect(failed.Time.Sub(t0)).To(BeNumerically(">=", 5*time.Second))
				Expect(failed.Pod().Status.ContainerStatuses[0].State.Terminated.ExitCode).To(BeEquivalentTo(143))
				By("no other pod existed before the deleted one reached Failed")
				Expect(repl.Seq).To(BeNumerically(">", failed.Seq))
				Expect(repl.Time.Sub(failed.Time)).To(BeNumerically(">=", backoff-time.Second), "replacement before the pod-failure backoff ran out")
				for _, e := range rec.Of("Pod") {
					if e.Seq < failed.Seq {
						Expect(e.Name).To(Equal(first.Name), "pod %s appeared while %s was terminating", e.Name, first.Name)
					}
				}
				waitJob(ctx, rec, "active=1 failed=1 terminating=0", func(s batchv1.JobStatus) bool {
					return s.Active == 1 && s.Failed == 1 && ptr.Deref(s.Terminating, -1) == 0
				})
			})

			// The built-in controller applies its pod-failure backoff (10s for the
			// first failure) before any replacement; under TerminatingOrFailed its
			// clock starts at the deletion, so the trap here outlasts it to show the
			// replacement running beside the still-terminating pod.
			It("podReplacementPolicy TerminatingOrFailed: replacement while the old pod terminates, which counts as failed", func(ctx SpecContext) {
				ns, rec := newNamespace(ctx, "prp-tof")
				job := kube.NewJob("prp-tof", 1, pods.RunForever().TrapSIGTERM(20*time.Second, 143))
				job.Spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
				_, err := client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{})
				Expect(err).NotTo(HaveOccurred())

				first := waitPod(ctx, rec, "a running pod", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
				t0 := time.Now()
				Expect(client.CoreV1().Pods(ns).Delete(ctx, first.Name, metav1.DeleteOptions{})).To(Succeed())

				waitJob(ctx, rec, "failed=1 terminating=1 before any replacement", func(s batchv1.JobStatus) bool {
					return s.Active == 0 && s.Failed == 1 && ptr.Deref(s.Terminating, -1) == 1
				})
				repl := waitPodEntry(ctx, rec, "a replacement pod", func(p *corev1.Pod) bool { return p.Name != first.Name })
				waitJob(ctx, rec, "active=1 failed=1 terminating=1", func(s batchv1.JobStatus) bool {
					return s.Active == 1 && s.Failed == 1 && ptr.Deref(s.Terminating, -1) == 1
				})
				failed := waitPodEntry(ctx, rec, "the deleted pod Failed", func(p *corev1.Pod) bool {
					return p.Name == first.Name && p.Status.Phase == corev1.PodFailed
				})
				latency := repl.Time.Sub(t0)
				GinkgoWriter.Printf("replacement created %s after the deletion\n", latency)
				By("the replacement came while the deleted pod still terminated, one backoff after the deletion")
				Expect(repl.Seq).To(BeNumerically("<", failed.Seq))
				Expect(latency).To(BeNumerically(">=", backoff-time.Second), "replacement before the pod-failure backoff ran out")
				Expect(latency).To(BeNumerically("<", backoff+4*time.Second))
				waitJob(ctx, rec, "terminating=0 after the pod ended", func(s batchv1.JobStatus) bool {
					return s.Active == 1 && s.Failed == 1 && ptr.Deref(s.Terminating, -1) == 0
				})
			})

			It("readiness gates: Ready stays False until the gate is True, and follows it", func(ctx SpecContext) {
				ns, rec := newNamespace(ctx, "gate")
				gate := corev1.PodConditionType("jobconform.io/gate")
				tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}}
				pods.RunForever().WithGates(gate).Apply(&tmpl)
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gated", Annotations: tmpl.Annotations}, Spec: tmpl.Spec}
				_, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
				Expect(err).NotTo(HaveOccurred())

				running := waitPodEntry(ctx, rec, "containers ready", func(p *corev1.Pod) bool {
					return kube.PodCondition(p, corev1.ContainersReady) == corev1.ConditionTrue
				})
				Expect(kube.PodCondition(running.Pod(), corev1.PodReady)).To(Equal(corev1.ConditionFalse))
				Expect(readyReason(running.Pod())).To(Equal("ReadinessGatesNotReady"))

				setGate(ctx, client, ns, "gated", gate, corev1.ConditionTrue)
				gateSet := waitPodEntry(ctx, rec, "the gate condition recorded", func(p *corev1.Pod) bool {
					return kube.PodCondition(p, gate) == corev1.ConditionTrue
				})
				readyAt := waitPodEntry(ctx, rec, "Ready=True", func(p *corev1.Pod) bool {
					return kube.PodCondition(p, corev1.PodReady) == corev1.ConditionTrue
				})
				Expect(readyAt.Seq).To(BeNumerically(">=", gateSet.Seq), "Ready became True before the gate was set")

				setGate(ctx, client, ns, "gated", gate, corev1.ConditionFalse)
				waitPodEntry(ctx, rec, "Ready=False after the gate flipped back", func(p *corev1.Pod) bool {
					return kube.PodCondition(p, gate) == corev1.ConditionFalse && kube.PodCondition(p, corev1.PodReady) == corev1.ConditionFalse
				})
			})

			It("restarts components while etcd keeps the data, and loses and regains a node group", func(ctx SpecContext) {
				ns, _ := newNamespace(ctx, "restart")
				_, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keep"}}, metav1.CreateOptions{})
				Expect(err).NotTo(HaveOccurred())

				Expect(c.RestartComponent(ctx, local.APIServer)).To(Succeed())
				_, err = client.CoreV1().ConfigMaps(ns).Get(ctx, "keep", metav1.GetOptions{})
				Expect(err).NotTo(HaveOccurred(), "data lost across an apiserver restart")

				Expect(c.RestartComponent(ctx, local.ControllerManager, local.WithFeatureGates(map[string]bool{"AllAlpha": false}))).To(Succeed())
				Expect(local.Args(c, local.ControllerManager)).To(ContainElement(ContainSubstring("AllAlpha=false")))

				Expect(c.StopNodeGroup(0)).To(Succeed())
				Expect(c.NodeGroupRunning(0)).To(BeFalse())
				Expect(c.StartNodeGroup(ctx, 0)).To(Succeed())
				Expect(c.NodeGroupRunning(0)).To(BeTrue())

				By("a Job still completes on the restarted cluster")
				_, err = client.BatchV1().Jobs(ns).Create(ctx, kube.NewJob("after-restart", 3, pods.Succeed(time.Second)), metav1.CreateOptions{})
				Expect(err).NotTo(HaveOccurred())
				Eventually(func(g Gomega) int32 {
					j, err := client.BatchV1().Jobs(ns).Get(ctx, "after-restart", metav1.GetOptions{})
					g.Expect(err).NotTo(HaveOccurred())
					return j.Status.Succeeded
				}).WithContext(ctx).WithTimeout(60 * time.Second).Should(BeEquivalentTo(3))
			})
		})
	}
})

// backoff is the built-in controller's delay before replacing a first failed
// pod (DefaultJobPodFailureBackOff); API timestamps round it by up to a second.
const backoff = 10 * time.Second

func waitPodEntry(ctx context.Context, rec *recorder.Recorder, what string, match func(*corev1.Pod) bool) recorder.Entry {
	GinkgoHelper()
	e, err := rec.WaitFor(ctx, 60*time.Second, what, func(e recorder.Entry) bool {
		return e.Kind == "Pod" && e.Type != recorder.Deleted && match(e.Pod())
	})
	Expect(err).NotTo(HaveOccurred())
	return e
}

func waitPod(ctx context.Context, rec *recorder.Recorder, what string, match func(*corev1.Pod) bool) *corev1.Pod {
	GinkgoHelper()
	return waitPodEntry(ctx, rec, what, match).Pod()
}

func waitJob(ctx context.Context, rec *recorder.Recorder, what string, match func(batchv1.JobStatus) bool) recorder.Entry {
	GinkgoHelper()
	e, err := rec.WaitFor(ctx, 60*time.Second, "Job status "+what, func(e recorder.Entry) bool {
		return e.Kind == "Job" && match(e.Job().Status)
	})
	Expect(err).NotTo(HaveOccurred())
	return e
}

func readyReason(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Reason
		}
	}
	return ""
}

// setGate writes a readiness-gate condition through pods/status, as the
// controller owning the gate would.
func setGate(ctx context.Context, client kubernetes.Interface, ns, name string, gate corev1.PodConditionType, s corev1.ConditionStatus) {
	GinkgoHelper()
	patch := `{"status":{"conditions":[{"type":"` + string(gate) + `","status":"` + string(s) + `","lastTransitionTime":"` + time.Now().UTC().Format(time.RFC3339) + `"}]}}`
	_, err := client.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	Expect(err).NotTo(HaveOccurred())
}
