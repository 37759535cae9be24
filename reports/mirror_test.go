package reports

import (
	"strings"
	"testing"
)

// The table pools a dispatcher's lags over its runs, leaves out broken
// dispatchers (their lags say nothing of the one under test) and names the
// scenario of the worst.
func TestMirrorTable(t *testing.T) {
	runs := []Run{
		{Controller: "dispatcher", Version: "v1.37.1", Scenario: "a", MirrorLags: []float64{0.01, 0.02, 0.03}},
		{Controller: "dispatcher", Version: "v1.37.1", Scenario: "b", MirrorLags: []float64{0.5, 0.04}},
		{Controller: "dispatcher-no-terminating", Version: "v1.37.1", Scenario: "c", Faults: []string{"no-terminating"}, MirrorLags: []float64{9}},
		{Controller: "builtin", Version: "v1.37.1", Scenario: "a"},
	}
	got := MirrorTable(runs)
	for _, want := range []string{"dispatcher  v1.37.1     5         0.030s  0.500s  0.500s  b"} {
		if !strings.Contains(got, want) {
			t.Errorf("table:\n%s\nwant a line %q", got, want)
		}
	}
	if strings.Contains(got, "no-terminating") || strings.Contains(got, "builtin") {
		t.Errorf("table:\n%s\nhas a broken dispatcher or a controller with no lags", got)
	}
	if MirrorTable(runs[3:]) != "" {
		t.Error("a table without dispatched runs")
	}
}
