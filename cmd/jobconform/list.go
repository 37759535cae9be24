package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/jobconform/jobconform/internal/options"
)

// list prints what jobconform run would run with the same flags (issue
// #71: a dry run): every suite run of the plan (release, nodes, gates,
// controllers) and each of its specs, as a table or as JSON (-o json).
// It builds nothing and starts nothing; with --kubeconfig it checks that
// the cluster answers, as run does.
func list(ctx context.Context, args []string) error {
	o, err := options.FromEnv()
	if err != nil {
		return usageError{err}
	}
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	addFlags(fs, &o)
	format := fs.String("o", "table", "output: table, or json (the plan's suite runs, each with its specs)")
	if err := parseFlags(fs, args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("list takes no arguments (got %q): give scenario directories with --scenarios", fs.Args())}
	}
	if *format != "table" && *format != "json" {
		return usageError{fmt.Errorf("-o %q: use table or json", *format)}
	}
	p, err := check(ctx, o)
	if err != nil {
		return usageError{err}
	}
	runs, err := p.listed()
	if err != nil {
		return usageError{err}
	}
	if *format == "json" {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(runs)
	}
	printListed(os.Stdout, runs)
	return nil
}

// listedRun is one suite run of the plan and the specs it selects.
type listedRun struct {
	Suite       string   `json:"suite"`
	Release     string   `json:"release"`
	Nodes       string   `json:"nodes"`
	Gates       string   `json:"gates,omitempty"`
	Controllers []string `json:"controllers"`
	Artifacts   string   `json:"artifacts"`
	Specs       []spec   `json:"specs"`
}

// listed is the plan as list shows it.
func (p *plan) listed() ([]listedRun, error) {
	var out []listedRun
	for _, j := range p.jobs {
		specs, err := p.selectedSpecs(j.o, j.suite)
		if err != nil {
			return nil, err
		}
		if specs == nil {
			specs = []spec{}
		}
		out = append(out, listedRun{Suite: j.suite, Release: orDefault(j.o.Version, "the existing cluster's"), Nodes: orDefault(j.o.Nodes, options.NodesKwok),
			Gates: options.FormatGates(j.o.FeatureGates), Controllers: j.o.ControllerNames(), Artifacts: j.dir, Specs: specs})
	}
	return out, nil
}

// printListed writes the plan as a table: a heading per suite run, a row
// per spec, then the totals.
func printListed(w io.Writer, runs []listedRun) {
	total := 0
	for _, r := range runs {
		where := r.Release + " on " + r.Nodes + " nodes"
		if r.Gates != "" {
			where += " with " + r.Gates
		}
		fmt.Fprintf(w, "%s suite at %s (%s): %d specs\n", r.Suite, where, strings.Join(r.Controllers, ", "), len(r.Specs))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  CONTROLLER\tSCENARIO\tFEATURES\tRELEASES\tFILE")
		for _, s := range r.Specs {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", orDefault(s.Controller, "-"), s.Scenario, orDefault(strings.Join(s.Features, ","), "-"), orDefault(s.Releases, "-"), orDefault(s.File, "-"))
		}
		tw.Flush()
		total += len(r.Specs)
	}
	fmt.Fprintf(w, "%d suite runs, %d specs (a drill's flights are chosen inside the suite)\n", len(runs), total)
}
