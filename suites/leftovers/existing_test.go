package leftovers_test

// jobconform on a cluster it did not create (issue #47): a cluster started
// by `jobconform cluster --nodes kubelet` in a process of its own, reached by
// its kubeconfig alone, with Chaos Mesh installed as its operator would
// (CRDs and controller-manager, built from Chaos Mesh's Go module). A run of
// the conformance and chaos suites passes, its pod chaos carried out by
// Chaos Mesh; after it, and after a run interrupted mid-drain, the cluster
// holds nothing of jobconform's and every node is as before.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/jobconform/jobconform/chaos"
	"github.com/jobconform/jobconform/internal/k8sbin"
	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/suites/ginkgoreport"
	"github.com/jobconform/jobconform/suites/internal/controllers"
	"github.com/jobconform/jobconform/suites/leftovers"
)

// conformanceSample and chaosSample are the scenarios the test runs (both
// whole catalogues on such a cluster were run by hand: docs/running.md):
// the chaos ones that apply there (pod chaos, the API's node disruption,
// evictions) and some that do not (a kubelet stopped, kube-apiserver and
// kube-controller-manager restarted; for the reference, the harness's own
// process, a restart applies).
const (
	conformanceSample = `prp-failed-sigterm|readiness-after-delay|deferred-failed-backoff-limit|pod-failure-policy-failindex`
	chaosSample       = `pod-kill-prp-failed|pod-failure-is-no-failure|drain-ignored-by-pod-failure-policy|out-of-service-taint-on-live-node-prp-failed|` +
		`evictions-ignored-by-pod-failure-policy|node-loss-prp-failed-out-of-service|apiserver-restart-during-success-criteria|controller-crash-during-failure-target`
)

