package catalog

import "testing"

func TestChaosCatalogLoads(t *testing.T) {
	all, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if !s.HasChaos() {
			t.Errorf("%s (%s) injects no chaos: it belongs in scenarios/catalog", s.Name, s.File)
		}
	}
	if len(all) < 8 {
		t.Errorf("%d chaos scenarios, want at least 8", len(all))
	}
}
