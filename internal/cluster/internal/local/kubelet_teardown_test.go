package local_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/cluster/internal/local"
	"github.com/jobconform/jobconform/internal/cluster/internal/local/kubeletnode"
	"github.com/jobconform/jobconform/internal/pods"
	"github.com/jobconform/jobconform/internal/release"
)

// started is what a cluster with running pods on kubelet nodes consists of.
type started struct {
	Dirs       []string // the nodes' directories
	Containers []int    // container processes
	Daemons    []int    // kubelets, containerds and the control plane
}

// startWithPods starts a one-kubelet cluster with two running pods, one of
// which traps SIGTERM for longer than any teardown may wait.
// The cluster's logs go to logDir ("": a directory of the test's own).
func startWithPods(ctx context.Context, t *testing.T, logDir string) (*local.Cluster, started) {
	t.Helper()
	if logDir == "" {
		logDir = t.TempDir()
	}
	c, err := local.Start(ctx, local.Config{Version: release.Default, NodeKind: local.NodesKubelet, NodeGroups: 1, LogDir: logDir})
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range []pods.Behavior{pods.RunForever().TrapSIGTERM(120*time.Second, 143), pods.RunForever()} {
		tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To[int64](300)}}
		b.Apply(&tmpl)
		c.Pods().Adapt(&tmpl)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Annotations: tmpl.Annotations}, Spec: tmpl.Spec}
		if _, err := c.Client().CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			c.Stop()
			t.Fatal(err)
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := c.Client().CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, p := range l.Items {
			if p.Status.Phase != corev1.PodRunning {
				return false, nil
			}
		}
		return len(l.Items) == 2, nil
	})
	if err != nil {
		c.Stop()
		t.Fatalf("pods not running: %v", err)
	}
	s := started{Dirs: c.KubeletNodeDirs(), Containers: c.ContainerPIDs(), Daemons: c.PIDs()}
	if len(s.Containers) < 4 { // two sandboxes, two containers (and their sleeps)
		c.Stop()
		t.Fatalf("container processes in the node's cgroups: %v; want the pods' sandboxes and containers", s.Containers)
	}
	return c, s
}

func alive(pids []int) []int {
	var out []int
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			// A zombie still answers; it is gone once reaped, which its parent does.
			if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !zombie(data) {
				out = append(out, pid)
			}
		}
	}
	return out
}

func zombie(stat []byte) bool {
	for i := len(stat) - 1; i > 0; i-- {
		if stat[i] == ')' {
			return i+2 < len(stat) && stat[i+2] == 'Z'
		}
	}
	return false
}

func checkNothingLeft(t *testing.T, s started) {
	t.Helper()
	for _, d := range s.Dirs {
		if left := kubeletnode.Leftovers(d); len(left) > 0 {
			t.Errorf("node %s left: %v", d, left)
		}
	}
	if pids := alive(s.Containers); len(pids) > 0 {
		t.Errorf("container processes still running: %v", pids)
	}
	if pids := alive(s.Daemons); len(pids) > 0 {
		t.Errorf("kubelet, containerd or control-plane processes still running: %v", pids)
	}
}

func skipUnlessKubeletNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster with kubelet nodes; skipped with -short")
	}
	if err := kubeletnode.Check(); errors.Is(err, kubeletnode.ErrCannotRun) {
		t.Skip(err.Error())
	}
}

// Stop ends every container, even one whose SIGTERM trap outlasts any wait,
// and leaves no process, mount, cgroup or directory.
func TestKubeletNodesStopLeavesNothing(t *testing.T) {
	skipUnlessKubeletNodes(t)
	ctx := context.Background()
	c, s := startWithPods(ctx, t, "")
	if err := c.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	checkNothingLeft(t, s)
}

const (
	childEnv    = "JOBCONFORM_TEARDOWN_CHILD"
	childLogEnv = "JOBCONFORM_TEARDOWN_CHILD_LOGS"
)

// TestKubeletNodesSweptAfterSIGKILL: a harness SIGKILLed with pods running
// takes its kubelets and containerds with it (PDEATHSIG), but containerd's
// shims and the containers are daemonised and live on; the next start sweeps
// them away.
func TestKubeletNodesSweptAfterSIGKILL(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		// Its logs go where the parent removes them: SIGKILLed, it cannot.
		_, s := startWithPods(context.Background(), t, os.Getenv(childLogEnv))
		json.NewEncoder(os.Stdout).Encode(s)
		select {} // until SIGKILLed
	}
	skipUnlessKubeletNodes(t)
	child := exec.Command(os.Args[0], "-test.run", "^TestKubeletNodesSweptAfterSIGKILL$", "-test.v")
	child.Env = append(os.Environ(), childEnv+"=1", childLogEnv+"="+t.TempDir())
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	var s started
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if json.Unmarshal(sc.Bytes(), &s) == nil && len(s.Dirs) > 0 {
			break
		}
	}
	if len(s.Dirs) == 0 {
		t.Fatal("the child harness did not report its cluster")
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	// The daemons die with the harness; the containers must not be gone
	// already, or this test would show nothing about the sweep.
	if err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		return len(alive(s.Daemons)) == 0, nil
	}); err != nil {
		t.Fatalf("kubelet, containerd or control plane outlived the SIGKILLed harness: %v", alive(s.Daemons))
	}
	if len(alive(s.Containers)) == 0 {
		t.Fatal("no container outlived the SIGKILLed harness: the sweep is untested")
	}
	kubeletnode.Sweep()
	checkNothingLeft(t, s)
}
