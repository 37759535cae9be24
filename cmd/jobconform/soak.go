package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/process"
	"github.com/jobconform/jobconform/reports"
)

// soak is make soak: the chosen suites run --rounds times against
// controllers that keep their promises (the built-in, the reference),
// optionally beside --load processes that spin on the CPUs, and every
// failure counts as a false one: the figure a gate's users care about is
// how often it fails a correct controller, per 1,000 specs judged.
func soak(ctx context.Context, args []string) error {
	o, err := options.FromEnv()
	if err != nil {
		return usageError{err}
	}
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	addFlags(fs, &o)
	rounds := fs.Int("rounds", 3, "times the suites run")
	load := fs.Int("load", 0, "processes spinning on the CPUs beside the suites (a loaded CI runner)")
	if err := parseFlags(fs, args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("soak takes no arguments (got %q)", fs.Args())}
	}
	if *rounds < 1 || *load < 0 {
		return usageError{fmt.Errorf("--rounds %d --load %d: give at least one round and no negative load", *rounds, *load)}
	}
	for _, c := range o.Controllers {
		if c != "builtin" && c != "reference" {
			return usageError{fmt.Errorf("--controllers %s: a soak counts every failure as false, so it runs controllers that keep their promises: builtin, reference", c)}
		}
	}
	if len(o.ReferenceFaults) > 0 {
		return usageError{fmt.Errorf("--reference-faults: a soak runs controllers that keep their promises (jobconform mutate runs broken ones)")}
	}
	if err := settle(&o); err != nil {
		return usageError{err}
	}
	base := filepath.Join(o.Run.Artifacts, "soak")
	p, err := check(ctx, o)
	if err != nil {
		return usageError{err}
	}
	if err := buildReleases(ctx, p.o.Run.Versions, p.o.Run.BuiltinAt, p.o.Nodes == options.NodesKubelet); err != nil {
		return err
	}
	stopHogs, err := startHogs(*load, base)
	if err != nil {
		return err
	}
	defer stopHogs()
	var results []soakRound
	for i := 1; i <= *rounds; i++ {
		p.o.Run.Artifacts = filepath.Join(base, fmt.Sprintf("round-%d", i))
		_ = os.RemoveAll(p.o.Run.Artifacts)
		p.jobs = planJobs(p.o, p.specs)
		fmt.Fprintf(os.Stderr, "jobconform soak: round %d of %d (%s; beside %d spinning processes)\n", i, *rounds, strings.Join(p.o.Run.Suites, ", "), *load)
		start := time.Now()
		res, err := p.runJobs(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return fmt.Errorf("soak round %d: %w", i, err)
		}
		took := time.Since(start)
		_ = res.verdict() // the round's report.html and verdict table; its failures are counted below
		r := soakRound{dir: p.o.Run.Artifacts, runs: res.runs, took: took, errs: res.errs}
		results = append(results, r)
		fmt.Fprintf(os.Stderr, "jobconform soak: round %d: %s\n", i, r.line())
	}
	s := soakSummary{suites: p.o.Run.Suites, controllers: p.o.ControllerNames(), versions: p.o.Run.Versions, nodes: orDefault(p.o.Nodes, "kwok"), load: *load, rounds: results}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(base, "soak.md"))
	if err != nil {
		return err
	}
	defer f.Close()
	s.write(io.MultiWriter(os.Stdout, f))
	fmt.Printf("soak: %s\n", f.Name())
	if n := s.falseFailures(); n > 0 {
		return fmt.Errorf("%d false failures: controllers that keep their promises failed (see %s)", n, f.Name())
	}
	return nil
}

// startHogs starts n processes that spin until stopped (and die with
// jobconform): the load of a shared CI runner, on purpose.
func startHogs(n int, dir string) (stop func(), err error) {
	var hogs []*process.Process
	stop = func() {
		for _, h := range hogs {
			_ = h.Kill()
		}
	}
	if n == 0 {
		return stop, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return stop, err
	}
	for i := range n {
		h := process.New(fmt.Sprintf("hog-%d", i+1), filepath.Join(dir, "hogs.log"))
		h.SetCommand("/bin/sh", "-c", "while :; do :; done")
		if err := h.Start(); err != nil {
			stop()
			return func() {}, fmt.Errorf("start a spinning process for --load: %w", err)
		}
		hogs = append(hogs, h)
	}
	return stop, nil
}

