package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/jobconform/jobconform/scenarios/bugs"
)

// bugsPage writes the page of the known upstream bugs (scenarios/bugs).
func bugsPage(args []string) error {
	fs := flag.NewFlagSet("bugs", flag.ContinueOnError)
	out := fs.String("out", "", "write the page to this file instead of printing it")
	if err := parseFlags(fs, args); err != nil {
		return usageError{err}
	}
	if *out == "" {
		fmt.Print(bugs.Markdown())
		return nil
	}
	return os.WriteFile(*out, []byte(bugs.Markdown()), 0o644)
}
