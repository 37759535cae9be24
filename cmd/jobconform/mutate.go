package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jobconform/jobconform/internal/k8sbin"
	"github.com/jobconform/jobconform/internal/mutants"
	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/release"
	"github.com/jobconform/jobconform/reports"
	"github.com/jobconform/jobconform/suites/ginkgoreport"
)

// mutant is one fault's outcome.
type mutant struct {
	Fault   string   `json:"fault"`
	Breaks  string   `json:"breaks"`
	Labels  string   `json:"labels"`
	Caught  bool     `json:"caught"`
	By      []string `json:"by,omitempty"` // "scenario: invariant or step"
	Specs   int      `json:"specs"`
	Error   string   `json:"error,omitempty"`
	Seconds float64  `json:"seconds"`
}

// mutate runs the conformance scenarios against the reference controller
// broken by each fault in turn and prints the mutation score.
func mutate(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	version := fs.String("k8s-version", release.Default, "Kubernetes release of the local cluster")
	procs := fs.Int("procs", 6, "parallel Ginkgo processes per fault")
	out := fs.String("out", filepath.Join(options.Artifacts(), "mutate"), "directory for each fault's reports and mutation.{md,json}")
	only := fs.String("faults", "", "comma-separated faults to run (default: every mutant of internal/mutants)")
	rejudge := fs.Bool("rejudge", false, "run nothing: judge again the runs an earlier mutate kept in --out, and write its results anew")
	all := fs.Bool("all-specs", false, "run every spec of each fault, not only up to its first catch (slower; names every check that catches it)")
	load := fs.Int("load", 0, "processes spinning on the CPUs beside the runs: are the faults still caught on a loaded runner?")
	focus := fs.String("focus", "", "run only the faults' specs whose text matches this regular expression (as run's --focus), to prove a coverage row's own checks; the catches are added to those kept in --out")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *load < 0 {
		return usageError{fmt.Errorf("--load %d: give a number of processes, 0 for none", *load)}
	}
	faults := mutants.All()
	if *only != "" {
		var err error
		if faults, err = mutants.LookupAll(strings.Split(*only, ",")); err != nil {
			return usageError{err}
		}
	}
	if *rejudge {
		results, err := judgeKept(*out, faults)
		if err != nil {
			return err
		}
		return writeMutationResults(*out, faults, results, *version)
	}
	if err := checkMutants(ctx, faults); err != nil {
		return err
	}
	if _, err := (&k8sbin.Builder{Progress: os.Stderr}).Ensure(ctx, *version); err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	stopHogs, err := startHogs(*load, *out)
	if err != nil {
		return err
	}
	defer stopHogs()
	if *load > 0 {
		fmt.Fprintf(os.Stderr, "jobconform mutate: beside %d spinning processes\n", *load)
	}
	s := mutateSettings{version: *version, procs: *procs, failFast: !*all, focus: *focus}
	oracleFrom := builtinOracle(ctx, faults, s, filepath.Join(*out, s.subdir("builtin")))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var results []mutant
	for i, f := range faults {
		m := runMutant(ctx, f, s, oracleFrom, filepath.Join(*out, s.subdir(f.Name)))
		if ctx.Err() != nil {
			// Interrupted: its specs failed by being stopped, which is no catch.
			fmt.Fprintf(os.Stderr, "[%d/%d] %s: interrupted, no verdict\n", i+1, len(faults), f.Name)
			return ctx.Err()
		}
		results = append(results, m)
		verdict := "MISSED"
		switch {
		case m.Error != "":
			verdict = "ERROR: " + m.Error
		case m.Caught:
			verdict = "caught by " + strings.Join(m.By, "; ")
		}
		fmt.Fprintf(os.Stderr, "[%d/%d] %s (%s, %d specs, %.0fs): %s\n", i+1, len(faults), f.Name, m.Labels, m.Specs, m.Seconds, verdict)
	}
	if *focus != "" {
		// A focused run proves a part: it adds to what --out holds.
		results, faults = withKept(*out, faults, results)
	}
	return writeMutationResults(*out, faults, results, *version)
}

