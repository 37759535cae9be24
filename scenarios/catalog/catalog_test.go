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
	t.Logf("%d scenarios", len(all))
}
