package main

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	"github.com/jobconform/jobconform/reports"
	"github.com/jobconform/jobconform/scenarios/explore"
)

// Explore's kept corpus (issue #55): what explore found stays checked. Every
// shrunk reproducer, and a sample of the cases every controller passed (the
// seed chooses it), is written into a directory — the catalog's
// scenarios/catalog/explored, whose cases the conformance suite runs beside
// conformance/ in make run and make test.

// keepCorpus writes shrinks' reproducers and n of the seed's passing cases
// into dir, each file opening with a comment that says where it came from
// (faults: the reference's, when it ran broken). A file of the same name
// and other bytes is refused: nothing kept is overwritten. It returns the
// files written.
func keepCorpus(dir string, seed uint64, n int, faults []string, generated []explore.Case, runs []reports.Run, shrinks []shrunk) ([]string, error) {
	want := map[string][]byte{}
	for _, sh := range shrinks {
		data, err := os.ReadFile(sh.File)
		if err != nil {
			return nil, fmt.Errorf("explore --keep: %w", err)
		}
		head := fmt.Sprintf("# Kept by jobconform explore --seed %d: case %s shrunk, it failed %s", seed, sh.Case, sh.Controller)
		if len(faults) > 0 && sh.Controller == "reference" {
			head += fmt.Sprintf(" broken by %v (--reference-faults); a correct controller passes it", faults)
		}
		want[filepath.Base(sh.File)] = append([]byte(head+".\n"), uncommented(data)...)
	}
	for _, c := range sample(seed, n, passingCases(generated, runs)) {
		data, err := explore.Render(c.Scenario)
		if err != nil {
			return nil, err
		}
		head := fmt.Sprintf("# Kept by jobconform explore --seed %d: case %s, chosen by the seed among the cases every controller passed.\n", seed, c.Scenario.Name)
		want[c.Scenario.Name+".yaml"] = append([]byte(head), data...)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var wrote []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		path := filepath.Join(dir, name)
		if have, err := os.ReadFile(path); err == nil {
			if !bytes.Equal(have, want[name]) {
				return wrote, usageError{fmt.Errorf("explore --keep: %s exists with other content (kept by another explore, or edited): remove it or keep into another directory (nothing was overwritten)", path)}
			}
			continue
		}
		if err := os.WriteFile(path, want[name], 0o644); err != nil {
			return wrote, err
		}
		wrote = append(wrote, path)
	}
	return wrote, nil
}

// passingCases are the generated cases every run of which passed and, for
// another controller than the built-in, was compared with the built-in's
// (a racy or not-judged case is no case to keep checking).
func passingCases(generated []explore.Case, runs []reports.Run) []explore.Case {
	ok := map[string]bool{}
	bad := map[string]bool{}
	for _, r := range runs {
		switch {
		case r.Verdict != "PASS", r.Controller != "builtin" && (r.Oracle == nil || !r.Oracle.Compared):
			bad[r.Scenario] = true
		default:
			ok[r.Scenario] = true
		}
	}
	var out []explore.Case
	for _, c := range generated {
		if ok[c.Scenario.Name] && !bad[c.Scenario.Name] {
			out = append(out, c)
		}
	}
	return out
}

// sample is n of cs, chosen by seed: the same seed and cases, the same sample.
func sample(seed uint64, n int, cs []explore.Case) []explore.Case {
	r := rand.New(rand.NewPCG(seed, 0x6b657074)) // "kept"
	idx := r.Perm(len(cs))
	var out []explore.Case
	for _, i := range idx[:min(n, len(cs))] {
		out = append(out, cs[i])
	}
	return out
}

// uncommented is a scenario file without its opening comment lines (a
// shrunk reproducer's name the artifacts directory it was written to).
func uncommented(data []byte) []byte {
	for bytes.HasPrefix(data, []byte("#")) {
		_, rest, ok := bytes.Cut(data, []byte("\n"))
		if !ok {
			return nil
		}
		data = rest
	}
	return data
}
