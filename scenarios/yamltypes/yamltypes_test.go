package yamltypes

import (
	"strings"
	"testing"
)

func TestKnownBugAffects(t *testing.T) {
	bugs := []KnownBug{{Releases: "<1.36.3", Bug: "kubernetes/kubernetes#139428"}, {Releases: "=1.37.0", Bug: "another"}}
	for v, want := range map[string]string{
		"v1.31.14": "#139428", "v1.36.2": "#139428", "v1.36.3": "", "v1.37.0": "another", "v1.37.1": "", "": "",
	} {
		b, ok := KnownBugOf(bugs, v)
		if (want == "") == ok || !strings.Contains(b.Bug, want) {
			t.Errorf("%q: got %+v, %v; want %q", v, b, ok, want)
		}
	}
	if got := bugs[0].Describe("v1.34.3"); got != "known upstream bug of Kubernetes v1.34.3 (<1.36.3): kubernetes/kubernetes#139428" {
		t.Errorf("Describe = %q", got)
	}
}
