package local

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one supervised child: a component binary with its arguments and a
// log file that survives restarts (each start appends a header line).
type process struct {
	name    string
	logPath string

	mu      sync.Mutex
	path    string
	args    []string
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the current run ends
	waitErr error
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

// start runs the process; it must not be running.
func (p *process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		select {
		case <-p.exited:
		default:
			return fmt.Errorf("%s is already running", p.name)
		}
	}
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s log: %w", p.name, err)
	}
	fmt.Fprintf(logf, "=== jobconform: start %s at %s: %s %s\n", p.name, time.Now().Format(time.RFC3339Nano), p.path, strings.Join(p.args, " "))
	cmd := exec.Command(p.path, p.args...)
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := startOnSpawner(cmd); err != nil {
		logf.Close()
		return fmt.Errorf("start %s (%s): %w", p.name, p.path, err)
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

// running tells whether the current run has not ended.
func (p *process) running() bool {
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

// exitedChan returns a channel closed when the current run ends (nil if never started).
func (p *process) exitedChan() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited
}

// stop sends SIGTERM to the process group, then SIGKILL after grace (at once
// when grace is 0), and waits.
// Stopping a process that is not running is not an error.
func (p *process) stop(grace time.Duration) error {
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
	if grace > 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
			return nil
		case <-time.After(grace):
		}
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-exited:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, cmd.Process.Pid)
	}
}

// kill ends the process at once with SIGKILL, as a crash would, and waits.
func (p *process) kill() error {
	return p.stop(0)
}

// describeExit says how the last run ended, with the tail of its log, for errors.
func (p *process) describeExit() string {
	p.mu.Lock()
	werr := p.waitErr
	p.mu.Unlock()
	return fmt.Sprintf("%s exited (%v); last lines of %s:\n%s", p.name, werr, p.logPath, logTail(p.logPath, 25))
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

// pid is the running process's id, or 0.
func (p *process) pid() int {
	if !p.running() {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Pid
}
