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
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/jobconform/jobconform/internal/ginkgoreport"
	"github.com/jobconform/jobconform/internal/mutants"
	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/release"
	"github.com/jobconform/jobconform/reports"
)

// job is one suite run: a Ginkgo run of one suite against some controllers
// at one release, on one kind of node, its reports in dir.
type job struct {
	suite string
	o     options.Options // what its processes are told: one release, its controllers, its nodes
	dir   string          // artifacts/<release>, artifacts/kubelet-<release>, ...
	// beside: run in the second stream (see runJobs).
	beside bool
}

func (j job) String() string {
	where := orDefault(j.o.Version, "the existing cluster")
	if j.o.Nodes == options.NodesKubelet {
		where += " on kubelet nodes"
	}
	if g := options.FormatGates(j.o.FeatureGates); g != "" {
		where += " with " + g
	}
	return fmt.Sprintf("%s suite at %s (%s)", j.suite, where, strings.Join(j.o.ControllerNames(), ", "))
}

// jobs is the plan of a run, in the order each stream runs it:
//   - every suite at every release of Versions, against the controllers
//     under test;
//   - the conformance and chaos suites at every release of BuiltinAt,
//     against the built-in controller alone;
//   - with KubeletConformance, the conformance suite again at the first
//     release, on kubelet nodes.
//
// On a release where JobManagedBy is alpha and off (1.31), the apiserver
// drops spec.managedBy: a delegated controller's runs there go to a cluster
// of their own with JobManagedBy=true, reported under
// artifacts/JobManagedBy/<release> (unless --feature-gates names the gate).
func planJobs(o options.Options, specs map[string]int) []job {
	var out []job
	add := func(suite, v string, controllers []string, nodes, dir string) {
		out = append(out, suiteJobs(o, suite, v, controllers, nodes, dir)...)
	}
	art := o.Run.Artifacts
	versions := o.Run.Versions
	if len(versions) == 0 {
		versions = []string{""} // an existing cluster
	}
	// A dispatcher (options.Dispatchers) is judged by the conformance suite
	// alone, on kwok nodes (its worker cluster's): the other jobs run without it.
	single := slices.DeleteFunc(slices.Clone(o.Controllers), func(c string) bool { return slices.Contains(options.Dispatchers, c) })
	for _, v := range versions {
		for _, s := range o.Run.Suites {
			cs := o.Controllers
			if s != "conformance" {
				cs = single
			}
			if len(cs) > 0 {
				add(s, v, cs, o.Nodes, filepath.Join(art, orDefault(v, "cluster")))
			}
		}
	}
	for _, v := range o.Run.BuiltinAt {
		for _, s := range o.Run.Suites {
			if s != "drill" && s != "scale" && specs[s] > 0 {
				add(s, v, []string{"builtin"}, o.Nodes, filepath.Join(art, v))
			}
		}
	}
	if o.Run.KubeletConformance && len(single) > 0 {
		add("conformance", versions[0], single, options.NodesKubelet, filepath.Join(art, "kubelet-"+versions[0]))
	}
	orderStreams(out, o)
	return out
}

// suiteJobs is the job of suite at release v against controllers: its
// processes are told their own suite only, so the settings they validate
// hold for it (kubelet nodes and the scale suite don't mix). On a release
// where JobManagedBy is off by default, and unless the user set the gate,
// the delegated controllers go to a cluster of their own with the gate on.
func suiteJobs(o options.Options, suite, v string, controllers []string, nodes, dir string) []job {
	jo := o
	jo.Version, jo.Controllers, jo.Nodes = v, controllers, nodes
	jo.Run.Suites = []string{suite}
	jo.Run.KubeletConformance = jo.Run.KubeletConformance && suite == "conformance"
	_, gateSet := o.FeatureGates["JobManagedBy"]
	if v == "" || release.Minor(v) >= managedByBeta || !hasDelegated(controllers) || gateSet {
		return []job{{suite: suite, o: jo, dir: dir}}
	}
	var out []job
	var builtin, delegated []string
	for _, c := range controllers {
		if c == "builtin" {
			builtin = append(builtin, c)
		} else {
			delegated = append(delegated, c)
		}
	}
	if len(builtin) > 0 {
		jo.Controllers = builtin
		out = append(out, job{suite: suite, o: jo, dir: dir})
	}
	jo.Controllers = delegated
	jo.FeatureGates = map[string]bool{"JobManagedBy": true}
	for k, on := range o.FeatureGates {
		jo.FeatureGates[k] = on
	}
	return append(out, job{suite: suite, o: jo, dir: filepath.Join(filepath.Dir(dir), "JobManagedBy", filepath.Base(dir))})
}

