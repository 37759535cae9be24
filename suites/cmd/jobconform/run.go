package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/ginkgo/command"
	ginkgorun "github.com/onsi/ginkgo/v2/ginkgo/run"
	"github.com/onsi/ginkgo/v2/types"
	"golang.org/x/term"

	"github.com/jobconform/jobconform/reports"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/catalog"
	"github.com/jobconform/jobconform/suites/chaos"
	clusterpkg "github.com/jobconform/jobconform/suites/cluster"
	"github.com/jobconform/jobconform/suites/internal/ginkgoreport"
	"github.com/jobconform/jobconform/suites/internal/harness"
	"github.com/jobconform/jobconform/suites/internal/k8sbin"
)

// The suites jobconform run knows, in the order it runs them.
var suiteNames = []string{"conformance", "chaos", "drill"}

// runConfig is what jobconform run was asked to do. Every flag's default is
// the environment variable the suites read, so both ways keep working.
type runConfig struct {
	versions     stringsFlag
	provider     string
	kubeconfig   string
	controllers  string
	extName      string
	extCommand   string
	extFinalizer string
	suites       string
	labelFilter  string
	focus        string
	procs        int
	clusterProcs int
	seed         string
	artifacts    string
	scenarioDirs stringsFlag
	builtin      bool
	timeout      time.Duration
	gates        string
	nodes        string
}

