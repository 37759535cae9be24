package mutants

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const controllerDir = "../../controller"

func TestCatalog(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range All() {
		if seen[m.Name] {
			t.Errorf("%s: named twice", m.Name)
		}
		seen[m.Name] = true
		if m.Breaks == "" || m.Labels == "" || len(m.Edits) == 0 {
			t.Errorf("%s: needs what it breaks, the labels of the scenarios meant to catch it and its edits", m.Name)
		}
		if m.Suite != "conformance" && m.Suite != "chaos" {
			t.Errorf("%s: suite %q: conformance or chaos", m.Name, m.Suite)
		}
	}
	if _, err := Lookup("no-such-fault"); err == nil || !strings.Contains(err.Error(), "no-backoff") {
		t.Errorf("an unknown name: %v, want an error listing the known ones", err)
	}
}

// Every mutant applies to controller/ as it is, and changes it.
func TestEveryMutantApplies(t *testing.T) {
	for _, m := range All() {
		files, err := Apply(controllerDir, m)
		if err != nil {
			t.Error(err)
			continue
		}
		for name, data := range files {
			if old, err := os.ReadFile(filepath.Join(controllerDir, name)); err == nil && bytes.Equal(old, data) {
				t.Errorf("%s: leaves %s as it was", m.Name, name)
			}
		}
	}
}

// An edit whose text is gone is an error naming the mutant and the file.
func TestNoLongerApplies(t *testing.T) {
	gone := Mutant{Name: "gone", Edits: []Edit{{File: "sync.go", Old: "no such text in the controller", New: "x"}}}
	_, err := Apply(controllerDir, gone)
	if err == nil || !strings.Contains(err.Error(), "mutant gone no longer applies") || !strings.Contains(err.Error(), "controller/sync.go") {
		t.Fatalf("got %v", err)
	}
	twice := Mutant{Name: "twice", Edits: []Edit{{File: "sync.go", Old: "func ", New: "func "}}}
	if _, err := Apply(controllerDir, twice); err == nil || !strings.Contains(err.Error(), "mutant twice no longer applies") {
		t.Fatalf("got %v", err)
	}
	exists := Mutant{Name: "exists", Edits: []Edit{{File: "sync.go", New: "package controller\n"}}}
	if _, err := Apply(controllerDir, exists); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Fatalf("got %v", err)
	}
}

// Every mutant compiles: the controller package, edited, type-checks
// against its dependencies (the command's build and link is make mutate's).
func TestEveryMutantCompiles(t *testing.T) {
	ctx := context.Background()
	src, err := SourceDir(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewChecker(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Check(); err != nil {
		t.Fatalf("controller/ itself: %v", err)
	}
	for _, m := range All() {
		if err := c.Check(m); err != nil {
			t.Error(err)
		}
	}
	broken := Mutant{Name: "broken", Edits: []Edit{{File: "sync.go", Old: "want = ptr.To(n)", New: "want = undefinedName"}}}
	if err := c.Check(broken); err == nil || !strings.Contains(err.Error(), "mutant broken does not compile") || !strings.Contains(err.Error(), "undefinedName") {
		t.Errorf("a mutant that does not compile: %v", err)
	}
}

// A whole mutant binary builds, and a mutant that does not compile is an
// error naming it.
func TestBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("links a reference controller")
	}
	ctx := context.Background()
	m, _ := Lookup("no-backoff")
	bin, err := Build(ctx, t.TempDir(), m)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(bin); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("%s: %v", bin, err)
	}
	broken := Mutant{Name: "broken", Edits: []Edit{{File: "sync.go", Old: "want = ptr.To(n)", New: "want = undefinedName"}}}
	if _, err := Build(ctx, t.TempDir(), broken); err == nil || !strings.Contains(err.Error(), "mutant broken does not compile") {
		t.Fatalf("got %v", err)
	}
}