// orderStreams puts the jobs in two streams, so that neither waits on the
// other's sleeping specs: in front the conformance suites, then the chaos
// suites of the releases under test, then kubelet nodes; beside them the
// drills, then the built-in's chaos suites at the other releases (measured
// on 2 cores: the drills and a chaos suite each leave cores idle for
// minutes). In each stream, in this order; beside, the drills first: the
// longest, as make run measured them.
func orderStreams(out []job, o options.Options) {
	for i := range out {
		j := &out[i]
		j.beside = j.suite == "drill" || (j.suite == "chaos" && slices.Contains(o.Run.BuiltinAt, j.o.Version))
	}
	rank := func(j job) int {
		// The scale suite last, alone in its stream: it measures.
		r := map[string]int{"conformance": 0, "chaos": 1, "drill": 2, "scale": 20}[j.suite]
		if j.beside && j.suite == "drill" {
			r = -1
		}
		if j.o.Nodes == options.NodesKubelet && o.Nodes != options.NodesKubelet {
			r += 10
		}
		return r
	}
	sort.SliceStable(out, func(a, b int) bool { return rank(out[a]) < rank(out[b]) })
}

// managedByBeta is the first minor where JobManagedBy is on by default.
const managedByBeta = 32

func hasDelegated(controllers []string) bool {
	for _, c := range controllers {
		if c != "builtin" {
			return true
		}
	}
	return false
}

// kubeletProcs caps the conformance suite's processes on kubelet nodes: every
// pod there is a real container, and at 24 specs at once on two cores (a CI
// run of 2026-11-26) containers started 5-25 s after their creation and 17 of
// 144 specs timed out for both controllers alike, where kwok nodes keep up.
const kubeletProcs = 12

// procs is how many Ginkgo processes run j: the chaos and drill suites bring
// up a cluster per spec, so fewer.
func (j job) procs() int {
	switch j.suite {
	case "conformance":
		if j.o.Nodes == options.NodesKubelet || j.o.ProviderName() == "existing" { // a cluster's own nodes: real containers, as a rule
			return min(j.o.Run.Procs, kubeletProcs)
		}
		return j.o.Run.Procs
	case "scale":
		return 1 // one Job at a time: each spec measures the controller alone
	}
	return j.o.Run.ClusterProcs
}