// withKept adds the results kept in out's mutation.json to a focused run's:
// a fault run both ways is caught by the union of its catches.
func withKept(out string, faults []mutants.Mutant, results []mutant) ([]mutant, []mutants.Mutant) {
	data, err := os.ReadFile(filepath.Join(out, "mutation.json"))
	if err != nil {
		return results, faults
	}
	var kept []mutant
	if json.Unmarshal(data, &kept) != nil {
		return results, faults
	}
	byFault := map[string]*mutant{}
	for i := range results {
		byFault[results[i].Fault] = &results[i]
	}
	var merged []mutant
	for _, k := range kept {
		m, ok := byFault[k.Fault]
		if !ok {
			merged = append(merged, k)
			if f, err := mutants.Lookup(k.Fault); err == nil {
				faults = append(faults, f)
			}
			continue
		}
		*m = union(k, *m)
	}
	return append(merged, results...), faults
}

// union is one fault's outcome over two runs of it.
func union(a, b mutant) mutant {
	out := b
	out.Caught = a.Caught || b.Caught
	out.Specs = a.Specs + b.Specs
	out.Seconds = a.Seconds + b.Seconds
	out.By = slices.Clone(a.By)
	for _, x := range b.By {
		if !slices.Contains(out.By, x) {
			out.By = append(out.By, x)
		}
	}
	if out.Caught {
		out.Error = ""
	} else if out.Error == "" {
		out.Error = a.Error
	}
	return out
}

// judgeKept judges again each fault's runs kept in out by an earlier
// mutate (its time taken from that run's mutation.json, when there).
// A fault's focused runs (--focus) are judged with its full run: a union.
func judgeKept(out string, faults []mutants.Mutant) ([]mutant, error) {
	seconds := map[string]float64{}
	if data, err := os.ReadFile(filepath.Join(out, "mutation.json")); err == nil {
		var earlier []mutant
		if json.Unmarshal(data, &earlier) == nil {
			for _, m := range earlier {
				seconds[m.Fault] = m.Seconds
			}
		}
	}
	var results []mutant
	for _, f := range faults {
		m := mutant{Fault: f.Name, Breaks: f.Breaks, Labels: f.Labels, Seconds: seconds[f.Name]}
		paths, _ := filepath.Glob(filepath.Join(out, f.Name, "focus-*", "report-"+f.Suite+".json"))
		full := filepath.Join(out, f.Name, "report-"+f.Suite+".json")
		if _, err := os.Stat(full); err == nil || len(paths) == 0 {
			paths = append([]string{full}, paths...)
		}
		for _, path := range paths {
			runs, err := ginkgoreport.Load(path)
			if err != nil {
				return nil, usageError{fmt.Errorf("--rejudge: no kept run of %s in %s (%v): run it, or name the faults kept with --faults", f.Name, out, err)}
			}
			// The time stays the kept one: judging again takes none.
			r := mutant{Fault: m.Fault, Breaks: m.Breaks, Labels: m.Labels}
			r.Caught, r.By, r.Specs, r.Error = judge(runs)
			m = union(m, r)
		}
		results = append(results, m)
	}
	return results, nil
}

// checkMutants checks that every mutant applies and compiles before any
// suite runs: one that no longer does is an error naming it, not a run
// that ends an hour later.
func checkMutants(ctx context.Context, faults []mutants.Mutant) error {
	src, err := mutants.SourceDir(ctx)
	if err != nil {
		return err
	}
	checker, err := mutants.NewChecker(ctx, src)
	if err != nil {
		return err
	}
	for _, f := range faults {
		if err := checker.Check(f); err != nil {
			return err
		}
	}
	return nil
}