func plural(n int, what string) string {
	switch {
	case n == 1:
		return "1 " + what
	case strings.HasSuffix(what, "s"):
		return fmt.Sprintf("%d %ses", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// soakRound is one run of the suites.
type soakRound struct {
	dir  string
	runs []reports.Run
	took time.Duration
	errs []error
}

// judged are the round's specs that gave a verdict (not skipped).
func (r soakRound) judged() (judged, failed []reports.Run) {
	for _, run := range r.runs {
		if run.Verdict == "skip" || run.Control() {
			continue
		}
		judged = append(judged, run)
		if run.Verdict == "FAIL" {
			failed = append(failed, run)
		}
	}
	return judged, failed
}

// meter sums up the starvation meter's readings of the round's runs.
func (r soakRound) meter() (read, red int, runQueue, runQueueMax, api, lag float64) {
	for _, run := range r.runs {
		m := run.Starvation
		if m == nil || m.Samples == 0 {
			continue
		}
		read++
		if m.Red() {
			red++
		}
		runQueue += m.RunQueue
		runQueueMax, api, lag = max(runQueueMax, m.RunQueueMax), max(api, m.API), max(lag, m.StatusLag)
	}
	if read > 0 {
		runQueue /= float64(read)
	}
	return
}

// falseFailures counts the round's failed specs, or, when none failed,
// its suites that ended badly anyway (a Ginkgo exit code of 1 for failed
// specs is those specs, not one more).
func (r soakRound) falseFailures() int {
	if _, failed := r.judged(); len(failed) > 0 {
		return len(failed)
	}
	return len(r.errs)
}

func (r soakRound) line() string {
	judged, failed := r.judged()
	read, red, rq, rqMax, api, lag := r.meter()
	s := fmt.Sprintf("%d specs judged, %d failed, %s; meter over %d runs: run queue %.1f/CPU (peak %.1f), apiserver ≤%.2fs, status lag ≤%.1fs, red in %d",
		len(judged), len(failed), r.took.Round(time.Second), read, rq, rqMax, api, lag, red)
	if _, failed := r.judged(); len(failed) == 0 && len(r.errs) > 0 {
		s += fmt.Sprintf("; %d suites ended badly", len(r.errs))
	}
	return s
}

// soakSummary is what soak.md says.
type soakSummary struct {
	suites, controllers, versions []string
	nodes                         string
	load                          int
	rounds                        []soakRound
}

func (s soakSummary) falseFailures() int {
	n := 0
	for _, r := range s.rounds {
		n += r.falseFailures()
	}
	return n
}

func (s soakSummary) write(w io.Writer) {
	fmt.Fprintf(w, "# Soak: %s against %s\n\n", strings.Join(s.suites, " + "), strings.Join(s.controllers, ", "))
	fmt.Fprintf(w, "Kubernetes %s on %s nodes, %s, beside %s (%s).\n\n", strings.Join(s.versions, ", "), s.nodes,
		plural(len(s.rounds), "round"), plural(s.load, "spinning process"), time.Now().UTC().Format("2006-01-02"))
	total := 0
	for i, r := range s.rounds {
		judged, _ := r.judged()
		total += len(judged)
		fmt.Fprintf(w, "- round %d: %s\n", i+1, r.line())
	}
	n := s.falseFailures()
	rate := 0.0
	if total > 0 {
		rate = 1000 * float64(n) / float64(total)
	}
	fmt.Fprintf(w, "\n**False failures: %d of %d specs judged (%.1f per 1,000).**\n", n, total, rate)
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "\nEach with its first reason and where its recording is (the round's report.html draws it):\n\n")
	for i, r := range s.rounds {
		_, failed := r.judged()
		for _, f := range failed {
			first := ""
			if len(f.Failures) > 0 {
				first, _, _ = strings.Cut(f.Failures[0], "\n")
			}
			fmt.Fprintf(w, "- round %d, %s %s [%s]: %s — %s\n", i+1, f.Suite, f.Spec, f.Version, first, filepath.Join(r.dir, "report.html"))
		}
		if len(failed) == 0 {
			for _, err := range r.errs {
				fmt.Fprintf(w, "- round %d: a suite ended badly: %v — %s\n", i+1, err, r.dir)
			}
		}
	}
}
