package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/reports"
	"github.com/jobconform/jobconform/scenarios/explore"
)

// exploreCmd is issue #55's explore: generated Jobs (scenarios/explore),
// written as scenario files — each its own reproducer — and run as the
// conformance suite's scenarios against the controllers under test, the
// built-in twice (--oracle-twice) so that each case's noise is learned
// and a case whose outcome hinges on a race is counted, never judged.
// Every run flag applies (controllers, release, nodes, procs); --write-only
// stops after writing. A failing case is shrunk (shrink.go) and written
// as <artifacts>/shrunk/<case>-shrunk.yaml.
func exploreCmd(ctx context.Context, args []string) error {
	o, err := options.FromEnv()
	if err != nil {
		return usageError{err}
	}
	fs := flag.NewFlagSet("explore", flag.ContinueOnError)
	addFlags(fs, &o)
	seed := fs.Uint64("seed", 1, "the seed: the same seed gives the same cases on every machine")
	cases := fs.Int("cases", 20, "how many cases to generate (with --budget: in each round)")
	budget := fs.Duration("budget", 0, "keep exploring in rounds of --cases cases, each round the seed's next ones, until this long has passed (0: one round); a round started runs to its end")
	out := fs.String("out", "", "directory to write the cases into, a file each (default <artifacts>/explore/seed-S; with --budget, a directory round-R each); a file there is never overwritten with other bytes")
	shrinkBudget := fs.Duration("shrink-budget", 20*time.Minute, "how long to spend shrinking the failing cases, all of them together (0: none)")
	keep := fs.String("keep", "", "keep the corpus into this directory (scenarios/catalog/explored: the conformance suite runs it): every shrunk reproducer, and --keep-sample of the cases every controller passed, chosen by the seed")
	keepSample := fs.Int("keep-sample", 3, "with --keep: how many passing cases to keep")
	writeOnly := fs.Bool("write-only", false, "write the cases and stop (run them later with jobconform run --builtin-scenarios=false --suites conformance --oracle-twice --scenarios DIR)")
	if err := parseFlags(fs, args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("explore takes no arguments (got %q)", fs.Args())}
	}
	if *cases < 1 {
		return usageError{fmt.Errorf("explore: --cases %d: give at least 1", *cases)}
	}
	if err := exploreClash(fs, o, *budget, *writeOnly); err != nil {
		return err
	}
	if *keep != "" && (*writeOnly || *keepSample < 0) {
		return usageError{fmt.Errorf("explore: --keep keeps what a run found: not with --write-only, and --keep-sample %d must be 0 or more", *keepSample)}
	}
	if *out == "" {
		*out = filepath.Join(orDefault(o.Run.Artifacts, options.Artifacts()), "explore", fmt.Sprintf("seed-%d", *seed))
	}
	if *writeOnly {
		return writeOnlyCases(o, *seed, *cases, *out)
	}
	// The built-in twice, unless its runs of these cases are read from an
	// earlier explore of the same seed (--oracle-from: kept with their
	// noise), as when explore judges many broken controllers in turn.
	o.Run.Suites, o.BuiltinScenarios, o.Oracle.Twice = []string{"conformance"}, false, o.Oracle.From == ""
	if o.Run.Artifacts == "" {
		o.Run.Artifacts = filepath.Join(options.Artifacts(), "explore")
	}
	start := time.Now()
	ex, err := exploreRounds(ctx, o, *seed, *cases, *out, *budget)
	if err != nil {
		return err
	}
	took := time.Since(start)
	var shrinks []shrunk
	if *shrinkBudget > 0 && ex.plan != nil {
		if shrinks, err = shrinkFailing(ctx, ex.plan, *seed, ex.generated, ex.runs, *shrinkBudget); err != nil {
			return err
		}
	}
	printExplore(os.Stdout, *seed, len(ex.generated), ex.runs, took)
	if err := exploreCoverage(ctx, o, *seed, len(ex.generated)); err != nil {
		return err
	}
	printKnownBugs(os.Stdout, ex.runs)
	printShrunk(os.Stdout, shrinks)
	if len(shrinks) > 0 {
		if err := appendShrunk(filepath.Join(o.Run.Artifacts, "summary.md"), *out, shrinks); err != nil {
			return err
		}
	}
	if *keep != "" {
		kept, err := keepCorpus(*keep, *seed, *keepSample, o.ReferenceFaults, ex.generated, ex.runs, shrinks)
		if err != nil {
			return err
		}
		fmt.Printf("  kept %d new case(s) in %s: %s\n", len(kept), *keep, strings.Join(kept, ", "))
	}
	return errors.Join(ex.verdicts...)
}

