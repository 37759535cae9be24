package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/jobconform/jobconform/chaos"
	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/internal/mutants"
	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/release"
	"github.com/jobconform/jobconform/internal/shard"
	"github.com/jobconform/jobconform/reports"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/catalog"
	"github.com/jobconform/jobconform/suites/scale"
)

// plan is a checked run: the settings with absolute paths, the scenarios,
// and the suite runs (jobs) to carry out.
type plan struct {
	o         options.Options
	cwd       string
	scenarios *catalog.Set
	specs     map[string]int // suite → selected scenario specs
	jobs      []job
	baseline  []reports.Run // --baseline's runs, read before anything runs
	// builds, when set, are being built beside the jobs: each job waits
	// for its own (startBuilds); nil: everything was built before.
	builds *builds
	// parts, when set, records how long each suite run took (make test).
	parts *parts
}

// settle resolves o's releases (internal/release) and checks the rest.
func settle(o *options.Options) error {
	if err := o.ResolveReleases(release.Resolve); err != nil {
		return err
	}
	return o.Validate()
}

// addFlags binds jobconform run's flags to o, the releases they default to
// named in their help (the settings know no release).
func addFlags(fs *flag.FlagSet, o *options.Options) {
	o.AddFlags(fs)
	describeReleases(fs)
}

// describeReleases names the default and previous release in the help of
// the flags that take a release.
func describeReleases(fs *flag.FlagSet) {
	if f := fs.Lookup("k8s-version"); f != nil {
		f.Usage = strings.Replace(f.Usage, "jobconform's default release", release.Default, 1)
	}
	if f := fs.Lookup("builtin-at"); f != nil {
		f.Usage = strings.Replace(f.Usage, "the minor before the default release", release.Previous, 1)
	}
}

// runFlags parses jobconform run's flags over the environment's settings
// (options.FromEnv): the one place either is read.
func runFlags(args []string) (options.Options, error) {
	o, err := options.FromEnv()
	if err != nil {
		return o, err
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	addFlags(fs, &o)
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("run takes no arguments (got %q): give scenario directories with --scenarios", fs.Args())
	}
	return o, nil
}

// check validates o without starting anything: every error is the user's to
// fix (exit 2).
func check(ctx context.Context, o options.Options) (*plan, error) {
	if o.Run.RerunFailed != "" {
		n, err := narrowToFailed(&o, o.Run.RerunFailed)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "jobconform: --rerun-failed: %d specs failed in %s: running them again (focus %s)\n", n, o.Run.RerunFailed, o.Run.Focus)
	}
	if err := settle(&o); err != nil {
		return nil, err
	}
	if _, err := mutants.LookupAll(o.ReferenceFaults); err != nil {
		return nil, fmt.Errorf("--reference-faults: %w", err)
	}
	p := &plan{o: o}
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
	p.o.Kubeconfig, p.o.Run.Artifacts, p.o.Oracle.From = abs(o.Kubeconfig), abs(o.Run.Artifacts), abs(o.Oracle.From)
	// whose names the context oneContext wrote out, for the errors of a
	// cluster that does not answer ("": the --kubeconfig given, as is).
	whose := ""
	if p.o.ProviderName() == "existing" && (p.o.Kubeconfig == "" || p.o.Context != "") {
		if p.o.Kubeconfig, err = oneContext(p.o.Kubeconfig, p.o.Context); err != nil {
			return nil, usageError{err}
		}
		whose = "the current context"
		if o.Context != "" {
			whose = fmt.Sprintf("context %q", o.Context)
		}
		whose += " of " + cmp.Or(o.Kubeconfig, "$KUBECONFIG or ~/.kube/config")
	}
	if p.o.Oracle.From != "" {
		if fi, err := os.Stat(p.o.Oracle.From); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("--oracle-from %s: give the oracle directory of an earlier run (<artifacts>/<release>/oracle)", o.Oracle.From)
		}
	}
	if p.baseline, err = readBaseline(abs(o.Run.Baseline), p.o.Run.Artifacts); err != nil {
		return nil, err
	}
	p.o.ScenarioDirs = nil
	for _, d := range o.ScenarioDirs {
		p.o.ScenarioDirs = append(p.o.ScenarioDirs, abs(d))
	}
	if p.o.ProviderName() == "existing" {
		if err := reachable(ctx, p.o.Kubeconfig); err != nil {
			if whose != "" {
				return nil, fmt.Errorf("%s: %w", whose, err)
			}
			return nil, err
		}
		if p.o.ChaosEngine == "chaos-mesh" && slices.Contains(p.o.Run.Suites, "chaos") {
			if err := chaosMeshInstalled(ctx, p.o.Kubeconfig); err != nil {
				return nil, err
			}
		}
		// What the run's namespaces are labelled with, for its sweep.
		p.o.Run.ID = fmt.Sprintf("%s-%04x", time.Now().UTC().Format("20060102-150405"), rand.IntN(1<<16))
	} else if len(p.o.Run.Versions) == 0 {
		p.o.Run.Versions = []string{release.Default}
	}
	if p.scenarios, err = catalog.Assemble(o.BuiltinScenarios, p.o.ScenarioDirs...); err != nil {
		return nil, err
	}
	if err := p.selectSpecs(); err != nil {
		return nil, err
	}
	p.jobs = planJobs(p.o, p.specs)
	return p, nil
}

