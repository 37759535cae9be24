package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/catalog"
)

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
