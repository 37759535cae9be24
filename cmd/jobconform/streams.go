package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jobconform/jobconform/internal/mutants"
	"github.com/jobconform/jobconform/internal/options"
	"golang.org/x/term"
)

// Running the plan: its jobs in two streams of child processes side by
// side, each job the Ginkgo CLI over scripts that run this binary as the
// suite's test process.

// runJobs runs the plan's jobs in two streams side by side (the front one
// on this terminal, the other into artifacts/beside.log, its summary lines
// printed at the end), then merges each directory's reports and writes
// report.html. A suite that failed on the user's input stops the run with a
// usageError; an interrupt stops both streams after their current suites.
func (p *plan) runJobs(ctx context.Context) (*outcome, error) {
	bin, err := os.MkdirTemp("", "jobconform-run-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(bin)
	if err := p.writeScripts(ctx, bin); err != nil {
		return nil, err
	}
	art := p.o.Run.Artifacts
	if err := os.MkdirAll(art, 0o755); err != nil {
		return nil, err
	}
	front, beside := p.streams()
	res := &outcome{artifacts: art, baseline: p.baseline, requireOracle: p.o.Oracle.Require}
	// Bad input stops both streams at once: no later suite can judge
	// anything with it (the user fixes it and runs again).
	sctx, stopStreams := context.WithCancel(ctx)
	defer stopStreams()
	var mu sync.Mutex
	var bad []string
	times := loadSuiteTimes()
	if len(beside) > 0 {
		fmt.Fprintf(os.Stderr, "jobconform: %d suite runs in front, %s; %d beside, %s\n", len(front), times.left(front), len(beside), times.left(beside))
	}
	stream := func(jobs []job, out io.Writer, name string) {
		for i, j := range jobs {
			if sctx.Err() != nil {
				return
			}
			start := time.Now()
			badMsg, err := p.streamJob(sctx, bin, j, out, name, fmt.Sprintf("[%s %d/%d]", name, i+1, len(jobs)), times.left(jobs[i:]))
			if badMsg == "" && sctx.Err() == nil { // a red suite took its time too
				times.record(j, time.Since(start))
			}
			mu.Lock()
			if err != nil {
				res.errs = append(res.errs, err)
			}
			if badMsg != "" {
				bad = append(bad, badMsg)
				stopStreams()
			}
			mu.Unlock()
		}
	}
	var wg sync.WaitGroup
	var besideLog string
	if len(beside) > 0 {
		besideLog = filepath.Join(art, "beside.log")
		f, err := os.Create(besideLog)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		fmt.Fprintf(os.Stderr, "jobconform: beside the other suites: %s; output in %s\n", describeJobs(beside), besideLog)
		wg.Add(1)
		go func() { defer wg.Done(); stream(beside, f, "beside") }()
	}
	stream(front, os.Stdout, "front")
	if len(beside) > 0 && sctx.Err() == nil {
		fmt.Fprintf(os.Stderr, "jobconform: waiting for the suites beside (%s)\n", besideLog)
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err() // interrupted: Ginkgo stopped the suites
	}
	if besideLog != "" {
		printSummaryLines(besideLog, os.Stdout)
	}
	if len(bad) > 0 {
		return nil, usageError{errors.New(strings.Join(bad, "\n"))}
	}
	if err := res.collect(p.jobs); err != nil {
		return nil, err
	}
	return res, nil
}

// streams splits the plan's jobs into the front stream and the one beside,
// and removes the reports an earlier run left in their directories: they
// must not stand for this one.
func (p *plan) streams() (front, beside []job) {
	for _, j := range p.jobs {
		if j.beside {
			beside = append(beside, j)
		} else {
			front = append(front, j)
		}
		_ = os.Remove(filepath.Join(j.dir, "report-"+j.suite+".json"))
		_ = os.Remove(filepath.Join(j.dir, "report.json"))
	}
	return front, beside
}

// streamJob runs j as the stream name's job and tells what went wrong
// beyond its verdicts: an error, or the message of a suite that failed on
// the user's input.
func (p *plan) streamJob(ctx context.Context, bin string, j job, out io.Writer, name, tag, left string) (badMsg string, err error) {
	if err := p.builds.wait(ctx, j, tag); err != nil {
		if ctx.Err() != nil {
			return "", nil
		}
		return "", fmt.Errorf("%s: %w", j, err)
	}
	fmt.Fprintf(os.Stderr, "jobconform: %s running the %s, %d processes; reports in %s; %s\n", tag, j, j.procs(), j.dir, left)
	start := time.Now()
	endGroup := func() {}
	if name == "front" { // the terminal's (a GitHub job's log): the beside stream writes a file
		endGroup = ghGroup(out, fmt.Sprintf("%s the %s", tag, j))
	}
	code, err := p.runJob(ctx, bin, j, out, name == "front")
	endGroup()
	p.parts.add(j.String(), name, time.Since(start))
	if name != "front" {
		fmt.Fprintf(os.Stderr, "jobconform: %s the %s ended after %s (exit code %d)\n", tag, j, time.Since(start).Round(time.Second), code)
	}
	msg, rerr := badInput(filepath.Join(j.dir, "report-"+j.suite+".json"))
	switch {
	case ctx.Err() != nil:
		return "", nil
	case err != nil:
		return "", fmt.Errorf("%s: %w", j, err)
	case rerr != nil:
		return "", fmt.Errorf("%s: Ginkgo wrote no report (exit code %d): %w", j, code, rerr)
	case msg != "":
		return msg, nil
	case code != 0:
		return "", fmt.Errorf("%s: Ginkgo exit code %d", j, code)
	case selectedNone(filepath.Join(j.dir, "report-"+j.suite+".json")) && p.selects(j):
		return "", fmt.Errorf("%s: Ginkgo ran no spec, though the plan selected some (focus %q, label filter %q): the filters read differently there — a jobconform bug, please report it", j, j.o.Run.Focus, j.o.Run.LabelFilter)
	}
	return "", nil
}

// selects tells whether j's filters select any spec of its suite for its
// controllers (a job of the built-in alone may select none under a focus on
// another controller: that is no error).
func (p *plan) selects(j job) bool {
	n, err := p.countSpecs(j.o, j.suite)
	return err == nil && n > 0
}

func describeJobs(jobs []job) string {
	var out []string
	for _, j := range jobs {
		out = append(out, j.String())
	}
	return strings.Join(out, ", then ")
}

// summaryLine is a line of a Ginkgo run's summary, as CI logs show them.
var summaryLine = regexp.MustCompile(`^(Running Suite:|Ran [0-9]+ of [0-9]+ Specs|SUCCESS!|FAIL!|  jobconform [a-z]+ verdicts|  +[0-9]+ passed)`)

// printSummaryLines copies the summary lines of a log to w.
func printSummaryLines(path string, w io.Writer) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if summaryLine.MatchString(sc.Text()) {
			fmt.Fprintln(w, sc.Text())
		}
	}
}

