package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jobconform/jobconform/scenarios/explore"
)

// exploreCmd writes generated cases (scenarios/explore) as scenario files:
// the first step of issue #55. Each file is its own reproducer; run them
// with jobconform run --builtin-scenarios=false --scenarios DIR, which
// judges them by the invariants and the differential verdict. Not yet
// here: the built-in run twice to learn each case's noise, racy cases
// dropped, failing cases shrunk.
func exploreCmd(args []string) error {
	fs := flag.NewFlagSet("explore", flag.ContinueOnError)
	seed := fs.Uint64("seed", 1, "the seed: the same seed gives the same cases on every machine")
	cases := fs.Int("cases", 20, "how many cases to write")
	out := fs.String("out", "", "an empty (or new) directory to write the cases into, a file each")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	switch {
	case *out == "":
		return usageError{errors.New("explore: give --out DIR, an empty or new directory")}
	case *cases < 1:
		return usageError{fmt.Errorf("explore: --cases %d: give at least 1", *cases)}
	}
	if entries, err := os.ReadDir(*out); err == nil && len(entries) > 0 {
		return usageError{fmt.Errorf("explore: %s is not empty: give an empty or new directory (nothing there is overwritten)", *out)}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for _, c := range explore.Generate(*seed, *cases) {
		data, err := explore.Render(c.Scenario)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*out, c.Scenario.Name+".yaml"), data, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("wrote %d cases of seed %d into %s; judge them with:\n  jobconform run --builtin-scenarios=false --suites conformance --scenarios %s\n", *cases, *seed, *out, *out)
	return nil
}
