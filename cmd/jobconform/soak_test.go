package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/internal/starvation"
	"github.com/jobconform/jobconform/reports"
)

// A soak counts every failed spec of a correct controller, not the skipped
// ones nor a negative control's, and not the suite's exit code on top.
func TestSoakCountsFalseFailures(t *testing.T) {
	red := &starvation.Reading{Samples: 10, RunQueue: 3, RunQueueMax: 9, API: 1.5}
	calm := &starvation.Reading{Samples: 10, RunQueue: 1, RunQueueMax: 2, API: 0.01}
	failing := soakRound{dir: "round-1", runs: []reports.Run{
		{Suite: "conformance", Spec: "[builtin] a", Version: "v1.37.1", Verdict: "PASS", Starvation: calm},
		{Suite: "conformance", Spec: "[reference] a", Version: "v1.37.1", Verdict: "FAIL", Failures: []string{"invariant replacement-timing: late\nmore"}, Starvation: red},
		{Suite: "conformance", Spec: "[reference] b", Verdict: "skip"},
		{Suite: "conformance", Spec: "[reference] c", Verdict: "FAIL", Faults: []string{"no-backoff"}},
	}, errs: []error{errors.New("conformance: Ginkgo exit code 1")}}
	crashed := soakRound{dir: "round-2", runs: []reports.Run{{Verdict: "PASS"}}, errs: []error{errors.New("chaos: Ginkgo wrote no report")}}
	clean := soakRound{dir: "round-3", runs: []reports.Run{{Verdict: "PASS"}, {Verdict: "PASS"}}}
	for _, c := range []struct {
		r      soakRound
		judged int
		false_ int
	}{{failing, 2, 1}, {crashed, 1, 1}, {clean, 2, 0}} {
		judged, _ := c.r.judged()
		if len(judged) != c.judged || c.r.falseFailures() != c.false_ {
			t.Errorf("%s: %d judged, %d false failures; want %d and %d", c.r.dir, len(judged), c.r.falseFailures(), c.judged, c.false_)
		}
	}
	if read, nred, rq, _, _, _ := failing.meter(); read != 2 || nred != 1 || rq != 2 {
		t.Errorf("meter of round 1: %d read, %d red, run queue %.1f; want 2, 1, 2.0", read, nred, rq)
	}
	s := soakSummary{suites: []string{"conformance"}, controllers: []string{"builtin", "reference"}, versions: []string{"v1.37.1"}, nodes: "kwok", load: 2, rounds: []soakRound{failing, crashed, clean}}
	var b bytes.Buffer
	s.write(&b)
	out := b.String()
	for _, want := range []string{
		"False failures: 2 of 5 specs judged (400.0 per 1,000)",
		"round 1, conformance [reference] a [v1.37.1]: invariant replacement-timing: late — round-1/report.html",
		"round 2: a suite ended badly: chaos: Ginkgo wrote no report",
		"red in 1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("soak.md lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Ginkgo exit code 1") {
		t.Errorf("the exit code of a suite with failed specs is counted again:\n%s", out)
	}
}

// jobconform soak refuses what would make its count meaningless, before
// it starts anything.
func TestSoakRefusesBadInput(t *testing.T) {
	bin := buildJobconform(t)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no rounds", []string{"--rounds", "0"}, "give at least one round"},
		{"negative load", []string{"--load", "-1"}, "no negative load"},
		{"a controller that may be broken", []string{"--controllers", "external"}, "runs controllers that keep their promises"},
		{"a broken reference", []string{"--reference-faults", "no-backoff"}, "jobconform mutate runs broken ones"},
		{"an argument", []string{"conformance"}, "soak takes no arguments"},
		{"unknown suite", []string{"--suites", "soak"}, `unknown suite "soak"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			artifacts := filepath.Join(t.TempDir(), "artifacts")
			cmd := exec.Command(bin, append([]string{"soak", "--artifacts", artifacts}, c.args...)...)
			cmd.Env = cleanEnv()
			out, code := exitCode(t, cmd)
			if code != 2 || !strings.Contains(out, c.want) {
				t.Errorf("exit code %d, output:\n%s\nwant exit code 2 and %q", code, out, c.want)
			}
			if _, err := os.Stat(artifacts); !os.IsNotExist(err) {
				t.Errorf("bad input wrote %s", artifacts)
			}
		})
	}
}
