package main

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/jobconform/jobconform/internal/mutants"
	"github.com/jobconform/jobconform/scenarios/catalog"
	"github.com/jobconform/jobconform/scenarios/invariants"
)

// The counts the README states are claims: they follow the code.
func TestREADMECounts(t *testing.T) {
	set, err := catalog.Assemble(true)
	if err != nil {
		t.Fatal(err)
	}
	conformance, err := catalog.Load() // the explored/ corpus is counted apart
	if err != nil {
		t.Fatal(err)
	}
	explored, err := catalog.LoadExplored()
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Conformance) != len(conformance)+len(explored) {
		t.Errorf("the conformance suite runs %d scenarios, not conformance/'s %d and explored/'s %d", len(set.Conformance), len(conformance), len(explored))
	}
	claims(t, "README.md", map[string]int{
		`(\d+) invariants are checked`:                        len(invariants.All),
		"`scenarios/catalog/conformance/\\*.yaml`, (\\d+) of": len(conformance),
		"`scenarios/catalog/chaos/\\*.yaml`,\\s+(\\d+) more":  len(set.Chaos),
		`the checks catch (\d+) realistic`:                    len(mutants.All()),
	})
	claims(t, "docs/architecture.md", map[string]int{
		"`conformance/\\*.yaml` \\((\\d+)\\)":      len(conformance),
		"`chaos/\\*.yaml` \\((\\d+)\\)":            len(set.Chaos),
		`on purpose, from outside its code: (\d+)`: len(mutants.All()),
	})
	claims(t, "docs/checks.md", map[string]int{
		"`scenarios/catalog/conformance/\\*.yaml`, (\\d+) of": len(conformance),
		"`scenarios/catalog/chaos/\\*.yaml`, (\\d+) more":     len(set.Chaos),
	})
	claims(t, "docs/mutation.md", map[string]int{
		`(\d+) realistic mistakes`: len(mutants.All()),
	})
}

// claims checks that each pattern's first group in the file says its count.
func claims(t *testing.T, file string, counts map[string]int) {
	t.Helper()
	data, err := os.ReadFile("../../" + file)
	if err != nil {
		t.Fatal(err)
	}
	for what, want := range counts {
		m := regexp.MustCompile(what).FindSubmatch(data)
		if m == nil {
			t.Errorf("%s no longer says %q", file, what)
			continue
		}
		if got := string(m[1]); got != strconv.Itoa(want) {
			t.Errorf("%s says %s for %q; the code has %d", file, got, what, want)
		}
	}
}