// selectSpecs counts the specs the filters select in each suite, and drops
// the suites they select none of.
func (p *plan) selectSpecs() error {
	r := p.o.Run
	p.specs = map[string]int{}
	var kept []string
	for _, suite := range r.Suites {
		n, err := p.countSpecs(p.o, suite)
		if err != nil {
			return err
		}
		if p.specs[suite] = n; n > 0 {
			kept = append(kept, suite)
		}
	}
	if len(kept) == 0 {
		return fmt.Errorf("the filters select no scenario of the suites %s (label filter %q, focus %q; features: %s): run jobconform list to see the scenarios",
			strings.Join(r.Suites, ", "), r.LabelFilter, r.Focus, strings.Join(scenarios.Features, ", "))
	}
	p.o.Run.Suites = kept
	return nil
}

// countSpecs counts the scenario specs of suite that o's filters select for
// o's controllers, as Ginkgo will select them (specText).
func (p *plan) countSpecs(o options.Options, suite string) (int, error) {
	specs, err := p.selectedSpecs(o, suite)
	if suite == "drill" && err == nil {
		if k, _, _ := options.ParseShard(o.Run.Shard); k <= 1 {
			return len(o.Drills) + 1, nil // flights are chosen inside the suite
		}
	}
	return len(specs), err
}

// spec is one scenario spec a run selects: a scenario against a controller.
type spec struct {
	Suite      string   `json:"suite"`
	Scenario   string   `json:"scenario"`
	Controller string   `json:"controller,omitempty"`
	Features   []string `json:"features,omitempty"`
	// Releases are the releases the scenario holds for ("all"): at others
	// its spec runs and says it is not applicable.
	Releases string `json:"releases,omitempty"`
	File     string `json:"file,omitempty"`
}