// writeMutationResults prints the mutation score, writes mutation.md,
// mutation.json and the HTML report into out, and fails unless every
// fault was caught.
func writeMutationResults(out string, faults []mutants.Mutant, results []mutant, version string) error {
	caught := 0
	for _, m := range results {
		if m.Caught {
			caught++
		}
	}
	var md strings.Builder
	writeMutation(&md, results, version)
	fmt.Print(md.String())
	if err := os.WriteFile(filepath.Join(out, "mutation.md"), []byte(md.String()), 0o644); err != nil {
		return err
	}
	data, _ := json.MarshalIndent(results, "", "  ")
	if err := os.WriteFile(filepath.Join(out, "mutation.json"), data, 0o644); err != nil {
		return err
	}
	if path, err := writeMutationReport(out, faults); err != nil {
		fmt.Fprintf(os.Stderr, "no HTML report: %v\n", err)
	} else {
		fmt.Printf("report: %s\n", path)
	}
	if caught < len(results) {
		return fmt.Errorf("mutation score %d/%d: %d faults not caught (see %s)", caught, len(results), len(results)-caught, filepath.Join(out, "mutation.md"))
	}
	return nil
}

// runMutant runs the fault's scenarios against the reference controller
// broken by it (built from the mutant's edits), as jobconform run runs a
// suite, and reads which specs failed, and through what. oracleFrom is the
// built-in's kept runs ("": each spec runs the built-in as its oracle).
func runMutant(ctx context.Context, f mutants.Mutant, s mutateSettings, oracleFrom, dir string) (m mutant) {
	m = mutant{Fault: f.Name, Breaks: f.Breaks, Labels: f.Labels}
	start := time.Now()
	defer func() { m.Seconds = time.Since(start).Seconds() }()
	o := s.options(f.Suite, f.Labels, dir)
	o.Controllers, o.ReferenceFaults = []string{"reference"}, []string{f.Name}
	if f.Suite == "conformance" {
		o.Oracle.From = oracleFrom
	}
	runs, err := runOnce(ctx, o, dir)
	if err != nil {
		m.Error = err.Error()
		return m
	}
	m.Caught, m.By, m.Specs, m.Error = judge(runs)
	return m
}

// mutateSettings are what every run of make mutate shares.
type mutateSettings struct {
	version  string
	procs    int
	failFast bool
	focus    string // "" or --focus
}

// subdir is where a fault's (or the oracle's) run is kept: a focused run
// beside the full one, under a name of its focus.
func (s mutateSettings) subdir(name string) string {
	if s.focus == "" {
		return name
	}
	return filepath.Join(name, fmt.Sprintf("focus-%08x", crc32.ChecksumIEEE([]byte(s.focus))))
}

func (s mutateSettings) options(suite, labels, dir string) options.Options {
	o := options.Defaults()
	o.Run.Versions, o.Run.Suites, o.Run.LabelFilter = []string{s.version}, []string{suite}, labels
	o.Run.Procs, o.Run.Artifacts, o.Run.Timeout, o.Run.FailFast = s.procs, dir, 30*time.Minute, s.failFast
	o.Run.Focus = s.focus
	return o
}

// runOnce runs o's one suite into dir, as jobconform run runs it, and reads
// its runs back. Failing specs are no error: the report says which.
func runOnce(ctx context.Context, o options.Options, dir string) ([]reports.Run, error) {
	p, err := check(ctx, o)
	if err != nil {
		return nil, err
	}
	bin, err := os.MkdirTemp("", "jobconform-mutant-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(bin)
	if err := p.writeScripts(ctx, bin); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "ginkgo.log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	j := p.jobs[0]
	j.dir = dir
	_, _ = p.runJob(ctx, bin, j, log, false)
	runs, err := ginkgoreport.Load(filepath.Join(dir, "report-"+j.suite+".json"))
	if err != nil {
		return nil, fmt.Errorf("no report (%v); see %s", err, log.Name())
	}
	return runs, nil
}

// builtinOracle runs the built-in twice over every conformance mutant's
// specs and returns the directory of its kept runs, the oracle of every
// mutant's; without it each mutant's spec would run the built-in again.
// Twice, as explore does: what its own runs differ in is noise, and the
// peaks and delays are compared only against two runs (scenarios/oracle).
// "" when the built-in could not be run: each mutant then runs its own.
func builtinOracle(ctx context.Context, faults []mutants.Mutant, s mutateSettings, dir string) string {
	var filters []string
	for _, f := range faults {
		if f.Suite == "conformance" && !slices.Contains(filters, "("+f.Labels+")") {
			filters = append(filters, "("+f.Labels+")")
		}
	}
	if len(filters) == 0 {
		return ""
	}
	start := time.Now()
	fmt.Fprintf(os.Stderr, "[oracle] the built-in over every fault's conformance specs, twice (reports in %s)\n", dir)
	s.failFast = false // every spec's run is an oracle
	o := s.options("conformance", strings.Join(filters, " || "), dir)
	o.Controllers = []string{"builtin"}
	o.Oracle.Twice = true
	runs, err := runOnce(ctx, o, dir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "[oracle] no built-in runs (%v): each fault's specs run the built-in themselves\n", err)
		return ""
	}
	failed := 0
	for _, r := range runs {
		if r.Verdict == "fail" {
			failed++
		}
	}
	fmt.Fprintf(os.Stderr, "[oracle] %d built-in runs, %d failed, in %s: a spec whose built-in run failed is not compared\n",
		len(runs), failed, time.Since(start).Round(time.Second))
	return filepath.Join(dir, "oracle")
}

