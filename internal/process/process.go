// Package process supervises the child processes of the harness: cluster
// components, kwok node groups, controllers under test. Every child dies with
// the harness, even when the harness is SIGKILLed.
package process

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/procfs"

	"github.com/jobconform/jobconform/internal/options"
)

// Process is one supervised child: a binary with its arguments and a log file
// that survives restarts (each start appends a header line). Set Path and
// Args before Start; change them between runs to restart differently.
type Process struct {
	Name    string
	LogPath string

	mu      sync.Mutex
	path    string
	args    []string
	env     []string // added to the harness's environment
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the current run ends
	waitErr error
}

// New returns a Process that logs to logPath.
func New(name, logPath string) *Process { return &Process{Name: name, LogPath: logPath} }

// SetCommand sets the binary and arguments of the next run.
func (p *Process) SetCommand(path string, args ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.path, p.args = path, append([]string(nil), args...)
}

// SetEnv sets variables (NAME=value) that the next runs get on top of the
// harness's own environment.
func (p *Process) SetEnv(env ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.env = append([]string(nil), env...)
}

// Args returns the arguments of the current (or next) run.
func (p *Process) Args() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.args...)
}

// spawner forks every child from one OS thread that never exits. Children get
// PR_SET_PDEATHSIG=SIGKILL, which the kernel fires when the *thread* that forked
// them ends; a dedicated locked thread makes that mean "when this process ends",
// so even a SIGKILLed test binary leaves no etcd or kube-apiserver behind.
var spawner = func() chan func() {
	ch := make(chan func())
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives as long as the process
		for f := range ch {
			f()
		}
	}()
	return ch
}()

func startOnSpawner(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	spawner <- func() { errc <- cmd.Start() }
	return <-errc
}

// Start runs the process; it must not be running.
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		select {
		case <-p.exited:
		default:
			return fmt.Errorf("%s is already running", p.Name)
		}
	}
	logf, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s log: %w", p.Name, err)
	}
	fmt.Fprintf(logf, "=== jobconform: start %s at %s: %s\n", p.Name, time.Now().Format(time.RFC3339Nano), strings.Join(append(append(append([]string(nil), p.env...), p.path), p.args...), " "))
	cmd := exec.Command(p.path, p.args...)
	if len(p.env) > 0 {
		cmd.Env = append(os.Environ(), p.env...)
	}
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := startOnSpawner(cmd); err != nil {
		logf.Close()
		return fmt.Errorf("start %s (%s): %w", p.Name, p.path, err)
	}
	exited := make(chan struct{})
	p.cmd, p.exited, p.waitErr = cmd, exited, nil
	go func() {
		err := cmd.Wait()
		logf.Close()
		p.mu.Lock()
		p.waitErr = err
		p.mu.Unlock()
		close(exited)
	}()
	return nil
}

// Running tells whether the current run has not ended.
func (p *Process) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Exited returns a channel closed when the current run ends (nil if never started).
func (p *Process) Exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited
}

// Stop sends SIGTERM to the process group, then SIGKILL after grace (at once
// when grace is 0), and waits.
// Stopping a process that is not running is not an error.
func (p *Process) Stop(grace time.Duration) error {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-exited:
		return nil
	default:
	}
	t0 := time.Now()
	if grace > 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
			p.note("stopped: exited %s after SIGTERM", time.Since(t0).Round(time.Millisecond))
			return nil
		case <-time.After(grace):
		}
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-exited:
		if grace > 0 {
			// Said in the log: a stop meant to be graceful was a crash.
			p.note("stopped: %s after SIGTERM it had not exited; killed", grace)
		} else {
			p.note("killed")
		}
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.Name, cmd.Process.Pid)
	}
}

// note appends a line of the harness's own to the process's log.
func (p *Process) note(format string, args ...any) {
	f, err := os.OpenFile(p.LogPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "=== jobconform: %s %s at %s\n", p.Name, fmt.Sprintf(format, args...), time.Now().Format(time.RFC3339Nano))
}

// Kill ends the process at once with SIGKILL, as a crash would, and waits.
func (p *Process) Kill() error {
	return p.Stop(0)
}

// DescribeExit says how the last run ended, with the tail of its log, for errors.
func (p *Process) DescribeExit() string {
	p.mu.Lock()
	werr := p.waitErr
	p.mu.Unlock()
	return fmt.Sprintf("%s exited (%v); last lines of %s:\n%s", p.Name, werr, p.LogPath, logTail(p.LogPath, 25))
}

// LastRunLog is what the current (or last) run wrote to the log: the text
// from its start line on, "" if the log cannot be read.
func (p *Process) LastRunLog() string {
	data, err := os.ReadFile(p.LogPath)
	if err != nil {
		return ""
	}
	if i := bytes.LastIndex(data, []byte("=== jobconform: start "+p.Name+" at ")); i >= 0 {
		data = data[i:]
	}
	return string(data)
}

func logTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// PID is the running process's id, or 0.
func (p *Process) PID() int {
	if !p.Running() {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Pid
}

// CPU is the processor time (user and system) the running process has used so
// far, read from /proc; 0 when it is not running or /proc cannot tell.
func (p *Process) CPU() time.Duration {
	proc, ok := p.procfs()
	if !ok {
		return 0
	}
	st, err := proc.Stat()
	if err != nil {
		return 0
	}
	return time.Duration(st.CPUTime() * float64(time.Second))
}

// procfs is the running process in /proc; false when it does not run.
func (p *Process) procfs() (procfs.Proc, bool) {
	pid := p.PID()
	if pid == 0 {
		return procfs.Proc{}, false
	}
	proc, err := procfs.NewProc(pid)
	return proc, err == nil
}

// PeakMemory is the most memory the process has held resident (VmHWM)
// since it started or since ResetPeakMemory, in bytes; 0 when it does not run.
func (p *Process) PeakMemory() uint64 {
	proc, ok := p.procfs()
	if !ok {
		return 0
	}
	st, err := proc.NewStatus()
	if err != nil {
		return 0
	}
	return st.VmHWM
}

// ResetPeakMemory starts PeakMemory over from the current resident size
// (the kernel's clear_refs, value 5), so a measurement covers one stretch of
// the process's life.
func (p *Process) ResetPeakMemory() error {
	pid := p.PID()
	if pid == 0 {
		return fmt.Errorf("%s does not run", p.Name)
	}
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// SelfUsage is the harness process's own processor time so far (user and
// system, every thread) and its peak resident memory (whole life).
func SelfUsage() (time.Duration, uint64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return cpu, uint64(ru.Maxrss) * 1024 // Linux reports kilobytes
}

// ComponentEnv is the environment that the harness's Go components run with
// (etcd, the control plane, kwok, the reference controller) on top of its
// own: GOMAXPROCS when $JOBCONFORM_COMPONENT_GOMAXPROCS asks for it
// (options.ComponentGOMAXPROCS; unset or 0: the Go runtime's default). One P each
// costs less CPU where a dozen clusters share a few cores (make bench,
// 2 cores: a cluster's start 17–43% less, the conformance catalog 13% less),
// but not by default: it holds the busiest apiserver — the conformance
// suite's, serving 24 processes — to one core, and on 2 cores that suite
// took 132–155 s in a make run instead of 111–114 s, its controllers' events
// up to 13 s late (client-go sends them one at a time): latency that timing
// verdicts pay for.
func ComponentEnv() ([]string, error) {
	n, err := options.ComponentGOMAXPROCS()
	if err != nil || n == 0 {
		return nil, err
	}
	return []string{"GOMAXPROCS=" + strconv.Itoa(n)}, nil
}