// selectedSpecs are the scenario specs of suite that o's filters select
// for o's controllers, as Ginkgo will select them (specText); the drill
// suite's are its drills (their flights are chosen inside the suite).
func (p *plan) selectedSpecs(o options.Options, suite string) ([]spec, error) {
	k, n, err := options.ParseShard(o.Run.Shard)
	if err != nil {
		return nil, err
	}
	if suite == "drill" {
		if k > 1 {
			return nil, nil // the drills fly in shard 1
		}
		out := []spec{{Suite: suite, Scenario: "the drill path " + o.DrillPath}}
		if o.DrillPath == "" {
			out = nil
			for _, d := range o.Drills {
				out = append(out, spec{Suite: suite, Scenario: d})
			}
		}
		return out, nil
	}
	match := func([]string) bool { return true }
	if o.Run.LabelFilter != "" {
		f, err := types.ParseLabelFilter(o.Run.LabelFilter)
		if err != nil {
			return nil, fmt.Errorf("--label-filter %q: %v", o.Run.LabelFilter, err)
		}
		match = f
	}
	focus := regexp.MustCompile("")
	if o.Run.Focus != "" {
		var err error
		if focus, err = regexp.Compile(o.Run.Focus); err != nil {
			return nil, fmt.Errorf("--focus %q: %v", o.Run.Focus, err)
		}
	}
	all, labels := p.scenarios.Conformance, []string(nil)
	switch suite {
	case "chaos":
		all, labels = p.scenarios.Chaos, []string{"chaos"}
	case "scale":
		var err error
		if all, err = catalog.LoadScale(o.ScaleForm()); err != nil {
			return nil, err
		}
		labels = []string{"scale"}
	}
	if n > 1 { // as the suite process splits them (harness.MyShard)
		keep := shard.Measured().Shard(suites[suite].description, scenarios.Names(all), o.ControllerNames(), k, n)
		all = slices.DeleteFunc(slices.Clone(all), func(s *scenarios.Scenario) bool { return !keep[s.Name] })
	}
	var out []spec
	for _, s := range all {
		names := o.ControllerNames()
		if suite == "scale" && slices.Contains(names, "reference") && scale.SlowedRuns(s.Name) {
			names = append(names, scale.Slowed.Name)
		}
		for _, ctl := range names {
			if s.ForController(ctl) && match(append(append([]string(nil), labels...), s.Features...)) && focus.MatchString(specText(suite, ctl, s.Name)) {
				out = append(out, spec{Suite: suite, Scenario: s.Name, Controller: ctl, Features: s.Features, Releases: cmp.Or(s.Versions, "all"), File: s.File})
			}
		}
	}
	return out, nil
}

// specText is what Ginkgo's --focus matches a scenario's spec against: the
// suite's description, then the spec's container and its own text ("jobconform
// conformance conformance [builtin] complete-simple"), so that a focus counts
// here the specs it selects there (seen: a focus anchored at "^conformance"
// counted 8 specs and ran none).
func specText(suite, controller, scenario string) string {
	return fmt.Sprintf("%s %s [%s] %s", suites[suite].description, suite, controller, scenario)
}

// oneContext writes the kubeconfig's context (its current one for "") into a
// private file that every process of the run reads as its kubeconfig
// (kubeconfig "": kubectl's, $KUBECONFIG or ~/.kube/config), removed when
// jobconform exits.
func oneContext(kubeconfig, context string) (string, error) {
	dir, err := os.MkdirTemp("", "jobconform-kubeconfig-")
	if err != nil {
		return "", err
	}
	atExit(func() { os.RemoveAll(dir) })
	path, err := kube.WriteOneContext(kubeconfig, context, dir)
	if err != nil && context == "" {
		return "", fmt.Errorf("--provider existing: %w", err)
	}
	if err != nil {
		return "", fmt.Errorf("--context: %w", err)
	}
	return path, nil
}

