package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// explore writes its cases as scenario files that validate accepts, the
// same bytes for the same seed, and refuses a directory that holds
// anything (it loses nothing).
func TestExploreWritesValidCases(t *testing.T) {
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	for _, dir := range []string{a, b} {
		if err := exploreCmd([]string{"--seed", "3", "--cases", "12", "--out", dir}); err != nil {
			t.Fatal(err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(a, "*.yaml"))
	if len(files) != 12 {
		t.Fatalf("%d files", len(files))
	}
	for _, f := range files {
		x, _ := os.ReadFile(f)
		y, err := os.ReadFile(filepath.Join(b, filepath.Base(f)))
		if err != nil || string(x) != string(y) {
			t.Errorf("%s differs between two runs of seed 3", filepath.Base(f))
		}
	}
	if err := validate([]string{a}); err != nil {
		t.Errorf("validate: %v", err)
	}
	var u usageError
	if err := exploreCmd([]string{"--out", a}); !errors.As(err, &u) || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a directory with cases in it: %v", err)
	}
	if err := exploreCmd(nil); !errors.As(err, &u) {
		t.Errorf("no --out: %v", err)
	}
}