func TestRunOnAClusterItDidNotCreate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster with kubelet nodes and builds Chaos Mesh")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "jobconform")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "../../cmd/jobconform").CombinedOutput(); err != nil {
		t.Fatalf("build jobconform: %v\n%s", err, out)
	}
	kubeconfig, podFlags := startCluster(ctx, t, bin, dir)
	client, _, err := kube.Client(kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	before := nodeStates(ctx, t, client)
	pause := flagValue(podFlags, "--pause-image")
	installChaosMesh(ctx, t, kubeconfig, pause, dir)

	// A whole run: conformance (a sample) and chaos, both controllers.
	art := filepath.Join(dir, "run")
	args := append([]string{"run", "--kubeconfig", kubeconfig, "--suites", "conformance,chaos", "--allow-node-disruption",
		"--artifacts", art, "--focus", `(conformance \[\w+\] (` + conformanceSample + `)|chaos \[\w+\] (` + chaosSample + `))$`}, podFlags...)
	out, err := runJobconform(ctx, bin, args...)
	if err != nil {
		t.Fatalf("jobconform run on the cluster: %v\n%s", err, tail(out, 80))
	}
	runs, err := ginkgoreport.Load(filepath.Join(art, "cluster", "report-chaos.json"))
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]string{}
	for _, r := range runs {
		verdicts[r.Controller+" "+r.Scenario] = r.Verdict
		switch {
		case r.Verdict == "skip" && !strings.HasPrefix(r.Skipped, "not applicable on this cluster: its chaos ") && !strings.Contains(r.Skipped, " only"):
			t.Errorf("%s %s skipped without a reason of the cluster's: %q", r.Controller, r.Scenario, r.Skipped)
		case r.Scenario == "pod-kill-prp-failed" || r.Scenario == "pod-failure-is-no-failure":
			if r.Verdict != "PASS" {
				t.Errorf("%s %s: %s %v", r.Controller, r.Scenario, r.Verdict, r.Failures)
			}
			if len(r.Chaos) == 0 || len(r.Chaos[0].Experiment) < 2 || !strings.HasPrefix(r.Chaos[0].Experiment[0], "PodChaos ") {
				t.Errorf("%s %s: the recording shows no Chaos Mesh experiment: %+v", r.Controller, r.Scenario, r.Chaos)
			}
		}
	}
	// Applicable on this cluster, and so judged: the API's node disruption;
	// not: what stops kubelets or the control plane.
	for _, want := range []string{"builtin drain-ignored-by-pod-failure-policy", "reference out-of-service-taint-on-live-node-prp-failed", "builtin evictions-ignored-by-pod-failure-policy",
		"reference controller-crash-during-failure-target"} {
		if verdicts[want] != "PASS" {
			t.Errorf("%s: %q, want PASS", want, verdicts[want])
		}
	}
	for _, want := range []string{"builtin node-loss-prp-failed-out-of-service", "builtin apiserver-restart-during-success-criteria", "builtin controller-crash-during-failure-target"} {
		if verdicts[want] != "skip" {
			t.Errorf("%s: %q, want not applicable", want, verdicts[want])
		}
	}
	assertClean(ctx, t, client, before, "after the run")

	// The same pod chaos by jobconform itself: the same verdicts, no experiment.
	art = filepath.Join(dir, "builtin-engine")
	args = append([]string{"run", "--kubeconfig", kubeconfig, "--suites", "chaos", "--chaos-engine", "builtin",
		"--artifacts", art, "--focus", `chaos \[\w+\] (pod-kill-prp-failed|pod-failure-is-no-failure)$`}, podFlags...)
	if out, err := runJobconform(ctx, bin, args...); err != nil {
		t.Fatalf("jobconform run --chaos-engine builtin: %v\n%s", err, tail(out, 80))
	}
	if runs, err = ginkgoreport.Load(filepath.Join(art, "cluster", "report-chaos.json")); err != nil {
		t.Fatal(err)
	}
	judged := 0
	for _, r := range runs {
		if r.Verdict == "skip" {
			continue
		}
		judged++
		if want := verdicts[r.Controller+" "+r.Scenario]; r.Verdict != want {
			t.Errorf("%s %s: %s by jobconform's engine, %s by Chaos Mesh", r.Controller, r.Scenario, r.Verdict, want)
		}
		if len(r.Chaos) == 0 || r.Chaos[0].Experiment != nil {
			t.Errorf("%s %s: jobconform's engine, yet the chaos log says %+v", r.Controller, r.Scenario, r.Chaos)
		}
	}
	if judged != 4 {
		t.Errorf("jobconform's engine judged %d runs, want 4 (2 scenarios × 2 controllers)", judged)
	}
	assertClean(ctx, t, client, before, "after the run with jobconform's engine")

	// A run interrupted while a node is drained: it undoes the drain and
	// removes its namespaces before it exits.
	art = filepath.Join(dir, "interrupted")
	args = append([]string{"run", "--kubeconfig", kubeconfig, "--suites", "chaos", "--allow-node-disruption", "--controllers", "builtin",
		"--artifacts", art, "--focus", `drain-ignored-by-pod-failure-policy$`}, podFlags...)
	cmd := exec.CommandContext(ctx, bin, args...)
	var outBuf strings.Builder
	cmd.Stdout, cmd.Stderr = &outBuf, &outBuf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Ctrl-C reaches the whole group
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	drained := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		return slices.ContainsFunc(nodes.Items, func(n corev1.Node) bool { _, ok := chaos.ChangedBy(&n); return ok && n.Spec.Unschedulable }), nil
	})
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	err = cmd.Wait()
	if drained != nil {
		t.Fatalf("no node was drained within 5 minutes: %v\n%s", drained, tail(outBuf.String(), 60))
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Errorf("the interrupted run exited %v, want an interrupted run's failure\n%s", err, tail(outBuf.String(), 40))
	}
	if !strings.Contains(outBuf.String(), "nothing of run ") {
		t.Errorf("the interrupted run did not say it removed what it left:\n%s", tail(outBuf.String(), 40))
	}
	assertClean(ctx, t, client, before, "after the interrupted run")
}