// reachable checks that an existing cluster answers.
func reachable(ctx context.Context, kubeconfig string) error {
	if _, err := os.Stat(kubeconfig); err != nil {
		return fmt.Errorf("--kubeconfig: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := kube.Client(kubeconfig, "")
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

// runSuites is jobconform run: check the input, build what the releases
// need, run the plan's jobs (two streams side by side, see jobs.go), then
// write the report and print the verdicts. It returns a usageError for bad
// input, an error for any non-conformance.
func runSuites(ctx context.Context, args []string) error {
	o, err := runFlags(args)
	if err != nil {
		return usageError{err}
	}
	p, err := check(ctx, o)
	if err != nil {
		return usageError{err}
	}
	return p.execute(ctx)
}

// execute builds what the plan needs and runs it: each suite starts once
// its own release is built, beside the builds of the others.
func (p *plan) execute(ctx context.Context) error {
	for _, s := range p.o.Run.Suites {
		shard := ""
		if p.o.Run.Shard != "" {
			shard = ", shard " + p.o.Run.Shard
		}
		fmt.Fprintf(os.Stderr, "jobconform: %s suite: %d scenario runs selected (%s; controllers %s%s)\n", s, p.specs[s], describeSources(p), strings.Join(p.o.ControllerNames(), ", "), shard)
	}
	if p.runs("multikueue") {
		if err := buildKueue(ctx, p.o.KueueVersion); err != nil {
			return err
		}
	}
	if p.o.ProviderName() == "existing" {
		fmt.Fprintf(os.Stderr, "jobconform: run %s on the cluster of %s: its namespaces are labelled %s=%s, and removed at its end%s\n",
			p.o.Run.ID, p.o.Kubeconfig, kube.RunLabel, p.o.Run.ID, disruptionNote(p.o))
	}
	p.builds = startBuilds(ctx, p.o.Run.Versions, p.o.Run.BuiltinAt, p.o.Run.KubeletConformance || p.o.Nodes == options.NodesKubelet, releaseBuilder())
	res, err := p.runJobs(ctx)
	if p.o.ProviderName() == "existing" {
		// Also after an interrupt: nothing of the run stays on the user's cluster.
		if serr := sweep(p.o.Kubeconfig, p.o.Run.ID); serr != nil {
			if err != nil {
				return errors.Join(err, serr)
			}
			if res == nil {
				return serr
			}
			res.errs = append(res.errs, serr)
		}
	}
	if err != nil {
		if ctx.Err() != nil || errors.As(err, new(usageError)) {
			return err
		}
		return harnessError{err}
	}
	if err := p.builds.finish(ctx); err != nil {
		res.errs = append(res.errs, err)
	}
	if p.o.Run.Coverage {
		if _, err := writeRunCoverage(ctx, os.Stdout, p.o.Run.Artifacts, "jobconform run (suites "+strings.Join(p.o.Run.Suites, ", ")+")"); err != nil {
			res.errs = append(res.errs, err)
		}
	}
	return res.verdict()
}

// chaosMeshInstalled fails unless the cluster serves Chaos Mesh's PodChaos.
func chaosMeshInstalled(ctx context.Context, kubeconfig string) error {
	client, _, err := kube.Client(kubeconfig, "")
	if err != nil {
		return err
	}
	has, err := chaos.HasChaosMesh(client)
	if err != nil {
		return err
	}
	if !has {
		return fmt.Errorf("--chaos-engine chaos-mesh: the cluster serves no %s: install Chaos Mesh (its CRDs and controller-manager), or use --chaos-engine builtin", chaos.PodChaosResource)
	}
	return nil
}

// disruptionNote says, before anything runs, whether chaos will disturb the
// cluster's nodes.
func disruptionNote(o options.Options) string {
	if !slices.Contains(o.Run.Suites, "chaos") {
		return ""
	}
	if o.Existing.AllowNodeDisruption {
		return ";\n  --allow-node-disruption: chaos will cordon, drain and taint nodes and preempt pods there, disturbing whatever else runs on them (each node restored after its scenario)"
	}
	return ";\n  chaos that cordons, drains or taints nodes is not applicable (pass --allow-node-disruption to let it disturb the nodes)"
}

// runs tells whether a job of the plan runs controller c.
func (p *plan) runs(c string) bool {
	for _, j := range p.jobs {
		if slices.Contains(j.o.Controllers, c) {
			return true
		}
	}
	return false
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func describeSources(p *plan) string {
	var parts []string
	if p.o.BuiltinScenarios {
		parts = append(parts, "jobconform's catalog")
	}
	parts = append(parts, p.o.ScenarioDirs...)
	return strings.Join(parts, " + ")
}

// usageError marks bad input (exit code 2).
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

var errInterrupted = errors.New("interrupted")