// writeOnlyCases is explore --write-only: the seed's cases (its shard's
// with --shard) written, and the command that judges them printed.
func writeOnlyCases(o options.Options, seed uint64, cases int, out string) error {
	k, n, err := options.ParseShard(o.Run.Shard)
	if err != nil {
		return usageError{err}
	}
	generated := shardCases(explore.Generate(seed, cases), 0, k, n)
	if err := writeCases(out, generated); err != nil {
		return err
	}
	fmt.Printf("wrote %d cases of seed %d into %s; judge them with:\n  jobconform run --builtin-scenarios=false --suites conformance --oracle-twice --scenarios %s\n", len(generated), seed, out, out)
	return nil
}

// exploreClash refuses what explore sets itself, and what does not go
// with --budget.
func exploreClash(fs *flag.FlagSet, o options.Options, budget time.Duration, writeOnly bool) error {
	// A case is judged by the conformance suite, against the built-in run
	// twice, on the generated scenarios alone.
	var clash []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "suites", "scenarios", "builtin-scenarios", "no-oracle", "oracle-twice", "rerun-failed":
			clash = append(clash, "--"+f.Name)
		}
	})
	switch {
	case len(clash) > 0:
		return usageError{fmt.Errorf("explore sets %s itself (its cases run as the conformance suite's only scenarios, the built-in twice as their oracle, or read with --oracle-from): leave them out", strings.Join(clash, ", "))}
	case budget < 0:
		return usageError{fmt.Errorf("explore: --budget %s: give a duration, 0 for one round", budget)}
	case budget > 0 && writeOnly:
		return usageError{errors.New("explore: --budget runs rounds until the time is spent; --write-only runs nothing: give --cases alone")}
	case budget > 0 && o.Oracle.From != "":
		return usageError{errors.New("explore: --budget with --oracle-from: the kept runs are one round's cases; give --cases (the same count as the explore that kept them)")}
	}
	return nil
}

// shardCases keeps the cases of shard k of n (1-based) from cs, the
// seed's cases from index first: the case of index i goes to shard
// i mod n + 1, whatever the machine.
func shardCases(cs []explore.Case, first, k, n int) []explore.Case {
	if n <= 1 {
		return cs
	}
	var out []explore.Case
	for i, c := range cs {
		if (first+i)%n == k-1 {
			out = append(out, c)
		}
	}
	return out
}

// explored is what explore's rounds ran: every case, every run, each
// round's verdict, and the last round's plan (for shrinking).
type explored struct {
	generated []explore.Case
	runs      []reports.Run
	verdicts  []error
	plan      *plan
}

// exploreRounds runs rounds of n cases of seed — round r the cases from
// r·n on, written to out (with a budget, out/round-r) — until budget has
// passed (0: one round).
func exploreRounds(ctx context.Context, o options.Options, seed uint64, n int, out string, budget time.Duration) (*explored, error) {
	ex := &explored{}
	base := o.Run.Artifacts
	start := time.Now()
	// --shard K/N splits the cases, not the suite: every machine of a
	// campaign generates the seed's same cases and runs every N-th.
	k, shards, err := options.ParseShard(o.Run.Shard)
	if err != nil {
		return nil, usageError{err}
	}
	o.Run.Shard = ""
	for r := 0; ; r++ {
		cs := shardCases(explore.GenerateFrom(seed, r*n, n), r*n, k, shards)
		dir := out
		if budget > 0 {
			dir, o.Run.Artifacts = filepath.Join(out, fmt.Sprintf("round-%d", r)), filepath.Join(base, fmt.Sprintf("round-%d", r))
		}
		if err := writeCases(dir, cs); err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "jobconform explore: cases %d–%d of seed %d in %s\n", r*n, r*n+n-1, seed, dir)
		o.ScenarioDirs = []string{dir}
		p, err := check(ctx, o)
		if err != nil {
			return nil, usageError{err}
		}
		res, err := p.buildAndRun(ctx)
		if err != nil {
			return nil, err
		}
		ex.generated, ex.runs = append(ex.generated, cs...), append(ex.runs, res.runs...)
		ex.verdicts, ex.plan = append(ex.verdicts, res.verdict()), p
		spent := time.Since(start)
		if budget == 0 || spent >= budget || ctx.Err() != nil {
			if budget > 0 {
				ex.plan.o.Run.Artifacts = base // shrunk cases beside the rounds
			}
			return ex, nil
		}
		fmt.Fprintf(os.Stderr, "jobconform explore: round %d done, %s of --budget %s spent: round %d next\n", r, spent.Round(time.Second), budget, r+1)
	}
}