// outcome is what the jobs left: the reports, and what went wrong beyond
// the verdicts.
type outcome struct {
	artifacts string
	runs      []reports.Run
	reports   []string // the merged report.json of each directory
	errs      []error  // suites that ended badly beyond their specs
	fidelity  [2]string
	baseline  []reports.Run // --baseline's runs, read before any suite ran; nil without
}

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
	var front, beside []job
	for _, j := range p.jobs {
		if j.beside {
			beside = append(beside, j)
		} else {
			front = append(front, j)
		}
		// A report left by an earlier run must not stand for this one.
		_ = os.Remove(filepath.Join(j.dir, "report-"+j.suite+".json"))
		_ = os.Remove(filepath.Join(j.dir, "report.json"))
	}
	res := &outcome{artifacts: art, baseline: p.baseline}
	// Bad input stops both streams at once: no later suite can judge
	// anything with it (the user fixes it and runs again).
	sctx, stopStreams := context.WithCancel(ctx)
	defer stopStreams()
	var mu sync.Mutex
	var bad []string
	stream := func(jobs []job, out io.Writer, name string) {
		for i, j := range jobs {
			if sctx.Err() != nil {
				return
			}
			badMsg, err := p.streamJob(sctx, bin, j, out, name, fmt.Sprintf("[%s %d/%d]", name, i+1, len(jobs)))
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

// streamJob runs j as the stream name's job and tells what went wrong
// beyond its verdicts: an error, or the message of a suite that failed on
// the user's input.
func (p *plan) streamJob(ctx context.Context, bin string, j job, out io.Writer, name, tag string) (badMsg string, err error) {
	if err := p.builds.wait(ctx, j, tag); err != nil {
		if ctx.Err() != nil {
			return "", nil
		}
		return "", fmt.Errorf("%s: %w", j, err)
	}
	fmt.Fprintf(os.Stderr, "jobconform: %s running the %s, %d processes; reports in %s\n", tag, j, j.procs(), j.dir)
	start := time.Now()
	code, err := p.runJob(ctx, bin, j, out, name == "front")
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
	if f, ok := out.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
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

// collect merges each directory's suite reports into its report.json (one
// per release, as tools read them), loads the runs, and notes the kwok and
// kubelet reports of a fidelity comparison.
func (res *outcome) collect(jobs []job) error {
	parts := map[string][]string{}
	var dirs []string
	for _, j := range jobs {
		if parts[j.dir] == nil {
			dirs = append(dirs, j.dir)
		}
		part := filepath.Join(j.dir, "report-"+j.suite+".json")
		if _, err := os.Stat(part); err == nil && !slices.Contains(parts[j.dir], part) {
			parts[j.dir] = append(parts[j.dir], part)
		}
		if j.o.Run.KubeletConformance && j.suite == "conformance" {
			i := 0
			if j.o.Nodes == options.NodesKubelet {
				i = 1
			}
			if res.fidelity[i] == "" {
				res.fidelity[i] = filepath.Join(j.dir, "report.json")
			}
		}
	}
	for _, dir := range dirs {
		if len(parts[dir]) == 0 {
			continue
		}
		if err := res.add(dir, parts[dir]); err != nil {
			return err
		}
	}
	return nil
}

// add merges a directory's suite reports (parts) into its report.json and
// loads its runs.
func (res *outcome) add(dir string, parts []string) error {
	report := filepath.Join(dir, "report.json")
	if err := mergeReports(report, parts); err != nil {
		return err
	}
	rs, err := ginkgoreport.Load(report)
	if err != nil {
		return err
	}
	for i := range rs {
		if rs[i].Version == "" { // a spec that failed before it ran a scenario
			rs[i].Version = orDefault(releaseOfDir(filepath.Base(dir)), "?")
		}
	}
	res.runs = append(res.runs, rs...)
	res.reports = append(res.reports, report)
	return nil
}

// verdict writes report.html, summary.md and (for a kubelet comparison) the
// fidelity table, prints the verdicts, and returns an error for any
// non-conformance or a run that judged nothing.
func (res *outcome) verdict() error {
	reports.Sort(res.runs)
	var diff *reports.Diff
	if res.baseline != nil {
		d := reports.Compare(res.baseline, res.runs)
		diff = &d
	}
	path, err := reports.WriteCompared(res.artifacts, "jobconform", res.runs, diff)
	if err != nil {
		return err
	}
	failed := printVerdicts(os.Stdout, res.runs)
	if t := reports.ScaleTable(res.runs); t != "" {
		fmt.Printf("\nscale: the controllers side by side (ratios to the built-in)\n\n%s\n", t)
	}
	if t := reports.MirrorTable(res.runs); t != "" {
		fmt.Printf("\ndispatchers: how late the worker's copy's status reached the manager's Job\n\n%s\n", t)
	}
	var errs []error
	if res.fidelity[0] != "" && res.fidelity[1] != "" {
		out := filepath.Join(res.artifacts, "fidelity.md")
		if err := fidelity([]string{"--kwok", res.fidelity[0], "--kubelet", res.fidelity[1], "--out", out}); err != nil {
			errs = append(errs, fmt.Errorf("fidelity: %w", err))
		}
	}
	if diff != nil {
		// report.html and summary.md have it too (WriteCompared).
		if err := reports.WriteDiff(os.Stdout, *diff); err != nil {
			errs = append(errs, err)
		}
	}
	var dirs []string
	for _, f := range res.reports {
		dirs = append(dirs, filepath.Dir(f))
	}
	fmt.Printf("\nreport: %s\nsummary: %s\nJUnit and Ginkgo JSON: %s\n", path, filepath.Join(res.artifacts, "summary.md"), strings.Join(dirs, " "))
	if failed > 0 {
		errs = append(errs, fmt.Errorf("%d specs failed: the controllers under test broke promises (see the report)", failed))
	}
	if err := unjudged(res.runs); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(append(errs, res.errs...)...)
}

// readBaseline reads --baseline's runs before anything runs: a wrong path
// is the user's to fix at once, and the run's artifacts (art) must not be
// the baseline, whose reports the run replaces.
func readBaseline(baseline, art string) ([]reports.Run, error) {
	if baseline == "" {
		return nil, nil
	}
	if a, b := filepath.Clean(baseline), filepath.Clean(art); a == b || strings.HasPrefix(b+"/", a+"/") {
		return nil, usageError{fmt.Errorf("--baseline %s holds this run's artifacts (%s), which the run replaces: keep the earlier run elsewhere, or give --artifacts another directory", baseline, art)}
	}
	paths, err := reportFiles(baseline)
	if err != nil {
		return nil, usageError{fmt.Errorf("--baseline: %w", err)}
	}
	runs, err := ginkgoreport.Load(paths...)
	if err != nil {
		return nil, usageError{fmt.Errorf("--baseline: %w", err)}
	}
	return runs, nil
}
