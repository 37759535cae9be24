package main

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/jobconform/jobconform/suites/chaos"
	"github.com/jobconform/jobconform/suites/conformance"
	"github.com/jobconform/jobconform/suites/drill"
	"github.com/jobconform/jobconform/suites/scale"
)

// suites are the suites compiled into this binary, so an installed
// jobconform runs them without a checkout: jobconform run hands Ginkgo a
// script per suite that runs "jobconform suite-process NAME", and Ginkgo
// runs that as it runs a compiled test binary (its parallel processes
// included).
var suites = map[string]struct {
	register    func()
	description string
}{
	"conformance": {conformance.Register, conformance.Description},
	"chaos":       {chaos.Register, chaos.Description},
	"drill":       {drill.Register, drill.Description},
	"scale":       {scale.Register, scale.Description},
}

// suiteProcess runs one Ginkgo process of a suite, with the flags a test
// binary takes (-test.*, -ginkgo.*), and returns its exit code.
func suiteProcess(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "suite-process: name a suite (conformance, chaos, drill or scale); jobconform run starts these")
		return 2
	}
	s, ok := suites[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "suite-process: unknown suite %q (conformance, chaos, drill or scale)\n", args[0])
		return 2
	}
	testing.Init() // the -test.* flags Ginkgo passes to test binaries
	if err := flag.CommandLine.Parse(args[1:]); err != nil {
		return 2
	}
	s.register()
	gomega.RegisterFailHandler(ginkgo.Fail)
	t := &suiteT{}
	ginkgo.RunSpecs(t, s.description)
	if t.failed {
		return 1
	}
	return 0
}

// suiteT is the testing.T Ginkgo reports the suite's outcome to.
type suiteT struct{ failed bool }

func (t *suiteT) Fail() { t.failed = true }
