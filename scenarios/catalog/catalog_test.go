package catalog

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/internal/release"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/bugs"
)

func TestCatalogLoadsAndCoversEveryFeature(t *testing.T) {
	all, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, s := range all {
		for _, f := range s.Features {
			covered[f] = true
		}
	}
	for _, f := range scenarios.Features {
		if !covered[f] {
			t.Errorf("feature %s has no scenario", f)
		}
	}
	if len(all) < 40 {
		t.Errorf("%d scenarios, the catalog promises at least 40", len(all))
	}
	for _, s := range all {
		if s.HasChaos() {
			t.Errorf("%s (%s) injects chaos: it belongs in chaos/, which the chaos suite runs", s.Name, s.File)
		}
	}
	t.Logf("%d scenarios", len(all))
}

func TestChaosCatalogLoads(t *testing.T) {
	all, err := LoadChaos()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if !s.HasChaos() {
			t.Errorf("%s (%s) injects no chaos: it belongs in conformance/", s.Name, s.File)
		}
	}
	if len(all) < 8 {
		t.Errorf("%d chaos scenarios, want at least 8", len(all))
	}
}

// Every scale form holds the same scenarios (the 10k form's named
// scale-10k-, the 600 form's scale-600-),
// serial, on kwok nodes, with no chaos: the scale suite measures the
// controllers one Job at a time.
func TestScaleFormsLoad(t *testing.T) {
	names := map[string][]string{}
	for form := range ScaleForms {
		all, err := LoadScale(form)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range all {
			if !s.Serial || s.Nodes != "kwok" || s.HasChaos() {
				t.Errorf("%s (%s): a scale scenario is serial, on kwok nodes, without chaos", s.Name, s.File)
			}
			names[form] = append(names[form], strings.TrimPrefix(s.Name, "scale-"+form+"-"))
		}
	}
	if len(names["1k"]) < 5 {
		t.Errorf("forms: %v", names)
	}
	for _, form := range []string{"10k", "600"} {
		if len(names[form]) != len(names["1k"]) {
			t.Errorf("the %s form has %d scenarios, the 1k form %d", form, len(names[form]), len(names["1k"]))
		}
		for i, n := range names[form] {
			if i >= len(names["1k"]) || "scale-"+n != names["1k"][i] {
				t.Errorf("the %s form's %d-th scenario is %s, the 1k form's %v", form, i, n, names["1k"])
			}
		}
	}
	if _, err := LoadScale("100"); err == nil || !strings.Contains(err.Error(), "use one of 10k, 1k, 600") {
		t.Errorf("an unknown form: %v", err)
	}
}

// The known bugs' reproducers (scenarios/bugs/reproducers, named in
// docs/bugs.md) are valid scenarios, kept out of the catalog (every
// release they reproduce on would fail make run), and each names, on a
// step, a known bug that affects the default release: run there, its
// verdict says which bug broke it.
func TestBugReproducers(t *testing.T) {
	repro, err := scenarios.Load(os.DirFS("../bugs/reproducers"))
	if err != nil {
		t.Fatal(err)
	}
	if len(repro) == 0 {
		t.Fatal("no reproducer")
	}
	all, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range repro {
		if slices.ContainsFunc(all, func(s *scenarios.Scenario) bool { return s.Name == r.Name }) {
			t.Errorf("%s is in the catalog too", r.Name)
		}
		named := false
		for _, st := range r.Steps {
			for _, id := range st.KnownBugs {
				b, ok := bugs.All[id]
				named = named || (ok && b.Affects(release.Default))
			}
		}
		if !named {
			t.Errorf("%s names no known bug of %s on a step", r.Name, release.Default)
		}
	}
}
