package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// childrenOf lists the pids whose parent is pid, from /proc.
func childrenOf(pid int) []int {
	var out []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		data, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
		rest := string(data[strings.LastIndexByte(string(data), ')')+1:])
		f := strings.Fields(rest)
		if len(f) > 1 {
			if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
				child, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
				out = append(out, child)
			}
		}
	}
	return out
}

// TestClusterCommandCleansUpOnSignal starts "jobconform cluster", interrupts
// it once the cluster is ready, and checks that every process it started is
// gone and its state directory removed.
func TestClusterCommandCleansUpOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real cluster")
	}
	bin := filepath.Join(t.TempDir(), "jobconform")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "cluster", "--node-count", "2")
			cmd.Env = append(os.Environ(), "ARTIFACTS="+t.TempDir())
			stdout, _ := cmd.StdoutPipe()
			cmd.Stderr = cmd.Stdout
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

			ready := make(chan string, 1)
			go func() {
				sc := bufio.NewScanner(stdout)
				re := regexp.MustCompile(`export KUBECONFIG=(\S+)`)
				for sc.Scan() {
					if m := re.FindStringSubmatch(sc.Text()); m != nil {
						ready <- m[1]
					}
				}
				close(ready)
			}()
			var kubeconfig string
			select {
			case kubeconfig = <-ready:
			case <-time.After(3 * time.Minute):
				t.Fatal("cluster not ready within 3m")
			}
			if kubeconfig == "" {
				t.Fatal("the command ended before the cluster was ready")
			}
			kids := childrenOf(cmd.Process.Pid)
			if len(kids) != 6 { // etcd, apiserver, controller-manager, scheduler, 2 kwok
				t.Fatalf("%d child processes, want 6: %v", len(kids), kids)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
				for _, k := range kids {
					if syscall.Kill(k, 0) == nil {
						return false, nil
					}
				}
				return true, nil
			})
			if err != nil {
				t.Fatalf("processes left after %s: some of %v", sig, kids)
			}
			if _, err := os.Stat(filepath.Dir(kubeconfig)); !os.IsNotExist(err) {
				t.Fatalf("state directory %s left after %s", filepath.Dir(kubeconfig), sig)
			}
		})
	}
}

func TestReleaseOfDir(t *testing.T) {
	for dir, want := range map[string]string{"v1.37.1-chaos": "v1.37.1", "v1.37.2": "v1.37.2", "v1.36.3-conformance": "v1.36.3", "cluster": "cluster"} {
		if got := releaseOfDir(dir); got != want {
			t.Errorf("releaseOfDir(%q) = %q, want %q", dir, got, want)
		}
	}
}

// Each command a person runs lives in a file of its name, and the help
// lists it; the help lists nothing else.
func TestCommandsOneFileEach(t *testing.T) {
	help := usage()
	for _, c := range commands {
		if c.hidden {
			if strings.Contains(help, "jobconform "+c.name) {
				t.Errorf("the help lists %s, which jobconform runs itself", c.name)
			}
			continue
		}
		if !strings.Contains(help, "  jobconform "+c.name) {
			t.Errorf("the help does not list %s", c.name)
		}
		if c.run == nil {
			continue // a controller's command, in its own package
		}
		if _, err := os.Stat(c.name + ".go"); err != nil {
			t.Errorf("command %s: no file %s.go", c.name, c.name)
		}
	}
	if got := exitStatus(usageError{errors.New("x")}); got != 2 {
		t.Errorf("a usage error exits %d, want 2", got)
	}
	if got := exitStatus(fmt.Errorf("stopped: %w", context.Canceled)); got != 130 {
		t.Errorf("an interrupt exits %d, want 130", got)
	}
	broken := brokenError{errors.New("3 specs failed")}
	harness := harnessError{errors.New("conformance: Ginkgo exit code 1")}
	for _, tc := range []struct {
		err  error
		want int
	}{
		{broken, 1},
		{harness, 3},
		{errors.Join(harness, broken), 1}, // a broken promise is the answer; a retry would not change it
		{errors.Join(errors.New("x"), harness), 3},
		{errors.New("a report diff with a new failure"), 1},
	} {
		if got := exitStatus(tc.err); got != tc.want {
			t.Errorf("%v exits %d, want %d", tc.err, got, tc.want)
		}
	}
}
