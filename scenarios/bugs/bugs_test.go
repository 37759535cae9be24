package bugs

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jobconform/jobconform/internal/yamltypes"
)

func TestOf(t *testing.T) {
	ids := []string{StaleStatusDuringBackoff.ID}
	for v, want := range map[string]string{
		"v1.31.14": "#139428", "v1.33.13": "#139428", "v1.34.9": "#139428", "v1.34.10": "", "v1.34.12": "",
		"v1.35.6": "#139428", "v1.35.7": "", "v1.35.8": "", "v1.36.2": "#139428", "v1.36.3": "", "v1.37.1": "", "": "",
	} {
		b, ok := Of(ids, v)
		if (want == "") == ok || !strings.Contains(b.ID, want) {
			t.Errorf("%q: got %+v, %v; want %q", v, b, ok, want)
		}
	}
	for v, want := range map[string]bool{"v1.31.4": false, "v1.32.5": true, "v1.32.10": false, "v1.33.5": true, "v1.33.13": false, "v1.34.1": true, "v1.34.4": false, "v1.35.0": false} {
		if _, ok := Of([]string{ResumeStartTimeRejected.ID}, v); ok != want {
			t.Errorf("%s has %s: %v, want %v", v, ResumeStartTimeRejected.ID, ok, want)
		}
	}
	if b, ok := Of([]string{DeadlineOnResume.ID}, "v1.35.4"); !ok || b.ID != DeadlineOnResume.ID {
		t.Errorf("v1.35.4 has the deadline bug: %+v %v", b, ok)
	}
	if got := StaleStatusDuringBackoff.Describe("v1.34.3"); !strings.HasPrefix(got, "known upstream bug of Kubernetes v1.34.3 (kubernetes/kubernetes#139428, releases <1.34.10 || >=1.35.0 <=1.35.6 || >=1.36.0 <1.36.3): ") {
		t.Errorf("Describe = %q", got)
	}
}

func TestEveryBugIsWellFormed(t *testing.T) {
	for id, b := range All {
		if id != b.ID || b.What == "" || b.Releases == "" {
			t.Errorf("%q: %+v", id, b)
		}
		if _, err := yamltypes.Applies(b.Releases, "v1.31.0"); err != nil {
			t.Errorf("%s: %v", id, err)
		}
		// A statement about the world holds as of a day: "no upstream
		// issue found" above all.
		if _, err := time.Parse(time.DateOnly, b.Read); err != nil {
			t.Errorf("%s: the day its upstream state was last read (Read %q) is no YYYY-MM-DD date", id, b.Read)
		}
		if strings.Contains(b.What, "no upstream issue found") && !strings.Contains(b.What, "no upstream issue found in a search of") {
			t.Errorf("%s: say where the search for an upstream issue looked (\"no upstream issue found in a search of …\")", id)
		}
	}
	if err := Check([]string{"kubernetes/kubernetes#1"}); err == nil || !strings.Contains(err.Error(), "kubernetes/kubernetes#139428") {
		t.Errorf("an unknown ID: %v", err)
	}
}

// docs/bugs.md is Markdown(): regenerate it with jobconform bugs --out docs/bugs.md.
func TestDocsPage(t *testing.T) {
	got, err := os.ReadFile("../../docs/bugs.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != Markdown() {
		t.Error("docs/bugs.md is stale: run go run ./cmd/jobconform bugs --out docs/bugs.md")
	}
}

// A dispatcher's bugs are reckoned at its own release, never the built-in's.
func TestOfController(t *testing.T) {
	ids := []string{MultiKueueManualSelector.ID, StaleStatusDuringBackoff.ID}
	if b, ok := OfController(ids, "multikueue", "v0.17.0"); !ok || b.ID != MultiKueueManualSelector.ID {
		t.Errorf("Kueue v0.17.0: %+v %v", b, ok)
	}
	if _, ok := OfController(ids, "multikueue", "v0.18.0"); ok {
		t.Error("Kueue v0.18.0 is not known to have it")
	}
	if b, ok := Of(ids, "v1.34.3"); !ok || b.ID != StaleStatusDuringBackoff.ID {
		t.Errorf("the built-in of v1.34.3: %+v %v", b, ok)
	}
	if _, ok := OfController(ids, "reference", "v0.17.0"); ok {
		t.Error("another controller has none of them")
	}
	if got := MultiKueueManualSelector.Describe("v0.17.0"); !strings.HasPrefix(got, "known upstream bug of Kueue v0.17.0 (multikueue-manual-selector, releases <=0.17.0): ") {
		t.Errorf("Describe = %q", got)
	}
}

// An apiserver's bug is named for any controller judged on its release,
// read at the boundaries of each minor's cherry-pick.
func TestOfApiserver(t *testing.T) {
	ids := []string{StaleStatusDuringBackoff.ID, SuspendedZeroCompletionsRejected.ID}
	for v, want := range map[string]bool{"v1.31.4": true, "v1.31.14": true, "v1.32.5": true, "v1.32.6": true, "v1.32.7": false,
		"v1.33.2": true, "v1.33.3": false, "v1.33.13": false, "v1.34.0": false, "v1.37.1": false, "": false} {
		b, ok := OfApiserver(ids, v)
		if ok != want || (ok && b.ID != SuspendedZeroCompletionsRejected.ID) {
			t.Errorf("%q: %+v %v, want %v", v, b, ok, want)
		}
	}
	if _, ok := OfApiserver([]string{StaleStatusDuringBackoff.ID}, "v1.33.13"); ok {
		t.Error("a bug of the built-in controller named as the apiserver's")
	}
}

// In finds the bugs a verdict's line names, as Describe names them, and
// no other.
func TestIn(t *testing.T) {
	line := "step 3 (await): not reached — " + StaleStatusDuringBackoff.Describe("v1.36.2")
	if got := In(line); len(got) != 1 || got[0] != StaleStatusDuringBackoff.ID {
		t.Fatalf("In(%q) = %v", line, got)
	}
	if got := In("invariant active-settles: active=0, 1 pod running"); got != nil {
		t.Fatalf("a line naming no bug: %v", got)
	}
}
