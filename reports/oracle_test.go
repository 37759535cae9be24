package reports

import (
	"bytes"
	"strings"
	"testing"
)

// Every run of a controller other than the built-in is either compared or
// not judged, with why; a suite that compares nothing says so, rather than
// reading as "no difference". A compared run is timed too, or counted with
// why not.
func TestOracleTallies(t *testing.T) {
	runs := []Run{
		{Suite: "conformance", Controller: "builtin", Version: "v1.37.1", Verdict: "PASS"},
		{Suite: "conformance", Controller: "reference", Version: "v1.37.1", Verdict: "PASS", Oracle: &Oracle{Compared: true, Timed: true}},
		{Suite: "conformance", Controller: "reference", Version: "v1.37.1", Verdict: "FAIL", Oracle: &Oracle{Compared: true, Untimed: "the built-in ran once (no spread of its own to time against)", Differences: []Difference{{Field: "status.failed"}}}},
		{Suite: "conformance", Controller: "reference", Version: "v1.37.1", Verdict: "PASS", Oracle: &Oracle{Note: "not compared with the built-in: its run of this scenario broke a promise (terminal-event: late)"}},
		{Suite: "conformance", Controller: "reference", Version: "v1.37.1", Verdict: "PASS", Oracle: &Oracle{Note: "not compared with the built-in: its run of this scenario broke a promise (adoption: x)"}},
		{Suite: "chaos", Controller: "reference", Version: "v1.37.1", Verdict: "PASS"},
		{Suite: "conformance", Controller: "reference", Version: "v1.37.1", Verdict: "skip"},
		{Suite: "chaos", Controller: "reference", Version: "v1.37.1", Verdict: "PASS", Faults: []string{"no-finalizer"}},
	}
	ts := OracleTallies(runs)
	if len(ts) != 1 {
		t.Fatalf("tallies %+v", ts)
	}
	got := ts[0].String()
	want := "compared 2 (timed 1; not 1: the built-in ran once ×1), not judged 3 (its run of this scenario broke a promise ×2; the chaos suite compares nothing with the built-in ×1)"
	if got != want {
		t.Errorf("tally\n got %s\nwant %s", got, want)
	}
	if n := NotJudgedByOracle(runs); n != 3 {
		t.Errorf("not judged %d", n)
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, runs, "t"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| compared 2 (timed 1; not 1: the built-in ran once ×1), not judged 3 (") {
		t.Errorf("summary.md lacks the tally:\n%s", md.String())
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, runs, "t"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "differential verdict: compared 2 (timed 1; not 1: the built-in ran once ×1), not judged 3") {
		t.Errorf("report.html's first screen lacks the tally")
	}
	if !strings.Contains(page.String(), "its delays not: the built-in ran once") {
		t.Errorf("report.html does not say why a compared run was not timed")
	}
}
