package main

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/jobconform/jobconform/internal/ginkgoreport"
	"github.com/jobconform/jobconform/reports"
)

// report writes the HTML report and the Markdown summary of finished runs.
func report(args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	out := fs.String("out", "", "directory for report.html and summary.md (required)")
	title := fs.String("title", "jobconform", "the report's title")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return errors.New("report: give --out DIR and at least one Ginkgo JSON report (e.g. _artifacts/*/report.json)")
	}
	runs, err := ginkgoreport.Load(fs.Args()...)
	if err != nil {
		return err
	}
	path, err := reports.Write(*out, *title, runs)
	if err != nil {
		return err
	}
	fmt.Printf("report: %s (summary %s)\n", path, filepath.Join(*out, "summary.md"))
	return nil
}
