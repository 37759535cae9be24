package catalog

import (
	"testing"

	"github.com/jobconform/jobconform/scenarios"
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
