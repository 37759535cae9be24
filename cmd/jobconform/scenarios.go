package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/jobconform/jobconform/internal/ginkgoreport"
	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/release"
	"github.com/jobconform/jobconform/reports"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/bugs"
	"github.com/jobconform/jobconform/scenarios/catalog"
)

// validate checks scenario files (or the *.yaml of directories) without a
// cluster: one line per file, the first thing wrong in it or what it holds.
func validate(args []string) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() == 0 {
		return usageError{errors.New("validate: give scenario files or directories")}
	}
	var files []string
	for _, a := range fs.Args() {
		info, err := os.Stat(a)
		if err != nil {
			files = append(files, a) // reported below
			continue
		}
		if !info.IsDir() {
			files = append(files, a)
			continue
		}
		found, _ := filepath.Glob(filepath.Join(a, "*.yaml"))
		yml, _ := filepath.Glob(filepath.Join(a, "*.yml"))
		found = append(found, yml...)
		if len(found) == 0 {
			fmt.Printf("%s: no scenario files (*.yaml, *.yml) in this directory\n", a)
			files = append(files, "")
			continue
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	bad, names := 0, map[string]string{}
	for _, f := range files {
		if f == "" {
			bad++
			continue
		}
		got, err := validateFile(f, names)
		if err != nil {
			bad++
			fmt.Printf("%s: %v\n", f, err)
			continue
		}
		fmt.Printf("%s: ok: %s\n", f, strings.Join(got, ", "))
	}
	if bad > 0 {
		return usageError{fmt.Errorf("%d of %d files are not valid scenarios (the scenario format: jobconform schema)", bad, len(files))}
	}
	return nil
}

// validateFile parses every document of one file; names tracks the scenario
// names seen so far (a run refuses one name twice).
func validateFile(path string, names map[string]string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	all, errs := scenarios.ParseFile(data, path, names)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	if len(all) == 0 {
		return nil, errors.New("no scenario in this file")
	}
	var got []string
	for _, s := range all {
		suite := "conformance"
		if s.HasChaos() {
			suite = "chaos"
		}
		got = append(got, s.Name+" ("+suite+")")
	}
	return got, nil
}

// list prints the scenarios a run would use.
func list(args []string) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	o, err := options.FromEnv()
	if err != nil {
		return usageError{err}
	}
	o.AddScenarioFlags(fs)
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	set, err := catalog.Assemble(o.BuiltinScenarios, o.ScenarioDirs...)
	if err != nil {
		return usageError{err}
	}
	fmt.Printf("%-11s %-48s %-38s %-10s %s\n", "SUITE", "SCENARIO", "FEATURES", "RELEASES", "FILE")
	for _, part := range []struct {
		suite string
		all   []*scenarios.Scenario
	}{{"conformance", set.Conformance}, {"chaos", set.Chaos}} {
		for _, s := range part.all {
			versions := s.Versions
			if versions == "" {
				versions = "all"
			}
			if len(s.Controllers) > 0 {
				versions += " (" + strings.Join(s.Controllers, ",") + " only)"
			}
			fmt.Printf("%-11s %-48s %-38s %-10s %s\n", part.suite, s.Name, strings.Join(s.Features, ","), versions, s.File)
		}
	}
	fmt.Printf("%d conformance and %d chaos scenarios\n", len(set.Conformance), len(set.Chaos))
	return nil
}

// schema prints the JSON Schema of scenario files.
func schema(args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("schema takes no arguments (got %q)", args)}
	}
	data, err := scenarios.Schema()
	if err != nil {
		return err
	}
	fmt.Println(string(data))
	return nil
}

// runMatrix runs the plan of o under <artifacts>/matrix and returns its
// reports; failures are the matrix's cells, not an error.
func runMatrix(ctx context.Context, o options.Options) ([]string, error) {
	o.Run.Artifacts = filepath.Join(o.Run.Artifacts, "matrix")
	p, err := check(ctx, o)
	if err != nil {
		return nil, usageError{err}
	}
	if err := p.execute(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		fmt.Fprintln(os.Stderr, "jobconform: the matrix has failures:", err)
	}
	var paths []string
	for _, j := range p.jobs {
		if r := filepath.Join(j.dir, "report.json"); !slices.Contains(paths, r) {
			paths = append(paths, r)
		}
	}
	return paths, nil
}

// Markers around the generated matrix in a README.
const (
	matrixBegin = "<!-- matrix:begin (jobconform matrix writes this table) -->"
	matrixEnd   = "<!-- matrix:end -->"
)