// shrinkFailing shrinks every failing case of runs within budget, all
// together, and writes each under <artifacts>/shrunk.
func shrinkFailing(ctx context.Context, p *plan, seed uint64, generated []explore.Case, runs []reports.Run, budget time.Duration) ([]shrunk, error) {
	var out []shrunk
	deadline := time.Now().Add(budget)
	for _, f := range failingRuns(runs) {
		i := slices.IndexFunc(generated, func(c explore.Case) bool { return c.Scenario.Name == f.Scenario })
		if i < 0 || len(f.Failures) == 0 {
			continue
		}
		sh := shrinkCase(ctx, p.o, filepath.Join(p.o.Run.Artifacts, "shrink"), generated[i].Scenario, f.Controller, f.Failures[0], deadline)
		if f.Controller == "builtin" {
			sh.Alike = failedAlike(runs, f)
		}
		if err := writeShrunk(filepath.Join(p.o.Run.Artifacts, "shrunk"), seed, &sh); err != nil {
			return out, err
		}
		out = append(out, sh)
	}
	return out, nil
}

// failedAlike names another controller whose run of b's case failed as the
// built-in's run b did (the same signature first): a case both controllers
// fail alike is more likely at fault itself — an await too short for it,
// a limit the generator set (explore-6-729) — than upstream.
func failedAlike(runs []reports.Run, b reports.Run) string {
	want := explore.Signature(b.Failures[0])
	for _, r := range runs {
		if r.Controller != "builtin" && r.Scenario == b.Scenario && r.Verdict == "FAIL" && len(r.Failures) > 0 && explore.Signature(r.Failures[0]) == want {
			return r.Controller
		}
	}
	return ""
}