// runJob runs one suite with Ginkgo in a child process of this binary
// (jobconform ginkgo …), its settings in options.Env, and returns Ginkgo's
// exit code. Its output goes to out; the set-up's progress, which Ginkgo
// holds back until a suite ends, is shown as it comes when show is set.
func (p *plan) runJob(ctx context.Context, bin string, j job, out io.Writer, show bool) (int, error) {
	if err := os.MkdirAll(j.dir, 0o755); err != nil {
		return 0, err
	}
	o := j.o
	o.ReferenceBinary = filepath.Join(bin, "reference-controller")
	o.DispatcherBinary = filepath.Join(bin, "dispatcher")
	o.ProgressFile = filepath.Join(j.dir, "progress-"+j.suite+".log")
	if o.Oracle.Dir == "" && o.Oracle.From == "" && j.suite == "conformance" {
		// Kept for --oracle-from; an earlier run's in the same place would
		// be taken for this run's.
		o.Oracle.Dir = filepath.Join(j.dir, "oracle")
		if err := os.RemoveAll(o.Oracle.Dir); err != nil {
			return 0, err
		}
	}
	if o.External.Command != "" {
		o.External.Command = "cd " + shellQuote(p.cwd) + " || exit 1\n" + o.External.Command
	}
	_ = os.Remove(o.ProgressFile) // each suite's set-up shown once
	env, err := o.Environ()
	if err != nil {
		return 0, err
	}
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.CommandContext(ctx, self, append([]string{"ginkgo"}, j.ginkgoArgs(bin, out)...)...)
	cmd.Env = append(os.Environ(), env)
	cmd.Stdout, cmd.Stderr = out, out
	// An interrupt reaches Ginkgo's process group as from a terminal: the
	// suite processes stop what they started, and Ginkgo reports.
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	stopTail := func() {}
	if show {
		stopTail = tail(o.ProgressFile, os.Stderr, "  | ")
	}
	werr := cmd.Wait()
	stopTail()
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, werr
}

