package reports

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A change names what newly fails (with its first failure), what newly
// passes, what got slower beyond noise, and what ran on one side only;
// small wobbles are no change.
func TestCompare(t *testing.T) {
	run := func(sc, ctl, verdict string, secs float64, failures ...string) Run {
		return Run{Suite: "jobconform conformance", Scenario: sc, Controller: ctl, Version: "v1.37.1", Verdict: verdict, Seconds: secs, Failures: failures}
	}
	before := []Run{
		run("a", "reference", "PASS", 10), run("b", "reference", "FAIL", 10, "x"), run("c", "reference", "PASS", 30),
		run("d", "reference", "PASS", 10), run("gone", "reference", "PASS", 10), run("e", "reference", "PASS", 2),
	}
	after := []Run{
		run("a", "reference", "FAIL", 11, "step 1 (await active=1): not reached"), run("b", "reference", "PASS", 10),
		run("c", "reference", "PASS", 80), run("d", "reference", "PASS", 14), run("new", "reference", "PASS", 10),
		run("e", "reference", "PASS", 5), // ×2.5 but 3 s: noise
	}
	d := Compare(before, after)
	keys := func(cs []Change) string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Key[strings.LastIndex(c.Key, " ")+1:])
		}
		return strings.Join(out, ",")
	}
	for what, got := range map[string]string{"newly failing": keys(d.NewlyFailing), "newly passing": keys(d.NewlyPassing), "slower": keys(d.Slower),
		"only before": keys(d.OnlyBefore), "only after": keys(d.OnlyAfter)} {
		want := map[string]string{"newly failing": "a", "newly passing": "b", "slower": "c", "only before": "gone", "only after": "new"}[what]
		if got != want {
			t.Errorf("%s: %q, want %q", what, got, want)
		}
	}
	if d.Same != 2 || !d.Regressed() {
		t.Errorf("unchanged %d (want 2: d, e), regressed %v", d.Same, d.Regressed())
	}
	var b strings.Builder
	if err := WriteDiff(&b, d); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if !strings.Contains(md, "1 newly failing, 1 newly passing, 1 slower") || !strings.Contains(md, "(was PASS): step 1 (await active=1): not reached") ||
		strings.Index(md, "Newly failing") > strings.Index(md, "Newly passing") {
		t.Errorf("diff summary:\n%s", md)
	}
	if Compare(after, after).Regressed() {
		t.Error("a run compared with itself regressed")
	}
}

// WriteCompared puts the comparison in report.html and summary.md.
func TestWriteCompared(t *testing.T) {
	before := []Run{{Suite: "s", Scenario: "a", Controller: "reference", Version: "v1.37.1", Verdict: "PASS"}}
	after := []Run{{Suite: "s", Scenario: "a", Controller: "reference", Version: "v1.37.1", Verdict: "FAIL", Failures: []string{"invariant x: y"}}}
	dir := t.TempDir()
	d := Compare(before, after)
	path, err := WriteCompared(dir, "t", after, &d)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(path)
	md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	if !strings.Contains(string(page), `id="baseline"`) || !strings.Contains(string(page), "(was PASS): <code>invariant x: y</code>") {
		t.Errorf("report.html lacks the comparison")
	}
	if !strings.Contains(string(md), "## Compared with the baseline") || !strings.Contains(string(md), "1 newly failing") {
		t.Errorf("summary.md lacks the comparison:\n%s", md)
	}
	if path, _ := Write(t.TempDir(), "t", after); path != "" {
		if page, _ := os.ReadFile(path); strings.Contains(string(page), `id="baseline"`) {
			t.Error("a report without a baseline compares")
		}
	}
}

// The reference broken on purpose (--reference-faults) is compared as the
// reference: what a change that broke it would show.
func TestCompareBrokenOnPurpose(t *testing.T) {
	ok := Run{Suite: "s", Scenario: "a", Controller: "reference", Version: "v1.37.1", Verdict: "PASS"}
	broken := ok
	broken.Verdict, broken.Faults, broken.Failures = "FAIL", []string{"no-backoff"}, []string{"invariant backoff-respected: …"}
	if d := Compare([]Run{ok}, []Run{broken}); len(d.NewlyFailing) != 1 || d.NewlyFailing[0].First != "invariant backoff-respected: …" {
		t.Errorf("the broken reference: %+v", d)
	}
}

// Each report names the jobconform that judged it, and a diff of reports
// of two builds says so (issue #71).
func TestDiffNamesTheBuilds(t *testing.T) {
	before := []Run{{Suite: "conformance", Scenario: "a", Controller: "builtin", Version: "v1.37.1", Verdict: "PASS", Jobconform: "v0.1.0 aaaaaaaaaaaa"}}
	after := []Run{{Suite: "conformance", Scenario: "a", Controller: "builtin", Version: "v1.37.1", Verdict: "PASS", Jobconform: "v0.2.0 bbbbbbbbbbbb"}}
	var b strings.Builder
	if err := WriteDiff(&b, Compare(before, after)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "different builds of jobconform (baseline v0.1.0 aaaaaaaaaaaa, this run v0.2.0 bbbbbbbbbbbb)") {
		t.Errorf("the diff does not name the two builds:\n%s", b.String())
	}
	b.Reset()
	if err := WriteDiff(&b, Compare(after, after)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "different builds") {
		t.Errorf("one build said to be two:\n%s", b.String())
	}
	b.Reset()
	if err := WriteMarkdown(&b, after, "t"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Judged by jobconform v0.2.0 bbbbbbbbbbbb.") {
		t.Errorf("summary.md does not name its build:\n%s", b.String())
	}
}

// The builds that judged runs: a spec skipped before it ran names none (a
// control not asked for), a run of a report older than the field is
// "unknown".
func TestMakers(t *testing.T) {
	runs := []Run{{Verdict: "PASS", Jobconform: "v1 abc"}, {Verdict: "skip"}, {Verdict: "PASS"}}
	if got := Makers(runs[:2]); !slices.Equal(got, []string{"v1 abc"}) {
		t.Errorf("makers: %v", got)
	}
	if got := Makers(runs); !slices.Equal(got, []string{"unknown", "v1 abc"}) {
		t.Errorf("makers with an old run: %v", got)
	}
}