// judge reads a mutant's runs: caught when a scenario ran and failed on the
// controller (a broken step or invariant). A run that failed only through
// the harness (no cluster, an API error) proves nothing about the fault,
// nor does one stopped before its end (--fail-fast stops the others once
// one spec fails: their awaits fail by being cut short).
func judge(runs []reports.Run) (caught bool, by []string, specs int, harnessErr string) {
	for _, r := range runs {
		if r.Verdict == "skip" || r.Interrupted {
			continue
		}
		specs++
		for _, f := range r.Failures {
			if strings.HasPrefix(f, "harness error:") {
				harnessErr = r.Scenario + ": " + f
				continue
			}
			caught = true
			if len(r.Violations) == 0 {
				what, _, _ := strings.Cut(f, ":")
				by = append(by, r.Scenario+": "+what)
				break
			}
			// Every invariant it broke: a coverage row may cite any.
			for _, v := range r.Violations {
				if c := r.Scenario + ": invariant " + v.Invariant; !slices.Contains(by, c) {
					by = append(by, c)
				}
			}
			break
		}
	}
	if specs == 0 && harnessErr == "" {
		harnessErr = "no scenario ran"
	}
	if caught {
		harnessErr = ""
	}
	return caught, by, specs, harnessErr
}

// writeMutationReport writes report.html and summary.md of every mutant's
// runs, each fault a row of the report's negative controls.
func writeMutationReport(dir string, faults []mutants.Mutant) (string, error) {
	var all []reports.Run
	for _, f := range faults {
		runs, err := ginkgoreport.Load(filepath.Join(dir, f.Name, "report-"+f.Suite+".json"))
		if err != nil {
			continue // its row in mutation.md says why
		}
		for _, r := range runs {
			if r.Verdict == "skip" {
				continue // outside the fault's label filter
			}
			// A mutant's conformance spec fails when it is caught; in the
			// report that is the harness working, as for the chaos suite's
			// controls, whose specs pass when they catch their fault.
			if caught, _, _, _ := judge([]reports.Run{r}); caught {
				r.SpecVerdict = "PASS"
			}
			all = append(all, r)
		}
	}
	return reports.Write(dir, "jobconform mutation testing", all)
}

// writeMutation renders the score and the table.
func writeMutation(w io.Writer, results []mutant, version string) {
	caught := 0
	for _, m := range results {
		if m.Caught {
			caught++
		}
	}
	fmt.Fprintf(w, "\n## Mutation score: %d/%d faults caught (reference controller, Kubernetes %s)\n\n", caught, len(results), version)
	fmt.Fprintf(w, "| fault | breaks | scenarios | caught by |\n|---|---|---|---|\n")
	for _, m := range results {
		by := "**MISSED**"
		switch {
		case m.Error != "":
			by = "**ERROR** " + m.Error
		case m.Caught:
			by = strings.Join(m.By, "<br>")
		}
		fmt.Fprintf(w, "| %s | %s | %s (%d specs) | %s |\n", m.Fault, m.Breaks, m.Labels, m.Specs, by)
	}
}
