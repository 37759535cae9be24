package reports

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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

// --require-oracle fails only a run not judged for a reason outside
// AcceptedReasons, and the tally says which kind each was.
func TestAcceptedNotJudged(t *testing.T) {
	note := func(why string) *Oracle { return &Oracle{Note: "not compared with the built-in: " + why} }
	runs := []Run{
		{Suite: "conformance", Controller: "reference", Version: "v1.37.1", Verdict: "PASS", Oracle: note("racy: the built-in's two runs ended apart")},
		{Suite: "conformance", Controller: "reference", Version: "v1.37.1", Verdict: "PASS", Oracle: note("the scenario is not for the built-in controller")},
		{Suite: "drill", Controller: "reference", Version: "v1.37.1", Verdict: "PASS", Oracle: note("in step 2 the built-in's JobManagedBy gate is off and it acts on this controller's Job too")},
	}
	if n := NotJudgedByOracle(runs); n != 0 {
		t.Errorf("accepted reasons counted against --require-oracle: %d", n)
	}
	want := "not judged 3 (in step 2 the built-in's JobManagedBy gate is off and it acts on this controller's Job too ×1; racy ×1; the scenario is not for the built-in controller ×1), every one for an accepted reason"
	if got := OracleTallies(runs)[0].String(); !strings.HasSuffix(got, want) {
		t.Errorf("tally %q, want it to end %q", got, want)
	}
	runs = append(runs,
		Run{Suite: "conformance", Controller: "reference", Version: "v1.37.1", Verdict: "PASS", Oracle: note("nothing was observed")},
		Run{Suite: "conformance", Controller: "reference", Version: "v1.37.1", Verdict: "PASS", Oracle: note("its run is of Kubernetes v1.36.3 on kwok nodes, this one of v1.37.1 on kwok nodes")},
	)
	if n := NotJudgedByOracle(runs); n != 2 {
		t.Errorf("not accepted: %d, want 2", n)
	}
	if got := OracleTallies(runs)[0].String(); !strings.HasSuffix(got, ", 2 for a reason not accepted") {
		t.Errorf("tally %q does not count the reasons not accepted", got)
	}
}

// Each accepted reason is how a note the suites write reads: a reworded
// note must not drop out of the list unseen (nor the list keep a reason
// no suite gives).
func TestAcceptedReasonsWritten(t *testing.T) {
	var notes []string
	// The note's line: its string literals, whatever is joined between.
	note := regexp.MustCompile(`OracleNote = "not compared with the built-in: .*`)
	literal := regexp.MustCompile(`"([^"]*)"`)
	err := filepath.WalkDir("../suites", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		for _, line := range note.FindAll(src, -1) {
			var text string
			for _, l := range literal.FindAllSubmatch(line, -1) {
				text += string(l[1])
			}
			notes = append(notes, text)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range AcceptedReasons {
		if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, a) }) {
			t.Errorf("accepted reason %q is in no note the suites write (%q)", a, notes)
		}
	}
}
