package process

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

func TestProcessStartStop(t *testing.T) {
	p := New("sleep", filepath.Join(t.TempDir(), "sleep.log"))
	p.SetCommand("/bin/sleep", "300")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err == nil {
		t.Error("second start of a running process accepted")
	}
	pid := p.PID()
	if pid == 0 || !p.Running() {
		t.Fatal("not running after start")
	}
	if err := p.Stop(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	if p.Running() || syscall.Kill(pid, 0) == nil {
		t.Fatal("still running after stop")
	}
	if err := p.Start(); err != nil { // restart appends to the same log
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(p.LogPath)
	if n := strings.Count(string(log), "=== jobconform: start"); n != 2 {
		t.Errorf("log has %d start headers, want 2", n)
	}
	for _, want := range []string{"=== jobconform: sleep stopped: exited ", "=== jobconform: sleep killed at "} {
		if !strings.Contains(string(log), want) {
			t.Errorf("log says nothing like %q of how a run ended:\n%s", want, log)
		}
	}
}

// LastRunLog holds what the last run wrote, not an earlier run's.
func TestLastRunLog(t *testing.T) {
	p := New("echo", filepath.Join(t.TempDir(), "echo.log"))
	for _, word := range []string{"first-run", "second-run"} {
		p.SetCommand("/bin/echo", word)
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		<-p.Exited()
	}
	got := p.LastRunLog()
	if !strings.HasPrefix(got, "=== jobconform: start echo at ") || !strings.Contains(got, "second-run") || strings.Contains(got, "first-run") {
		t.Errorf("LastRunLog:\n%s", got)
	}
}

// A process that ignores SIGTERM is killed after the grace, and its log says so.
func TestStopIgnoredSIGTERM(t *testing.T) {
	p := New("stubborn", filepath.Join(t.TempDir(), "stubborn.log"))
	p.SetCommand("/bin/sh", "-c", "trap '' TERM; echo 'trap''ped'; while :; do sleep 0.1; done")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		log, _ := os.ReadFile(p.LogPath)
		return strings.Contains(string(log), "trapped"), nil // not in the header's command line
	}); err != nil {
		t.Fatal("the trap was not set")
	}
	if err := p.Stop(300 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(p.LogPath)
	if !strings.Contains(string(log), "stubborn stopped: 300ms after SIGTERM it had not exited; killed") {
		t.Errorf("log does not say the stop was forced:\n%s", log)
	}
}

// TestChildrenDieWithTheHarness runs this test binary as a helper that starts
// a long sleep through the supervisor and is then SIGKILLed, as a crashed or
// timed-out test would be: the sleep must die too (PDEATHSIG).
func TestChildrenDieWithTheHarness(t *testing.T) {
	if os.Getenv("JOBCONFORM_HELPER") == "1" {
		p := New("orphan", os.Getenv("JOBCONFORM_HELPER_LOG"))
		p.SetCommand("/bin/sleep", "300")
		if err := p.Start(); err != nil {
			fmt.Println("ERR", err)
			os.Exit(1)
		}
		fmt.Println("PID", p.PID())
		time.Sleep(time.Minute) // the parent test kills this process long before
		os.Exit(3)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildrenDieWithTheHarness$")
	cmd.Env = append(os.Environ(), "JOBCONFORM_HELPER=1", "JOBCONFORM_HELPER_LOG="+filepath.Join(t.TempDir(), "orphan.log"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	sc := bufio.NewScanner(out)
	pid := 0
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "PID" {
			pid, _ = strconv.Atoi(f[1])
			break
		}
	}
	if pid <= 0 {
		t.Fatal("helper did not report its child")
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("child %d not running while its parent lives: %v", pid, err)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	err = wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return syscall.Kill(pid, 0) != nil, nil
	})
	if err != nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("child %d outlived its SIGKILLed parent", pid)
	}
}

// CPU counts a busy process's processor time and a sleeping one's stays near zero.
func TestCPU(t *testing.T) {
	busy := New("busy", filepath.Join(t.TempDir(), "busy.log"))
	busy.SetCommand("/bin/sh", "-c", "while :; do :; done")
	idle := New("idle", filepath.Join(t.TempDir(), "idle.log"))
	idle.SetCommand("/bin/sleep", "300")
	for _, p := range []*Process{busy, idle} {
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		defer p.Kill()
	}
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return busy.CPU() >= 200*time.Millisecond, nil
	})
	if err != nil {
		t.Fatalf("a busy loop used %s of CPU in 30s", busy.CPU())
	}
	if d := idle.CPU(); d >= 100*time.Millisecond {
		t.Errorf("sleep used %s of CPU", d)
	}
	busy.Kill()
	if d := busy.CPU(); d != 0 {
		t.Errorf("CPU of an ended process: %s, want 0", d)
	}
}

const envGoMaxProcs = "JOBCONFORM_COMPONENT_GOMAXPROCS"

func TestComponentEnv(t *testing.T) {
	for _, c := range []struct {
		val     string
		want    []string
		wantErr bool
	}{
		{"", nil, false},
		{"1", []string{"GOMAXPROCS=1"}, false},
		{"0", nil, false},
		{"3", []string{"GOMAXPROCS=3"}, false},
		{"-1", nil, true},
		{"two", nil, true},
	} {
		t.Setenv(envGoMaxProcs, c.val)
		got, err := ComponentEnv()
		if (err != nil) != c.wantErr {
			t.Errorf("%s=%q: error %v, want error %v", envGoMaxProcs, c.val, err, c.wantErr)
			continue
		}
		if err != nil && !strings.Contains(err.Error(), envGoMaxProcs) {
			t.Errorf("%s=%q: error %q does not name the variable to fix", envGoMaxProcs, c.val, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s=%q: env %q, want %q", envGoMaxProcs, c.val, got, c.want)
		}
	}
}

// SetEnv's variables reach the process on top of the harness's own.
func TestSetEnv(t *testing.T) {
	t.Setenv("JOBCONFORM_TEST_INHERITED", "kept")
	out := filepath.Join(t.TempDir(), "env")
	p := New("env", filepath.Join(t.TempDir(), "env.log"))
	p.SetCommand("/bin/sh", "-c", "echo $GOMAXPROCS $JOBCONFORM_TEST_INHERITED > "+out)
	p.SetEnv("GOMAXPROCS=1")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	var got []byte
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		b, err := os.ReadFile(out)
		got = b
		return err == nil && strings.HasSuffix(string(b), "\n"), nil
	})
	_ = p.Stop(2 * time.Second)
	if err != nil {
		t.Fatalf("the process wrote no %s: %v", out, err)
	}
	if strings.TrimSpace(string(got)) != "1 kept" {
		t.Errorf("the process saw %q, want %q", strings.TrimSpace(string(got)), "1 kept")
	}
}

// A running process's peak memory is read from /proc and can start over;
// one that does not run has none.
func TestPeakMemory(t *testing.T) {
	p := New("sleeper", filepath.Join(t.TempDir(), "sleeper.log"))
	if p.PeakMemory() != 0 || p.ResetPeakMemory() == nil {
		t.Fatal("a process not started has a peak memory, or resets one")
	}
	p.SetCommand("/bin/sleep", "30")
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	if p.PeakMemory() == 0 {
		t.Error("no peak memory of a running process")
	}
	if err := p.ResetPeakMemory(); err != nil {
		t.Errorf("ResetPeakMemory: %v", err)
	}
	if p.PeakMemory() == 0 {
		t.Error("no peak memory after a reset (it starts over from the resident size)")
	}
}
