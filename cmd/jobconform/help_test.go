package main

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/internal/options"
)

// Every flag of run (and so of list, explore, test, soak) sits in exactly
// one group of -h, and every group names flags that exist: a new flag
// must be placed.
func TestFlagGroups(t *testing.T) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var o options.Options
	addFlags(fs, &o)
	in := map[string]string{}
	for _, g := range flagGroups {
		for _, n := range g.names {
			if prev, ok := in[n]; ok {
				t.Errorf("--%s in two groups: %s and %s", n, prev, g.title)
			}
			in[n] = g.title
			if fs.Lookup(n) == nil {
				t.Errorf("group %s names --%s, which run does not have", g.title, n)
			}
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if in[f.Name] == "" {
			t.Errorf("--%s of run is in no group of -h (flagGroups in help.go)", f.Name)
		}
	})
	var b bytes.Buffer
	printHelp(&b, fs)
	out := b.String()
	for _, want := range []string{"Usage: jobconform run [flags]", "\nClusters:\n  --k8s-version version\n", "  --kubeconfig string\n",
		"\nOutput:\n", "\nExamples:\n", "(default builtin,reference)"} {
		if !strings.Contains(out, want) {
			t.Errorf("run -h lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "run's own flags") {
		t.Errorf("run has flags of its own outside the groups:\n%s", out)
	}
	// One default each: none said twice.
	for _, l := range strings.Split(out, "\n") {
		if strings.Count(l, "(default") > 1 {
			t.Errorf("a default said twice: %q", l)
		}
	}
}
