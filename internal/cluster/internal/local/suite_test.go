package local_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/apiaudit"
	"github.com/jobconform/jobconform/internal/cluster/internal/local"
	"github.com/jobconform/jobconform/internal/cluster/internal/local/kubeletnode"
	"github.com/jobconform/jobconform/internal/k8sbin"
	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/internal/pods"
	"github.com/jobconform/jobconform/internal/recorder"
	"github.com/jobconform/jobconform/internal/release"
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
		out = []string{release.Default}
	}
	return out
}

// NodeKindsEnv lists the node kinds the specs run on (comma-separated);
// default kwok,kubelet. On a machine that cannot run containers the kubelet
// specs skip, saying why.
const NodeKindsEnv = "JOBCONFORM_NODE_KINDS"

func nodeKinds() []string {
	var out []string
	for _, k := range strings.Split(os.Getenv(NodeKindsEnv), ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		out = []string{local.NodesKwok, local.NodesKubelet}
	}
	return out
}

var _ = Describe("local provider", func() {
	for _, v := range versions() {
		for _, kind := range nodeKinds() {
			Context("Kubernetes "+v+" on "+kind+" nodes", Ordered, func() {
				var (
					c      *local.Cluster
					client kubernetes.Interface
					// The run's artifacts directory as --artifacts gives it:
					// not $ARTIFACTS itself, which the logs must not follow.
					artifacts = filepath.Join(cmp.Or(os.Getenv("ARTIFACTS"), os.TempDir()), "local-provider")
				)
				BeforeAll(func(ctx SpecContext) {
					var err error
					c, err = local.Start(ctx, local.Config{Version: v, Progress: GinkgoWriter, KwokStages: pods.KwokStages(), NodeKind: kind,
						AuditUsers: []string{jobControllerUser, "jobconform-admin"}, Artifacts: artifacts})
					if errors.Is(err, kubeletnode.ErrCannotRun) {
						Skip(err.Error())
					}
					Expect(err).NotTo(HaveOccurred())
					DeferCleanup(c.Stop)
					client = c.Client()
				}, NodeTimeout(40*time.Minute)) // may build the binaries first

				It("keeps its logs in the artifacts directory it was given", func() {
					Expect(c.LogDir()).To(HavePrefix(filepath.Join(artifacts, "clusters") + string(filepath.Separator)))
					Expect(filepath.Join(c.LogDir(), "kube-apiserver.log")).To(BeARegularFile())
				})

				// newNamespace gives a spec its own namespace and a recorder on it.
				newNamespace := func(ctx context.Context, prefix string) (string, *recorder.Recorder) {
					ns, err := kube.CreateNamespace(ctx, client, prefix, "")
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
					want, _ := release.Parse(v)
					Expect(info.GitVersion).To(Equal(want))
					set, err := (&k8sbin.Builder{Progress: GinkgoWriter}).Ensure(ctx, v)
					Expect(err).NotTo(HaveOccurred())
					out, err := exec.CommandContext(ctx, set.Path(k8sbin.APIServer), "--version").Output()
					Expect(err).NotTo(HaveOccurred())
					Expect(strings.TrimSpace(string(out))).To(Equal("Kubernetes " + want))
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
					job := pods.NewJob("prp-failed", 1, pods.RunForever().TrapSIGTERM(5*time.Second, 143))
					c.Pods().Adapt(&job.Spec.Template)
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
					// The controller's clock for the backoff is the container's finishedAt
					// (whole seconds, upstream getFinishedTime), not when the Failed phase
					// reached us: on a loaded kubelet the phase update trails the exit.
					finishedAt := failed.Pod().Status.ContainerStatuses[0].State.Terminated.FinishedAt.Time
					Expect(repl.Time.Sub(finishedAt)).To(BeNumerically(">=", backoff-time.Second), "replacement before the pod-failure backoff ran out (counted from finishedAt %s)", finishedAt)
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
					job := pods.NewJob("prp-tof", 1, pods.RunForever().TrapSIGTERM(20*time.Second, 143))
					c.Pods().Adapt(&job.Spec.Template)
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
					// Well before the 20s trap ends: the clock is the deletion, not the exit.
					Expect(latency).To(BeNumerically("<", backoff+8*time.Second))
					waitJob(ctx, rec, "terminating=0 after the pod ended", func(s batchv1.JobStatus) bool {
						return s.Active == 1 && s.Failed == 1 && ptr.Deref(s.Terminating, -1) == 0
					})
				})

				It("readiness gates: Ready stays False until the gate is True, and follows it", func(ctx SpecContext) {
					ns, rec := newNamespace(ctx, "gate")
					gate := corev1.PodConditionType("jobconform.io/gate")
					tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}}
					pods.RunForever().WithGates(gate).Apply(&tmpl)
					c.Pods().Adapt(&tmpl)
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

				It("pod behaviours: SIGTERM cut at the grace period (137), ready after a delay, OnFailure restarts in place", func(ctx SpecContext) {
					ns, rec := newNamespace(ctx, "behave")

					By("a trap longer than the grace period is killed at the grace period with 137")
					tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To[int64](2)}}
					pods.RunForever().TrapSIGTERM(30*time.Second, 143).WithReadyAfter(2 * time.Second).Apply(&tmpl)
					c.Pods().Adapt(&tmpl)
					_, err := client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "slow", Annotations: tmpl.Annotations}, Spec: tmpl.Spec}, metav1.CreateOptions{})
					Expect(err).NotTo(HaveOccurred())
					started := waitPodEntry(ctx, rec, "slow running", func(p *corev1.Pod) bool { return p.Name == "slow" && p.Status.Phase == corev1.PodRunning })
					Expect(kube.PodCondition(started.Pod(), corev1.ContainersReady)).To(Equal(corev1.ConditionFalse), "ready before its ready-after delay")
					ready := waitPodEntry(ctx, rec, "slow ready", func(p *corev1.Pod) bool {
						return p.Name == "slow" && kube.PodCondition(p, corev1.PodReady) == corev1.ConditionTrue
					})
					Expect(ready.Time.Sub(started.Time)).To(BeNumerically(">=", time.Second), "ready-after 2s (API times resolve to the second)")
					t0 := time.Now()
					Expect(client.CoreV1().Pods(ns).Delete(ctx, "slow", metav1.DeleteOptions{})).To(Succeed())
					killed := waitPodEntry(ctx, rec, "slow Failed", func(p *corev1.Pod) bool { return p.Name == "slow" && p.Status.Phase == corev1.PodFailed })
					Expect(killed.Pod().Status.ContainerStatuses[0].State.Terminated.ExitCode).To(BeEquivalentTo(137))
					// Killed at the 2s grace, long before the 30s trap would end: the
					// upper bound leaves a loaded machine room (5.3s seen beside make run).
					Expect(killed.Time.Sub(t0)).To(And(BeNumerically(">=", 2*time.Second), BeNumerically("<", 15*time.Second)))
					_, err = rec.WaitFor(ctx, 30*time.Second, "slow removed by its node", func(e recorder.Entry) bool { return e.Name == "slow" && e.Type == recorder.Deleted })
					Expect(err).NotTo(HaveOccurred())

					By("restartPolicy OnFailure: the container restarts in the same pod, the first time at once, the next after the kubelet's 10s crash-loop back-off")
					job := pods.NewJob("onfailure", 1, pods.Fail(3))
					c.Pods().Adapt(&job.Spec.Template)
					job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
					job.Spec.BackoffLimit = ptr.To[int32](3)
					_, err = client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{})
					Expect(err).NotTo(HaveOccurred())
					restartedAfter := func(n int32) (recorder.Entry, time.Duration) {
						GinkgoHelper()
						e := waitPodEntry(ctx, rec, fmt.Sprintf("running again after %d restarts", n), func(p *corev1.Pod) bool {
							cs := p.Status.ContainerStatuses
							return kube.IsOwnedBy(p, "onfailure") && len(cs) == 1 && cs[0].RestartCount == n && cs[0].State.Running != nil
						})
						cs := e.Pod().Status.ContainerStatuses[0]
						last := cs.LastTerminationState.Terminated
						Expect(last).NotTo(BeNil())
						Expect(last.ExitCode).To(BeEquivalentTo(3))
						return e, cs.State.Running.StartedAt.Sub(last.FinishedAt.Time)
					}
					restarted, wait1 := restartedAfter(1)
					Expect(wait1).To(BeNumerically("<", 5*time.Second), "the first restart waits for no back-off")
					_, wait2 := restartedAfter(2)
					Expect(wait2).To(BeNumerically(">=", 9*time.Second), "restarted before the 10s crash-loop back-off (API times resolve to the second)")
					waitJob(ctx, rec, "Failed with BackoffLimitExceeded", func(s batchv1.JobStatus) bool {
						for _, c := range s.Conditions {
							if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue && c.Reason == batchv1.JobReasonBackoffLimitExceeded {
								return true
							}
						}
						return false
					})
					Expect(rec.PodNames()).To(ContainElement(restarted.Name))
					owned := 0
					for _, n := range rec.PodNames() {
						if strings.HasPrefix(n, "onfailure-") {
							owned++
						}
					}
					Expect(owned).To(Equal(1), "OnFailure must restart in place, not create pods")
				})

				It("restarts components while etcd keeps the data, and loses and regains a node group", func(ctx SpecContext) {
					ns, _ := newNamespace(ctx, "restart")
					_, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keep"}}, metav1.CreateOptions{})
					Expect(err).NotTo(HaveOccurred())

					Expect(c.RestartComponent(ctx, local.APIServer, local.Restart{})).To(Succeed())
					_, err = client.CoreV1().ConfigMaps(ns).Get(ctx, "keep", metav1.GetOptions{})
					Expect(err).NotTo(HaveOccurred(), "data lost across an apiserver restart")
					// A restart that is not a crash lets the apiserver shut down: with
					// watches open it used to outlast the grace and be killed.
					log, err := os.ReadFile(local.LogPath(c, local.APIServer))
					Expect(err).NotTo(HaveOccurred())
					Expect(string(log)).To(MatchRegexp(`=== jobconform: kube-apiserver stopped: exited \S+ after SIGTERM`))

					Expect(c.RestartComponent(ctx, local.ControllerManager, local.Restart{FeatureGates: map[string]bool{"AllAlpha": false}})).To(Succeed())
					Expect(local.Args(c, local.ControllerManager)).To(ContainElement(ContainSubstring("AllAlpha=false")))
					Expect(c.RestartComponent(ctx, local.ControllerManager, local.Restart{ResetFeatureGates: true})).To(Succeed())
					Expect(local.Args(c, local.ControllerManager)).NotTo(ContainElement(ContainSubstring("AllAlpha=false")))

					By("a crashed scheduler comes back")
					Expect(c.RestartComponent(ctx, local.Scheduler, local.Restart{Crash: true})).To(Succeed())

					By("a deleted Node object is registered again")
					Expect(client.CoreV1().Nodes().Delete(ctx, c.NodesOf(1)[0], metav1.DeleteOptions{})).To(Succeed())
					Eventually(func() bool {
						_, err := client.CoreV1().Nodes().Get(ctx, c.NodesOf(1)[0], metav1.GetOptions{})
						return apierrors.IsNotFound(err)
					}).WithContext(ctx).WithTimeout(30 * time.Second).Should(BeTrue())
					Expect(c.RecreateNodes(ctx, 1)).To(Succeed())
					Expect(c.WaitNodesReady(ctx, time.Minute)).To(Succeed())

					By("a pod bound to a lost node runs once the node returns")
					Expect(c.LoseNode(ctx, c.NodesOf(0)[0])).To(Succeed())
					Expect(c.NodeGroupRunning(0)).To(BeFalse())
					tmpl := pods.NewJob("bound", 1, pods.RunForever()).Spec.Template
					c.Pods().Adapt(&tmpl)
					bound := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bound-while-lost", Annotations: tmpl.Annotations, Labels: tmpl.Labels}, Spec: tmpl.Spec}
					bound.Spec.NodeName = c.NodesOf(0)[0]
					_, err = client.CoreV1().Pods(ns).Create(ctx, bound, metav1.CreateOptions{})
					Expect(err).NotTo(HaveOccurred())
					Expect(c.ReturnNode(ctx, c.NodesOf(0)[0])).To(Succeed())
					Expect(c.NodeGroupRunning(0)).To(BeTrue())
					Eventually(func(g Gomega) corev1.PodPhase {
						p, err := client.CoreV1().Pods(ns).Get(ctx, bound.Name, metav1.GetOptions{})
						g.Expect(err).NotTo(HaveOccurred())
						return p.Status.Phase
					}).WithContext(ctx).WithTimeout(30 * time.Second).Should(Equal(corev1.PodRunning))

					By("a Job still completes on the restarted cluster")
					after := pods.NewJob("after-restart", 3, pods.Succeed(time.Second))
					c.Pods().Adapt(&after.Spec.Template)
					_, err = client.BatchV1().Jobs(ns).Create(ctx, after, metav1.CreateOptions{})
					Expect(err).NotTo(HaveOccurred())
					Eventually(func(g Gomega) int32 {
						j, err := client.BatchV1().Jobs(ns).Get(ctx, "after-restart", metav1.GetOptions{})
						g.Expect(err).NotTo(HaveOccurred())
						return j.Status.Succeeded
					}).WithContext(ctx).WithTimeout(60 * time.Second).Should(BeEquivalentTo(3))
				})

				if kind != local.NodesKwok {
					return // the control-plane swaps below do not depend on the nodes
				}

				It("starts again a kwok that died of its start race, and no other crash", func(ctx SpecContext) {
					// A stand-in that dies as kwok v0.8.0 did restarting under running
					// pods, then is the real kwok; then one that dies otherwise.
					dir := GinkgoT().TempDir()
					real := local.SetKwokPath(c, "")
					DeferCleanup(func() { local.SetKwokPath(c, real) })
					fake := func(name, crash string) string {
						script := fmt.Sprintf("#!/bin/sh\nif [ ! -e %[1]s/%[2]s.ran ]; then touch %[1]s/%[2]s.ran; printf '%%s\\n' %[3]q >&2; exit 2; fi\nexec %[4]s \"$@\"\n", dir, name, crash, real)
						path := dir + "/" + name
						Expect(os.WriteFile(path, []byte(script), 0o755)).To(Succeed())
						return path
					}
					race := "fatal error: concurrent map writes  goroutine 54 [running]: github.com/wzshiming/easycel.getTypeValue"
					Expect(c.StopNodeGroup(2)).To(Succeed())
					local.SetKwokPath(c, fake("race", race))
					Expect(c.StartNodeGroup(ctx, 2)).To(Succeed())
					Expect(c.NodeGroupRunning(2)).To(BeTrue())
					log, err := os.ReadFile(local.GroupLogPath(c, 2))
					Expect(err).NotTo(HaveOccurred())
					Expect(strings.Count(string(log), race)).To(Equal(1))
					Expect(string(log[strings.LastIndex(string(log), "=== jobconform: start"):])).NotTo(ContainSubstring(race), "the last start is not the one that died")

					Expect(c.StopNodeGroup(2)).To(Succeed())
					local.SetKwokPath(c, fake("other", "panic: runtime error: invalid memory address or nil pointer dereference"))
					err = c.StartNodeGroup(ctx, 2)
					Expect(err).To(MatchError(ContainSubstring("nil pointer dereference")))
					Expect(c.NodeGroupRunning(2)).To(BeFalse())
					local.SetKwokPath(c, real)
					Expect(c.StartNodeGroup(ctx, 2)).To(Succeed())
					Expect(c.WaitNodesReady(ctx, time.Minute)).To(Succeed())
				})

				It("swaps the apiserver for another release's binary and back (upgrade drill)", func(ctx SpecContext) {
					other := otherVersion(v)
					if other == "" {
						Skip("needs a newer release than " + v + " in " + VersionsEnv)
					}
					ns, _ := newNamespace(ctx, "swap")
					_, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keep"}}, metav1.CreateOptions{})
					Expect(err).NotTo(HaveOccurred())
					for _, to := range []string{other, v} {
						Expect(c.RestartComponent(ctx, local.APIServer, local.Restart{Version: to})).To(Succeed())
						info, err := client.Discovery().ServerVersion()
						Expect(err).NotTo(HaveOccurred())
						want, _ := release.Parse(to)
						Expect(info.GitVersion).To(Equal(want))
						Expect(c.ComponentVersion(local.APIServer)).To(Equal(want))
						_, err = client.CoreV1().ConfigMaps(ns).Get(ctx, "keep", metav1.GetOptions{})
						Expect(err).NotTo(HaveOccurred(), "data lost across the swap to %s", to)
					}
				})

				It("logs the requests of the audited users only (apiaudit)", func() {
					f, err := os.Open(c.AuditLog())
					Expect(err).NotTo(HaveOccurred())
					defer f.Close()
					counts, err := apiaudit.Count(f)
					Expect(err).NotTo(HaveOccurred())
					// The specs above created Jobs as the admin, and the
					// built-in controller their pods.
					Expect(counts[apiaudit.Key{User: "jobconform-admin", Verb: "create", Resource: "jobs"}]).To(BeNumerically(">", 0))
					Expect(counts[apiaudit.Key{User: jobControllerUser, Verb: "create", Resource: "pods"}]).To(BeNumerically(">", 0))
					Expect(counts[apiaudit.Key{User: jobControllerUser, Verb: "update", Resource: "jobs/status"}]).To(BeNumerically(">", 0))
					for _, k := range counts.Keys() {
						Expect(k.User).To(BeElementOf(jobControllerUser, "jobconform-admin"))
					}
				})

				// Last of the Ordered specs: each apiserver restart here costs ~13s of
				// downtime, and enough of it in a row lets node leases expire.
				It("runs the apiserver as the previous minor (--emulated-version, KEP-4330) and back", func(ctx SpecContext) {
					ns, _ := newNamespace(ctx, "emulated")
					_, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "keep"}}, metav1.CreateOptions{})
					Expect(err).NotTo(HaveOccurred())
					sv, err := release.Parse(v)
					Expect(err).NotTo(HaveOccurred())
					var major, minor int
					_, err = fmt.Sscanf(sv, "v%d.%d.", &major, &minor)
					Expect(err).NotTo(HaveOccurred())
					for _, ev := range []string{fmt.Sprintf("%d.%d", major, minor-1), fmt.Sprintf("%d.%d", major, minor)} {
						Expect(c.RestartComponent(ctx, local.APIServer, local.Restart{EmulatedVersion: ev})).To(Succeed())
						Expect(local.Args(c, local.APIServer)).To(ContainElement("--emulated-version=" + ev))
						_, err = client.CoreV1().ConfigMaps(ns).Get(ctx, "keep", metav1.GetOptions{})
						Expect(err).NotTo(HaveOccurred(), "data lost across --emulated-version=%s", ev)
					}
				})
			})
		}
	}
})

// jobControllerUser is who the built-in Job controller acts as
// (--use-service-account-credentials).
const jobControllerUser = "system:serviceaccount:kube-system:job-controller"

// backoff is the built-in controller's delay before replacing a first failed
// pod (DefaultJobPodFailureBackOff); API timestamps round it by up to a second.
const backoff = 10 * time.Second

// otherVersion is the newest configured release newer than v ("" if none):
// drills upgrade the apiserver first, as Kubernetes' skew policy asks.
func otherVersion(v string) string {
	pv, _ := release.Parse(v)
	other := ""
	for _, w := range versions() {
		pw, _ := release.Parse(w)
		if release.Minor(pw) > release.Minor(pv) && (other == "" || release.Minor(pw) > release.Minor(other)) {
			other = pw
		}
	}
	return other
}

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