// failingRuns are the runs that failed, the controller under test's before
// the built-in's (whose failures are candidate upstream bugs), each case
// once per controller; not those an interrupt stopped (--fail-fast's),
// whose failure is the interrupt, nor a built-in's that known upstream
// bugs explain whole (printKnownBugs names them).
func failingRuns(runs []reports.Run) []reports.Run {
	var out []reports.Run
	for _, r := range runs {
		if r.Verdict == "FAIL" && r.Scenario != "" && !r.Interrupted && knownBugsOnly(r) == nil {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b reports.Run) int {
		return cmp.Compare(boolInt(a.Controller == "builtin"), boolInt(b.Controller == "builtin"))
	})
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// knownBug finds the bug a verdict line names (bugs.Bug.Describe).
var knownBug = regexp.MustCompile(`known upstream bug of \S+ \S+ \(([^,]+), releases `)

// knownBugsOnly gives the known upstream bugs that explain every failure
// of a built-in's run r, nil where any failure is not one: such a run is
// no candidate (docs/bugs.md has it already), and is not shrunk.
func knownBugsOnly(r reports.Run) []string {
	if r.Controller != "builtin" || len(r.Failures) == 0 {
		return nil
	}
	var ids []string
	for _, f := range r.Failures {
		m := knownBug.FindStringSubmatch(f)
		if m == nil {
			return nil
		}
		if !slices.Contains(ids, m[1]) {
			ids = append(ids, m[1])
		}
	}
	return ids
}

// printKnownBugs names the cases whose built-in runs failed by known
// upstream bugs alone: failures still (the release breaks a promise), but
// no candidate to read against the tracker.
func printKnownBugs(w io.Writer, runs []reports.Run) {
	var met []string
	for _, r := range runs {
		if ids := knownBugsOnly(r); ids != nil && r.Verdict == "FAIL" && !r.Interrupted {
			met = append(met, fmt.Sprintf("%s (%s)", r.Scenario, strings.Join(ids, ", ")))
		}
	}
	if len(met) > 0 {
		slices.Sort(met) // each case's two runs once
		fmt.Fprintf(w, "  the built-in failed by known upstream bugs alone (docs/bugs.md; no candidate, not shrunk): %s\n", strings.Join(slices.Compact(met), ", "))
	}
}

// printShrunk names each shrunk reproducer; a built-in's is a candidate
// upstream bug (explore.md), not a failure of the controller under test.
func printShrunk(w io.Writer, shrinks []shrunk) {
	for _, sh := range shrinks {
		what := "fails " + sh.Controller
		if sh.Controller == "builtin" {
			what = "a candidate upstream bug (the built-in breaks a promise): check it against docs/bugs.md and upstream's tracker"
			if sh.Alike != "" {
				what += "; " + sh.Alike + " fails it alike, so read the case first: an await too short or a limit it set is the likelier cause"
			}
		}
		fmt.Fprintf(w, "  shrunk %s (%s; %d cuts in %d rounds, %s): %s\n    %s\n", sh.Case, what, sh.Cuts, sh.Rounds, sh.Stopped, sh.File, sh.Failure)
	}
}

// appendShrunk adds each shrunk reproducer to the run's summary.md, beside
// the case it came from (under out).
func appendShrunk(summary, out string, shrinks []shrunk) error {
	var b strings.Builder
	b.WriteString("\n## Shrunk reproducers\n\n| case | controller | failure | generated | shrunk |\n|---|---|---|---|---|\n")
	for _, sh := range shrinks {
		who := sh.Controller
		if who == "builtin" {
			who += " (a candidate upstream bug)"
		}
		orig, _ := filepath.Glob(filepath.Join(out, "*", sh.Case+".yaml")) // --budget's rounds
		orig = append([]string{filepath.Join(out, sh.Case+".yaml")}, orig...)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s (%d cuts in %d rounds; %s) |\n", sh.Case, who, strings.ReplaceAll(sh.Failure, "|", "\\|"),
			orig[len(orig)-1], sh.File, sh.Cuts, sh.Rounds, sh.Stopped)
	}
	f, err := os.OpenFile(summary, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(b.String())
	return errors.Join(err, f.Close())
}

// buildAndRun runs p's jobs, each once its release is built (explore's
// and each shrinking round's suite run); a failed build is among the
// outcome's errors.
func (p *plan) buildAndRun(ctx context.Context) (*outcome, error) {
	p.builds = startBuilds(ctx, p.o.Run.Versions, p.o.Run.BuiltinAt, p.o.Nodes == options.NodesKubelet, releaseBuilder())
	res, err := p.runJobs(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.builds.finish(ctx); err != nil {
		res.errs = append(res.errs, err)
	}
	return res, nil
}

// writeCases writes each case into dir as <name>.yaml. A directory that
// holds anything else, or a file of a case with other bytes (another
// generator's), is refused: nothing is overwritten, nothing foreign is run.
func writeCases(dir string, cs []explore.Case) error {
	want := map[string][]byte{}
	for _, c := range cs {
		data, err := explore.Render(c.Scenario)
		if err != nil {
			return err
		}
		want[c.Scenario.Name+".yaml"] = data
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	for _, e := range entries {
		data, ok := want[e.Name()]
		if !ok {
			return usageError{fmt.Errorf("explore: %s holds %s, not a case of this seed and count: give an empty or new --out (nothing there is overwritten or run)", dir, e.Name())}
		}
		if have, err := os.ReadFile(filepath.Join(dir, e.Name())); err != nil || !bytes.Equal(have, data) {
			return usageError{fmt.Errorf("explore: %s in %s differs from what this generator writes for it (edited, or another jobconform's): give an empty or new --out (nothing there is overwritten)", e.Name(), dir)}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range want {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// exploreTally is one controller's outcome over explore's cases: passed,
// failed, skipped, and (for another than the built-in) compared with the
// built-in's runs (timed: their delays too), or not judged because those
// ended apart (racy).
type exploreTally struct{ passed, failed, skipped, compared, timed, racy int }

// tallyExplore counts runs by controller, and names the failing cases.
func tallyExplore(runs []reports.Run) (map[string]*exploreTally, []string) {
	by := map[string]*exploreTally{}
	var failing []string
	for _, r := range runs {
		if r.Scenario == "" || r.Controller == "" {
			continue
		}
		t := by[r.Controller]
		if t == nil {
			t = &exploreTally{}
			by[r.Controller] = t
		}
		switch r.Verdict {
		case "PASS":
			t.passed++
		case "FAIL":
			t.failed++
			failing = append(failing, r.Controller+" "+r.Scenario)
		default:
			t.skipped++
		}
		if r.Oracle != nil && r.Oracle.Compared {
			t.compared++
		}
		if r.Oracle != nil && r.Oracle.Timed {
			t.timed++
		}
		if r.Oracle != nil && strings.Contains(r.Oracle.Note, "racy: ") {
			t.racy++
		}
	}
	slices.Sort(failing)
	return by, failing
}

// printExplore sums explore's run up: per controller, the cases passed,
// failed and not judged as racy, and the cases per minute.
func printExplore(w io.Writer, seed uint64, cases int, runs []reports.Run, took time.Duration) {
	by, failing := tallyExplore(runs)
	fmt.Fprintf(w, "\nexplore, seed %d: %d cases in %s (%.1f cases a minute)\n", seed, cases, took.Round(time.Second), float64(cases)/max(took.Minutes(), 1e-9))
	for _, c := range slices.Sorted(maps.Keys(by)) {
		t := by[c]
		line := fmt.Sprintf("  %-12s passed %d, failed %d", c, t.passed, t.failed)
		if t.skipped > 0 {
			line += fmt.Sprintf(", skipped %d", t.skipped)
		}
		if c != "builtin" {
			line += fmt.Sprintf("; compared with the built-in %d (timed %d), racy (not judged) %d", t.compared, t.timed, t.racy)
		}
		fmt.Fprintln(w, line)
	}
	if len(failing) > 0 {
		fmt.Fprintf(w, "  failing cases (each file is its own reproducer): %s\n", strings.Join(failing, ", "))
	}
	if len(by) == 0 {
		fmt.Fprintln(w, "  no case ran: see the suite's output above")
	}
}