// ownGroup runs cmd, and what it starts, in a process group of their own,
// and makes the end of its context interrupt that whole group, as a
// terminal's Ctrl-C would: neither Ginkgo's command nor go test passes an
// interrupt on to the processes it runs (each expects the terminal to), so a
// SIGINT or SIGTERM sent to jobconform alone once left a suite running to
// its end, its cluster with it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
}

// ginkgoArgs are the Ginkgo flags of j (Ginkgo takes one process count per
// run). --randomize-all: the specs' priorities (longest first) order every
// spec, not only the top-level containers.
func (j job) ginkgoArgs(bin string, out io.Writer) []string {
	r := j.o.Run
	args := []string{"--keep-going", "--randomize-all", "--timeout=" + j.o.SuiteTimeout(j.suite).String(), "--output-dir=" + j.dir,
		"--junit-report=junit-" + j.suite + ".xml", "--json-report=report-" + j.suite + ".json"}
	if r.FailFast {
		args = append(args, "--fail-fast")
	}
	if procs := j.procs(); procs > 1 {
		args = append(args, "-p", fmt.Sprintf("--procs=%d", procs))
	}
	if f, ok := out.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) || r.NoColor {
		args = append(args, "--no-color")
	}
	if r.LabelFilter != "" {
		args = append(args, "--label-filter="+r.LabelFilter)
	}
	if r.Focus != "" {
		args = append(args, "--focus="+r.Focus)
	}
	return append(args, filepath.Join(bin, suiteScript(j.suite)))
}

// writeScripts writes the suites' executables into bin: scripts that run
// this binary as a suite process (Ginkgo runs them as compiled test
// binaries, its parallel processes included), from the user's directory,
// the reference controller (or, with --reference-faults, its mutant, built)
// and the reference dispatcher.
func (p *plan) writeScripts(ctx context.Context, bin string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the jobconform binary: %w", err)
	}
	script := func(name, body string) error {
		if err := os.MkdirAll(filepath.Join(bin, filepath.Dir(name)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755)
	}
	for _, s := range options.Suites {
		if err := script(suiteScript(s), fmt.Sprintf("cd %s || exit 1\nexec %s suite-process %s \"$@\"", shellQuote(p.cwd), shellQuote(self), s)); err != nil {
			return err
		}
	}
	if err := script("dispatcher", fmt.Sprintf("exec %s dispatcher \"$@\"", shellQuote(self))); err != nil {
		return err
	}
	if len(p.o.ReferenceFaults) > 0 {
		return buildMutant(ctx, bin, p.o.ReferenceFaults)
	}
	return script("reference-controller", fmt.Sprintf("exec %s reference-controller \"$@\"", shellQuote(self)))
}

// buildMutant builds the reference controller broken by the named mutants
// into bin/reference-controller, where the suites look for it.
func buildMutant(ctx context.Context, bin string, names []string) error {
	ms, err := mutants.LookupAll(names)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "building the reference controller broken by %s\n", strings.Join(names, ", "))
	dir, err := os.MkdirTemp(bin, "mutant-")
	if err != nil {
		return err
	}
	built, err := mutants.Build(ctx, dir, ms...)
	if err != nil {
		return err
	}
	return os.Rename(built, filepath.Join(bin, "reference-controller"))
}

// suiteScript is where a suite's script goes under the run's directory: a
// directory each, because Ginkgo names a precompiled suite's reports after its
// directory, and two suites in one directory would overwrite each other's.
func suiteScript(suite string) string { return filepath.Join(suite, suite+".test") }

// shellQuote quotes s for /bin/sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
