package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"

	"github.com/jobconform/jobconform/internal/shard"
	"github.com/jobconform/jobconform/suites/ginkgoreport"
)

var releaseInName = regexp.MustCompile(`v\d+\.\d+\.\d+`)

// durations writes the measured wall time of every spec (the order the suites
// define specs in: longest first) from Ginkgo JSON reports.
func durations(args []string) error {
	fs := flag.NewFlagSet("durations", flag.ContinueOnError)
	out := fs.String("out", shard.File, "file to write")
	if err := parseFlags(fs, args); err != nil {
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

// releaseOfDir is the release a report directory is named for: make run's
// are VERSION-SUITE (v1.37.1-chaos), jobconform run's VERSION.
func releaseOfDir(dir string) string {
	if v := releaseInName.FindString(dir); v != "" {
		return v
	}
	return dir
}
