package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/reports"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/explore"
)

// The kept corpus: the shrunk reproducers and a seed-chosen sample of the
// passing, compared cases, written once, loadable as scenarios; the same
// explore keeps the same files, and nothing kept is overwritten.
func TestKeepCorpus(t *testing.T) {
	generated := explore.Generate(1, 6)
	var runs []reports.Run
	for i, c := range generated {
		runs = append(runs, reports.Run{Scenario: c.Scenario.Name, Controller: "builtin", Verdict: "PASS"})
		ref := reports.Run{Scenario: c.Scenario.Name, Controller: "reference", Verdict: "PASS", Oracle: &reports.Oracle{Compared: true}}
		switch i {
		case 0:
			ref.Verdict = "FAIL"
		case 1:
			ref.Oracle = &reports.Oracle{Note: "racy: the built-in's two runs ended apart"}
		}
		runs = append(runs, ref)
	}
	art := t.TempDir()
	sh := shrunk{Case: generated[0].Scenario.Name, Controller: "reference", Failure: "differential peak.active: built-in 2, this controller 4", Scenario: generated[0].Scenario, Cuts: 1, Rounds: 2, Stopped: "no smaller case fails alike"}
	if err := writeShrunk(filepath.Join(art, "shrunk"), 1, &sh); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "explored")
	kept, err := keepCorpus(dir, 1, 2, []string{"active-counts-terminating"}, generated, runs, []shrunk{sh})
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 3 {
		t.Fatalf("want the reproducer and 2 sampled, got %v", kept)
	}
	for _, f := range kept {
		base := strings.TrimSuffix(filepath.Base(f), ".yaml")
		if base == generated[0].Scenario.Name || base == generated[1].Scenario.Name {
			t.Errorf("kept %s: a failing or racy case is no sample", base)
		}
	}
	loaded, err := scenarios.Load(os.DirFS(dir))
	if err != nil || len(loaded) != 3 {
		t.Fatalf("the kept cases load as scenarios: %d, %v", len(loaded), err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, sh.Case+"-shrunk.yaml"))
	if !strings.HasPrefix(string(data), "# Kept by jobconform explore --seed 1: case "+sh.Case+" shrunk, it failed reference broken by [active-counts-terminating]") || strings.Contains(string(data), art) {
		t.Fatalf("the reproducer's opening comment:\n%s", data)
	}
	// The same explore again: nothing new, no error; the same sample.
	again, err := keepCorpus(dir, 1, 2, []string{"active-counts-terminating"}, generated, runs, []shrunk{sh})
	if err != nil || len(again) != 0 {
		t.Fatalf("again: %v, %v", again, err)
	}
	// A kept file of other bytes is refused, and left as it was.
	_ = os.WriteFile(kept[0], []byte("edited"), 0o644)
	if _, err := keepCorpus(dir, 1, 2, []string{"active-counts-terminating"}, generated, runs, []shrunk{sh}); err == nil || !strings.Contains(err.Error(), "nothing was overwritten") {
		t.Fatalf("an edited kept file: %v", err)
	}
	if data, _ := os.ReadFile(kept[0]); string(data) != "edited" {
		t.Fatalf("the edited file was overwritten")
	}
	if a, b := sample(7, 3, generated), sample(7, 3, generated); !slices.EqualFunc(a, b, func(x, y explore.Case) bool { return x.Scenario.Name == y.Scenario.Name }) {
		t.Fatalf("the same seed chose other cases")
	}
}