// matrix writes the release × feature matrix of finished runs, on stdout or
// between the markers of a file; with --run it first runs the conformance
// and chaos suites at every release of the matrix (release.Matrix), each
// built on first use.
func matrix(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	out := fs.String("out", "", "replace the table between the matrix markers of this file (created if missing) instead of printing it")
	run := fs.Bool("run", false, "run the suites at every release of the matrix first (default releases: "+strings.Join(release.Matrix, ",")+"); takes jobconform run's flags")
	o, err := options.FromEnv()
	if err != nil {
		return usageError{err}
	}
	o.Run.Versions = append([]string(nil), release.Matrix...)
	addFlags(fs, &o)
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	paths := fs.Args()
	if *run {
		if len(paths) > 0 {
			return usageError{errors.New("matrix --run: give no reports, it writes its own")}
		}
		if paths, err = runMatrix(ctx, o); err != nil {
			return err
		}
	}
	if len(paths) == 0 {
		return usageError{errors.New("matrix: give the Ginkgo JSON reports of the runs (e.g. _artifacts/matrix/*/report.json), or --run")}
	}
	var runs []reports.Run
	for _, path := range paths {
		rs, err := ginkgoreport.Load(path)
		if err != nil {
			return err
		}
		for i := range rs {
			if rs[i].Controller == "" && rs[i].Verdict == "skip" {
				continue // skipped before it named a controller: a cell of nobody's
			}
			if rs[i].Version == "" { // failed before its scenario ran: the report's directory names the release
				rs[i].Version = releaseOfDir(filepath.Base(filepath.Dir(path)))
			}
			runs = append(runs, rs[i])
		}
	}
	var b strings.Builder
	b.WriteString("Generated by `jobconform matrix`. ")
	if err := reports.WriteMatrix(&b, runs); err != nil {
		return err
	}
	if *out == "" {
		fmt.Print(b.String())
		return nil
	}
	data, err := os.ReadFile(*out)
	if os.IsNotExist(err) {
		data, err = []byte("# Release matrix\n\n"+matrixBegin+"\n"+matrixEnd+"\n"), nil
	}
	if err != nil {
		return err
	}
	text := string(data)
	i, j := strings.Index(text, matrixBegin), strings.Index(text, matrixEnd)
	if i < 0 || j < i {
		return usageError{fmt.Errorf("%s has no %s … %s markers to write the matrix between", *out, matrixBegin, matrixEnd)}
	}
	text = text[:i+len(matrixBegin)] + "\n" + b.String() + "\n" + text[j:]
	if err := os.WriteFile(*out, []byte(text), 0o644); err != nil {
		return err
	}
	controls := 0
	for _, r := range runs {
		if r.Control() {
			controls++
		}
	}
	// The same count as the table's first line: negative controls are not verdicts.
	fmt.Printf("matrix of %d runs written into %s (%d runs of deliberately broken controllers left out)\n", len(runs)-controls, *out, controls)
	return nil
}

// fidelity compares the runs of the same scenarios on kwok nodes and on
// kubelet nodes (#10): the kwok Stages held to a real kubelet.
func fidelity(args []string) error {
	fs := flag.NewFlagSet("fidelity", flag.ContinueOnError)
	kwok := fs.String("kwok", "", "Ginkgo JSON report of a run on kwok nodes")
	kubelet := fs.String("kubelet", "", "Ginkgo JSON report of the same run on kubelet nodes")
	out := fs.String("out", "", "also write the table (Markdown) to this file")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *kwok == "" || *kubelet == "" || fs.NArg() > 0 {
		return usageError{errors.New("fidelity: give --kwok REPORT.json and --kubelet REPORT.json")}
	}
	a, err := ginkgoreport.Load(*kwok)
	if err != nil {
		return err
	}
	b, err := ginkgoreport.Load(*kubelet)
	if err != nil {
		return err
	}
	rows := reports.Fidelity(a, b)
	if len(rows) == 0 {
		return fmt.Errorf("fidelity: the two reports share no scenario run by the same controller")
	}
	var buf strings.Builder
	reports.WriteFidelity(&buf, rows)
	fmt.Print(buf.String())
	if *out != "" {
		return os.WriteFile(*out, []byte(buf.String()), 0o644)
	}
	return nil
}

// durations writes the measured wall time of every spec (the order the suites
// define specs in: longest first) from Ginkgo JSON reports.
func durations(args []string) error {
	fs := flag.NewFlagSet("durations", flag.ContinueOnError)
	out := fs.String("out", "suites/internal/harness/durations.json", "file to write")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() == 0 {
		return usageError{errors.New("durations: give the Ginkgo JSON reports of a run (e.g. _artifacts/v1.37.1/report.json)")}
	}
	d, err := ginkgoreport.Durations(fs.Args()...)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	n := 0
	for _, specs := range d {
		n += len(specs)
	}
	fmt.Printf("%d specs of %d suites → %s\n", n, len(d), *out)
	return os.WriteFile(*out, append(data, '\n'), 0o644)
}

var releaseInName = regexp.MustCompile(`^v\d+\.\d+\.\d+`)

// releaseOfDir is the release a report directory is named for: make run's
// are VERSION-SUITE (v1.37.1-chaos), jobconform run's VERSION.
func releaseOfDir(dir string) string {
	if v := releaseInName.FindString(dir); v != "" {
		return v
	}
	return dir
}

// bugsPage writes the page of the known upstream bugs (scenarios/bugs).
func bugsPage(args []string) error {
	fs := flag.NewFlagSet("bugs", flag.ContinueOnError)
	out := fs.String("out", "", "write the page to this file instead of printing it")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *out == "" {
		fmt.Print(bugs.Markdown())
		return nil
	}
	return os.WriteFile(*out, []byte(bugs.Markdown()), 0o644)
}
