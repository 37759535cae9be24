package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/jobconform/jobconform/reports"
	"github.com/jobconform/jobconform/suites/ginkgoreport"
)

// fidelity compares the runs of the same scenarios on kwok nodes and on
// kubelet nodes (#10): the kwok Stages held to a real kubelet.
func fidelity(args []string) error {
	fs := flag.NewFlagSet("fidelity", flag.ContinueOnError)
	kwok := fs.String("kwok", "", "Ginkgo JSON report of a run on kwok nodes")
	kubelet := fs.String("kubelet", "", "Ginkgo JSON report of the same run on kubelet nodes")
	out := fs.String("out", "", "also write the table (Markdown) to this file")
	if err := parseFlags(fs, args); err != nil {
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
