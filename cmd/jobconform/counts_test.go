package main

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/jobconform/jobconform/scenarios/catalog"
	"github.com/jobconform/jobconform/scenarios/invariants"
)

// The counts the README states are claims: they follow the code.
func TestREADMECounts(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	set, err := catalog.Assemble(true)
	if err != nil {
		t.Fatal(err)
	}
	for what, want := range map[string]int{
		`(\d+) invariants are checked`:                        len(invariants.All),
		"`scenarios/catalog/conformance/\\*.yaml`, (\\d+) of": len(set.Conformance),
		"`scenarios/catalog/chaos/\\*.yaml`,\\s+(\\d+) more":  len(set.Chaos),
	} {
		m := regexp.MustCompile(what).FindSubmatch(data)
		if m == nil {
			t.Errorf("README.md no longer says %q", what)
			continue
		}
		if got := string(m[1]); got != strconv.Itoa(want) {
			t.Errorf("README.md says %s for %q; the code has %d", got, what, want)
		}
	}
}