func runFlags(fs *flag.FlagSet) *runConfig {
	c := &runConfig{}
	fs.Var(&c.versions, "k8s-version", "Kubernetes release of the local cluster (repeatable: each release is a run of its own; default $"+k8sbin.VersionEnv+" or "+k8sbin.DefaultVersion+")")
	fs.StringVar(&c.provider, "provider", os.Getenv(harness.EnvProvider), "cluster provider: "+strings.Join(clusterpkg.Names(), ", ")+" (default local; existing with --kubeconfig)")
	fs.StringVar(&c.kubeconfig, "kubeconfig", os.Getenv(harness.EnvKubeconfig), "run on this existing cluster instead of creating one")
	fs.StringVar(&c.controllers, "controllers", envOr(harness.EnvControllers, "builtin,reference"), "controllers under test, comma-separated: builtin, reference, external")
	fs.StringVar(&c.extName, "external-managed-by", os.Getenv(harness.EnvExternalName), "the external controller's spec.managedBy value (with --controllers external)")
	fs.StringVar(&c.extCommand, "external-command", os.Getenv(harness.EnvExternalCommand), "shell command that starts the external controller (KUBECONFIG is set to the cluster's; run from this directory); empty: it already runs")
	fs.StringVar(&c.extFinalizer, "external-finalizer", os.Getenv(harness.EnvExternalFinal), "the external controller's pod tracking finalizer, if it uses one")
	fs.StringVar(&c.suites, "suites", "conformance,chaos", "suites to run, comma-separated: "+strings.Join(suiteNames, ", "))
	fs.StringVar(&c.labelFilter, "label-filter", "", "Ginkgo label filter over scenario features, e.g. 'podReplacementPolicy || suspend'")
	fs.StringVar(&c.focus, "focus", "", "run only specs whose name matches this regular expression, e.g. 'reference.*eviction'")
	fs.IntVar(&c.procs, "procs", 24, "parallel Ginkgo processes of the conformance suite, on one cluster (scenarios mostly wait on pods: on 2 cores 24 processes ran the catalog in 71s)")
	fs.IntVar(&c.clusterProcs, "cluster-procs", 6, "parallel Ginkgo processes of the chaos and drill suites, each spec on a cluster of its own (that many clusters at once)")
	fs.StringVar(&c.seed, "chaos-seed", os.Getenv(chaos.SeedEnv), "seed of the chaos suite's random choices (default: from the clock; printed)")
	fs.StringVar(&c.artifacts, "artifacts", artifactsDir(), "directory for JUnit, Ginkgo JSON, report.html and summary.md (default $ARTIFACTS or _artifacts)")
	fs.Var(&c.scenarioDirs, "scenarios", "directory of your own scenario files (*.yaml; repeatable; default $"+harness.EnvScenarios+")")
	fs.BoolVar(&c.builtin, "builtin-scenarios", os.Getenv(harness.EnvBuiltinScenarios) != "false", "run jobconform's own catalog too (false: only --scenarios)")
	fs.DurationVar(&c.timeout, "timeout", 90*time.Minute, "time limit of each release's suites")
	fs.StringVar(&c.nodes, "nodes", os.Getenv(harness.EnvNodes), "what plays the local cluster's nodes: kwok (default) or kubelet (real kubelets on containerd: root and Debian's "+clusterpkg.KubeletPackages+")")
	fs.StringVar(&c.gates, "feature-gates", os.Getenv(harness.EnvFeatureGates), "feature gates for every component of the cluster, e.g. JobManagedBy=true (to judge a delegated controller on 1.31)")
	return c
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// plan is a checked runConfig: what will run, with absolute paths.
type plan struct {
	runConfig
	versions   []string // "" with an existing cluster: the cluster's own
	suites     []string
	scenarios  *catalog.Set
	specs      map[string]int // suite → selected scenario specs
	cwd        string
	dirs       []string
	controller []string // names the specs carry
}

// check validates the configuration without starting anything: every error
// is the user's to fix (exit 2).
func (c *runConfig) check(ctx context.Context) (*plan, error) {
	p := &plan{runConfig: *c}
	var err error
	if p.cwd, err = os.Getwd(); err != nil {
		return nil, err
	}
	abs := func(path string) string {
		if path == "" || filepath.IsAbs(path) {
			return path
		}
		return filepath.Join(p.cwd, path)
	}
	p.kubeconfig, p.artifacts = abs(c.kubeconfig), abs(c.artifacts)
	if p.artifacts == "" {
		return nil, errors.New("--artifacts: give a directory")
	}

	// The cluster.
	switch {
	case c.kubeconfig != "" && c.provider != "" && c.provider != "existing":
		return nil, fmt.Errorf("--kubeconfig and --provider %s: choose one (an existing cluster, or one jobconform creates)", c.provider)
	case c.kubeconfig != "":
		p.provider = "existing"
	case c.provider == "existing":
		return nil, errors.New("--provider existing needs --kubeconfig")
	case c.provider == "":
		p.provider = clusterpkg.DefaultProvider
	}
	if _, ok := clusterpkg.Providers[p.provider]; !ok {
		return nil, fmt.Errorf("--provider %q: use one of %s", c.provider, strings.Join(clusterpkg.Names(), ", "))
	}
	// Checks that need no cluster before the one that probes it.
	switch c.nodes {
	case "", clusterpkg.NodesKwok:
	case clusterpkg.NodesKubelet:
		if p.provider != "local" {
			return nil, fmt.Errorf("--nodes kubelet is a setting of the local provider, not of %s", p.provider)
		}
	default:
		return nil, fmt.Errorf("--nodes %q: use %s or %s", c.nodes, clusterpkg.NodesKwok, clusterpkg.NodesKubelet)
	}
	if p.provider == "existing" {
		if len(c.versions) > 0 {
			return nil, errors.New("--k8s-version and --kubeconfig: an existing cluster runs its own release; drop --k8s-version")
		}
		if err := reachable(ctx, p.kubeconfig); err != nil {
			return nil, err
		}
		p.versions = []string{""}
	} else {
		vs := []string(c.versions)
		if len(vs) == 0 {
			vs = []string{defaultVersion()}
		}
		for _, v := range vs {
			pv, err := k8sbin.ParseVersion(v)
			if err != nil {
				return nil, fmt.Errorf("--k8s-version: %w", err)
			}
			p.versions = append(p.versions, pv)
		}
	}

	// The controllers.
	for _, n := range strings.Split(c.controllers, ",") {
		switch n = strings.TrimSpace(n); n {
		case "builtin", "reference":
			p.controller = append(p.controller, n)
		case "external":
			if c.extName == "" {
				return nil, errors.New("--controllers external: give --external-managed-by, the spec.managedBy value your controller answers to")
			}
			p.controller = append(p.controller, c.extName)
		default:
			return nil, fmt.Errorf("--controllers: unknown controller %q (use builtin, reference, external)", n)
		}
	}
	if c.extCommand != "" && !contains(p.controller, c.extName) {
		return nil, errors.New("--external-command without external in --controllers: add it, or drop the command")
	}
	if _, err := harness.ParseGates(c.gates); err != nil {
		return nil, fmt.Errorf("--feature-gates: %v", err)
	}
	if c.gates != "" && p.provider == "existing" {
		return nil, errors.New("--feature-gates and --kubeconfig: jobconform does not configure an existing cluster")
	}
	if c.procs < 1 {
		return nil, fmt.Errorf("--procs %d: give at least 1", c.procs)
	}
	if c.clusterProcs < 1 {
		return nil, fmt.Errorf("--cluster-procs %d: give at least 1", c.clusterProcs)
	}
	if c.seed != "" {
		if _, err := strconv.ParseUint(c.seed, 10, 64); err != nil {
			return nil, fmt.Errorf("--chaos-seed %q: give an unsigned integer", c.seed)
		}
	}
	for _, s := range strings.Split(c.suites, ",") {
		if s = strings.TrimSpace(s); !contains(suiteNames, s) {
			return nil, fmt.Errorf("--suites: unknown suite %q (use %s)", s, strings.Join(suiteNames, ", "))
		}
		p.suites = append(p.suites, s)
	}

	// The scenarios, and which of them the filters select. Without
	// --scenarios, $JOBCONFORM_SCENARIOS names them (as for the suites).
	dirs := []string(c.scenarioDirs)
	if len(dirs) == 0 {
		dirs = filepath.SplitList(os.Getenv(harness.EnvScenarios))
	}
	for _, d := range dirs {
		if d != "" {
			p.dirs = append(p.dirs, abs(d))
		}
	}
	if !c.builtin && len(p.dirs) == 0 {
		return nil, errors.New("--builtin-scenarios=false and no --scenarios: there is no scenario to run")
	}
	if p.scenarios, err = catalog.Assemble(c.builtin, p.dirs...); err != nil {
		return nil, err
	}
	match := func([]string) bool { return true }
	if c.labelFilter != "" {
		f, err := types.ParseLabelFilter(c.labelFilter)
		if err != nil {
			return nil, fmt.Errorf("--label-filter %q: %v", c.labelFilter, err)
		}
		match = f
	}
	focus := regexp.MustCompile("")
	if c.focus != "" {
		if focus, err = regexp.Compile(c.focus); err != nil {
			return nil, fmt.Errorf("--focus %q: %v", c.focus, err)
		}
	}
	p.specs = map[string]int{}
	var kept []string
	for _, suite := range p.suites {
		all, labels := p.scenarios.Conformance, []string(nil)
		if suite == "chaos" {
			all, labels = p.scenarios.Chaos, []string{"chaos"}
		}
		for _, s := range all {
			for _, ctl := range p.controller {
				text := fmt.Sprintf("%s [%s] %s", suite, ctl, s.Name)
				if s.ForController(ctl) && match(append(append([]string(nil), labels...), s.Features...)) && focus.MatchString(text) {
					p.specs[suite]++
				}
			}
		}
		if p.specs[suite] > 0 {
			kept = append(kept, suite)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("the filters select no scenario of the suites %s (label filter %q, focus %q; features: %s): run jobconform list to see the scenarios",
			strings.Join(p.suites, ", "), c.labelFilter, c.focus, strings.Join(scenarios.Features, ", "))
	}
	p.suites = kept
	return p, nil
}

// reachable checks that an existing cluster answers.
func reachable(ctx context.Context, kubeconfig string) error {
	if _, err := os.Stat(kubeconfig); err != nil {
		return fmt.Errorf("--kubeconfig: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := harness.Client(kubeconfig, "")
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
		}
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("--kubeconfig %s: the cluster did not answer within 30s: check that it runs and the kubeconfig's server address", kubeconfig)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// runSuites is jobconform run: check the input, build what the releases need,
// run the suites with Ginkgo (this binary is the suites' test binary, see
// suiteProcess), then write the report and print the verdicts. It returns a
// usageError for bad input, an error for any non-conformance.
func runSuites(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	c := runFlags(fs)
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("run takes no arguments (got %q): give scenario directories with --scenarios", fs.Args())}
	}
	p, err := c.check(ctx)
	if err != nil {
		return usageError{err}
	}
	for _, s := range p.suites {
		fmt.Fprintf(os.Stderr, "jobconform: %s suite: %d scenario runs selected (%s; controllers %s)\n", s, p.specs[s], describeSources(p), strings.Join(p.controller, ", "))
	}
	if p.provider == "local" {
		b := &k8sbin.Builder{Progress: os.Stderr}
		for _, v := range p.versions {
			if _, err := b.Ensure(ctx, v); err != nil {
				return err
			}
		}
	}
	bin, err := os.MkdirTemp("", "jobconform-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bin)
	if err := p.setEnv(bin); err != nil {
		return err
	}
	var reportFiles []string
	var runs []reports.Run
	var runErrs []error
	for _, v := range p.versions {
		out := filepath.Join(p.artifacts, orDefault(v, "cluster"))
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		_ = os.Setenv(harness.EnvVersion, v)
		progress := filepath.Join(out, "progress.log")
		_ = os.Setenv(harness.EnvProgressFile, progress)
		report := filepath.Join(out, "report.json")
		_ = os.Remove(report) // a report left by an earlier run must not stand for this one
		var parts []string
		for _, suite := range p.suites {
			procs := p.procsOf(suite)
			fmt.Fprintf(os.Stderr, "jobconform: running the %s suite on %s (%d processes); reports in %s\n", suite, orDefault(v, "the existing cluster"), procs, out)
			part := filepath.Join(out, "report-"+suite+".json")
			_ = os.Remove(part)
			_ = os.Remove(progress) // each suite's set-up shown once
			stopTail := tail(progress, os.Stderr, "  | ")
			code := runGinkgo(p.ginkgoArgs(bin, out, suite))
			stopTail()
			if ctx.Err() != nil {
				return ctx.Err() // interrupted: Ginkgo stopped the suites
			}
			bad, err := badInput(part)
			switch {
			case err != nil:
				return fmt.Errorf("%s, %s suite: Ginkgo wrote no report (exit code %d): %w", orDefault(v, "existing cluster"), suite, code, err)
			case bad != "":
				return usageError{errors.New(bad)}
			case code != 0:
				runErrs = append(runErrs, fmt.Errorf("%s, %s suite: Ginkgo exit code %d", orDefault(v, "existing cluster"), suite, code))
			}
			parts = append(parts, part)
		}
		// One report.json per release, as when the suites ran together.
		if err := mergeReports(report, parts); err != nil {
			return err
		}
		rs, err := ginkgoreport.Load(report)
		if err != nil {
			return err
		}
		for i := range rs {
			if rs[i].Version == "" { // a spec that failed before it ran a scenario
				rs[i].Version = orDefault(v, "?")
			}
		}
		runs = append(runs, rs...)
		reportFiles = append(reportFiles, report)
	}
	reports.Sort(runs)
	path, err := reports.Write(p.artifacts, "jobconform", runs)
	if err != nil {
		return err
	}
	failed := printVerdicts(os.Stdout, runs)
	fmt.Printf("\nreport: %s\nsummary: %s\nJUnit and Ginkgo JSON: %s\n", path, filepath.Join(p.artifacts, "summary.md"), strings.Join(reportDirs(reportFiles), " "))
	if failed > 0 {
		return fmt.Errorf("%d specs failed: the controllers under test broke promises (see the report)", failed)
	}
	if err := unjudged(runs); err != nil {
		return err
	}
	return errors.Join(runErrs...)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func describeSources(p *plan) string {
	var parts []string
	if p.builtin {
		parts = append(parts, "jobconform's catalog")
	}
	for _, d := range p.dirs {
		parts = append(parts, d)
	}
	return strings.Join(parts, " + ")
}

func reportDirs(files []string) []string {
	var out []string
	for _, f := range files {
		out = append(out, filepath.Dir(f))
	}
	return out
}

// setEnv writes the suites' executables into bin — scripts that run this
// binary as a suite process, from the user's directory — and sets the
// variables the suite processes read.
func (p *plan) setEnv(bin string) error {
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
	for _, s := range p.suites {
		if err := script(suiteScript(s), fmt.Sprintf("cd %s || exit 1\nexec %s suite-process %s \"$@\"", shellQuote(p.cwd), shellQuote(self), s)); err != nil {
			return err
		}
	}
	if err := script("reference-controller", fmt.Sprintf("exec %s reference-controller \"$@\"", shellQuote(self))); err != nil {
		return err
	}
	ext := p.extCommand
	if ext != "" {
		ext = "cd " + shellQuote(p.cwd) + " || exit 1\n" + ext
	}
	env := map[string]string{
		harness.EnvProvider:         p.provider,
		harness.EnvKubeconfig:       p.kubeconfig,
		harness.EnvControllers:      p.controllers,
		harness.EnvExternalName:     p.extName,
		harness.EnvExternalCommand:  ext,
		harness.EnvExternalFinal:    p.extFinalizer,
		harness.EnvReferenceBinary:  filepath.Join(bin, "reference-controller"),
		harness.EnvScenarios:        strings.Join(p.dirs, string(os.PathListSeparator)),
		harness.EnvBuiltinScenarios: strconv.FormatBool(p.builtin),
		harness.EnvFeatureGates:     p.gates,
		harness.EnvNodes:            p.nodes,
		chaos.SeedEnv:               p.seed,
	}
	if p.provider == "existing" {
		env[harness.EnvProvider] = "" // the harness infers it from the kubeconfig
	}
	for k, v := range env {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	return nil
}

// suiteScript is where a suite's script goes under the run's directory: a
// directory each, because Ginkgo names a precompiled suite's reports after its
// directory, and two suites in one directory would overwrite each other's.
func suiteScript(suite string) string { return filepath.Join(suite, suite+".test") }

// shellQuote quotes s for /bin/sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// procsOf is how many Ginkgo processes run suite: the chaos and drill suites
// bring up a cluster per spec, so fewer.
func (p *plan) procsOf(suite string) int {
	if suite == "conformance" {
		return p.procs
	}
	return p.clusterProcs
}

// ginkgoArgs runs one suite (Ginkgo takes one process count per run).
// --randomize-all: the specs' priorities (longest first) order every spec,
// not only the top-level containers.
func (p *plan) ginkgoArgs(bin, out, suite string) []string {
	args := []string{"--keep-going", "--randomize-all", "--timeout=" + p.timeout.String(), "--output-dir=" + out,
		"--junit-report=junit-" + suite + ".xml", "--json-report=report-" + suite + ".json"}
	if procs := p.procsOf(suite); procs > 1 {
		args = append(args, "-p", fmt.Sprintf("--procs=%d", procs))
	}
	if !term.IsTerminal(int(os.Stdout.Fd())) {
		args = append(args, "--no-color")
	}
	if p.labelFilter != "" {
		args = append(args, "--label-filter="+p.labelFilter)
	}
	if p.focus != "" {
		args = append(args, "--focus="+p.focus)
	}
	return append(args, filepath.Join(bin, suiteScript(suite)))
}

// mergeReports writes the suites' Ginkgo JSON reports (each a list of suite
// reports) as one list into path.
func mergeReports(path string, parts []string) error {
	var all []json.RawMessage
	for _, part := range parts {
		data, err := os.ReadFile(part)
		if err != nil {
			return err
		}
		var suites []json.RawMessage
		if err := json.Unmarshal(data, &suites); err != nil {
			return fmt.Errorf("%s: %w", part, err)
		}
		all = append(all, suites...)
	}
	data, err := json.Marshal(all)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// runGinkgo runs the Ginkgo CLI's run command in this process and returns its
// exit code.
func runGinkgo(args []string) (code int) {
	prog := command.Program{
		Name:           "ginkgo",
		DefaultCommand: ginkgorun.BuildRunCommand(),
		Exiter:         func(c int) { code = c },
	}
	prog.RunAndExit(append([]string{"ginkgo"}, args...))
	return code
}

// tail copies the lines appended to path to w until stopped: the set-up's
// progress, which Ginkgo shows only at the end otherwise.
func tail(path string, w io.Writer, prefix string) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		var offset int64
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			offset = copyLines(path, offset, w, prefix)
			select {
			case <-done:
				copyLines(path, offset, w, prefix)
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// copyLines writes the complete lines of path after offset, and returns the
// offset after the last one.
func copyLines(path string, offset int64, w io.Writer, prefix string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return offset
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return offset
	}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return offset // an incomplete line waits for its end
		}
		offset += int64(len(line))
		fmt.Fprint(w, prefix+line)
	}
}

// badInput reads a Ginkgo JSON report for a set-up that failed on the user's
// input (harness.BadInput), and returns its message.
func badInput(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var suites []types.Report
	if err := json.Unmarshal(data, &suites); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	for _, r := range suites {
		for _, sr := range r.SpecReports {
			if sr.State.Is(types.SpecStateFailureStates) && strings.Contains(sr.Failure.Message, harness.BadInputPrefix) {
				msg := sr.Failure.Message[strings.Index(sr.Failure.Message, harness.BadInputPrefix)+len(harness.BadInputPrefix):]
				return msg, nil
			}
		}
	}
	return "", nil
}

// unjudged reports a controller under test of which every run skipped (e.g.
// a delegated controller on a cluster that drops spec.managedBy): a run that
// judged nothing must not read as a pass.
func unjudged(runs []reports.Run) error {
	judged, why := map[string]int{}, map[string]string{}
	for _, r := range runs {
		if r.Control() || r.Controller == "" {
			continue
		}
		judged[r.Controller] += 0 // known, judged or not
		if r.Verdict != "skip" {
			judged[r.Controller]++
		} else if why[r.Controller] == "" {
			why[r.Controller] = r.Skipped
		}
	}
	var errs []error
	total, reason := 0, ""
	for _, r := range runs {
		if r.Verdict != "skip" {
			total++
		} else if reason == "" {
			reason = r.Skipped
		}
	}
	if total == 0 && len(runs) > 0 {
		// A set-up that skipped the suite (kubelet nodes on a machine that
		// cannot run containers) judged nothing: not a pass.
		if reason == "" {
			reason = "see the set-up's output above"
		}
		errs = append(errs, fmt.Errorf("no verdict: every spec was skipped (%s)", reason))
	}
	for _, c := range sortedNames(judged) {
		if judged[c] == 0 {
			errs = append(errs, fmt.Errorf("no verdict on %s: every run of it was skipped (%s)", c, why[c]))
		}
	}
	return errors.Join(errs...)
}

func sortedNames(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// printVerdicts writes a verdict table per release and suite, then each
// failure's first line, and returns the number of failed specs.
func printVerdicts(w io.Writer, runs []reports.Run) int {
	type key struct{ version, suite string }
	count := map[key]map[string]int{}
	var keys []key
	var failures []string
	for _, r := range runs {
		k := key{r.Version, r.Suite}
		if count[k] == nil {
			count[k] = map[string]int{}
			keys = append(keys, k)
		}
		// The test's verdict: a negative control passes when it catches its
		// broken controller.
		count[k][r.SpecVerdict]++
		if r.SpecVerdict == "FAIL" {
			first, _, _ := strings.Cut(strings.TrimSpace(strings.Join(r.Failures, "\n")), "\n")
			failures = append(failures, fmt.Sprintf("  FAIL %s (Kubernetes %s): %s", r.Spec, r.Version, first))
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].version != keys[j].version {
			return keys[i].version < keys[j].version
		}
		return keys[i].suite < keys[j].suite
	})
	fmt.Fprintf(w, "\njobconform verdicts\n  %-12s %-24s %6s %6s %7s\n", "Kubernetes", "suite", "passed", "failed", "skipped")
	total := 0
	for _, k := range keys {
		c := count[k]
		fmt.Fprintf(w, "  %-12s %-24s %6d %6d %7d\n", orDefault(k.version, "?"), k.suite, c["PASS"], c["FAIL"], c["skip"])
		total += c["FAIL"]
	}
	for _, f := range failures {
		fmt.Fprintln(w, f)
	}
	return total
}