// startCluster starts `jobconform cluster --nodes kubelet` in a process
// group of its own and returns its kubeconfig and the pod flags it prints;
// the cluster stops when the test ends.
func startCluster(ctx context.Context, t *testing.T, bin, dir string) (string, []string) {
	t.Helper()
	logPath := filepath.Join(dir, "cluster.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "cluster", "--nodes", "kubelet", "--node-count", "3")
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(2 * time.Minute):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		logf.Close()
	})
	runLine := regexp.MustCompile(`^\s*jobconform run --kubeconfig (\S+)(.*)$`)
	timeout := time.After(10 * time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				data, _ := os.ReadFile(logPath)
				if strings.Contains(string(data), "cannot run containers") {
					t.Skipf("kubelet nodes cannot run here: %s", tail(string(data), 5))
				}
				t.Fatalf("jobconform cluster ended before it was ready:\n%s", tail(string(data), 40))
			}
			if m := runLine.FindStringSubmatch(l); m != nil {
				return m[1], strings.Fields(m[2])
			}
		case <-timeout:
			t.Fatal("jobconform cluster not ready within 10 minutes")
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
	}
}

// installChaosMesh installs Chaos Mesh on the cluster as its operator
// would: its CRDs, and its controller-manager running against it; both
// removed when the test ends.
func installChaosMesh(ctx context.Context, t *testing.T, kubeconfig, pauseImage, dir string) {
	t.Helper()
	set, err := (&k8sbin.Builder{Progress: testWriter{t}}).EnsureChaosMesh(ctx)
	if err != nil {
		t.Fatalf("Chaos Mesh does not build here: %v", err)
	}
	dc, err := controllers.Dynamic(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := controllers.InstallChaosMeshCRDs(ctx, dc, set.CRDDir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = controllers.UninstallChaosMeshCRDs(context.Background(), dc, set.CRDDir) })
	cm := &controllers.ChaosMesh{Binary: set.ControllerManager, Kubeconfig: kubeconfig, LogDir: dir, PauseImage: pauseImage}
	if err := cm.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cm.Stop() })
}

// nodeState is what a run may change on a node and must put back.
type nodeState struct {
	Unschedulable bool
	Taints        []string
	Labels        map[string]string
	Annotations   []string
}

func nodeStates(ctx context.Context, t *testing.T, c kubernetes.Interface) map[string]nodeState {
	t.Helper()
	list, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]nodeState{}
	for _, n := range list.Items {
		s := nodeState{Unschedulable: n.Spec.Unschedulable, Labels: n.Labels}
		for _, tt := range n.Spec.Taints {
			s.Taints = append(s.Taints, tt.Key+"="+tt.Value+":"+string(tt.Effect))
		}
		for k := range n.Annotations {
			if strings.HasPrefix(k, "jobconform.io/") {
				s.Annotations = append(s.Annotations, k)
			}
		}
		out[n.Name] = s
	}
	return out
}

// assertClean fails unless the cluster holds nothing of jobconform's and
// its nodes are as before.
func assertClean(ctx context.Context, t *testing.T, c kubernetes.Interface, before map[string]nodeState, when string) {
	t.Helper()
	if left, err := leftovers.Find(ctx, c, ""); err != nil || len(left) > 0 {
		t.Errorf("%s the cluster holds: %q (%v)", when, left, err)
	}
	// Nor a namespace of another label, nor the preemptors' class.
	nss, err := c.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range nss.Items {
		if !slices.Contains([]string{"default", "kube-system", "kube-public", "kube-node-lease"}, ns.Name) {
			t.Errorf("%s a namespace the cluster did not have: %s", when, ns.Name)
		}
	}
	if after := nodeStates(ctx, t, c); !reflect.DeepEqual(after, before) {
		t.Errorf("%s the nodes are not as before:\nbefore %+v\nafter  %+v", when, before, after)
	}
}

func runJobconform(ctx context.Context, bin string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	return string(out), err
}

func flagValue(flags []string, name string) string {
	for i, f := range flags {
		if f == name && i+1 < len(flags) {
			return flags[i+1]
		}
	}
	return ""
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
