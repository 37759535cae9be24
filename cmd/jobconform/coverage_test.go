package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/internal/coverage"
	"github.com/jobconform/jobconform/internal/release"
)

// run --coverage runs the built-in controller-manager built with coverage
// and writes what the run reached of upstream's Job controller: a Job that
// completes and one that fails reach syncJob and the failure's handling,
// not the pod failure policy's matching, and the blocks never reached are
// listed with the source coloured beside (issue #69).
func TestRunCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real cluster with a covered controller-manager (built once per release)")
	}
	bin := buildJobconform(t)
	dir := t.TempDir()
	scen := filepath.Join(dir, "scenarios")
	if err := os.Mkdir(scen, 0o755); err != nil {
		t.Fatal(err)
	}
	docs := "name: covered-completes\nfeatures: [terminalConditions]\njob: {parallelism: 1, completions: 2}\npods: {run: 1s}\n" +
		"steps:\n- await: {succeeded: 2, conditions: [Complete]}\n" +
		"---\nname: covered-fails\nfeatures: [terminalConditions]\njob: {parallelism: 1, completions: 1, backoffLimit: 0}\npods: {run: 1s, exitCode: 3}\n" +
		"steps:\n- await: {failed: 1, conditions: [FailureTarget, Failed]}\n"
	if err := os.WriteFile(filepath.Join(scen, "covered.yaml"), []byte(docs), 0o644); err != nil {
		t.Fatal(err)
	}
	artifacts := filepath.Join(dir, "out")
	cmd := exec.Command(bin, "run", "--builtin-scenarios=false", "--scenarios", "scenarios", "--controllers", "builtin",
		"--suites", "conformance", "--procs", "2", "--coverage", "--artifacts", artifacts)
	cmd.Dir, cmd.Env = dir, cleanEnv()
	out, code := exitCode(t, cmd)
	if code != 0 {
		t.Fatalf("exit code %d:\n%s", code, tail25(out))
	}
	if !strings.Contains(out, "coverage of upstream's Job controller at "+release.Default) {
		t.Errorf("the run does not say what it reached:\n%s", tail25(out))
	}
	cov := filepath.Join(artifacts, "coverage", release.Default)
	r, err := coverage.Load(cov)
	if err != nil {
		t.Fatal(err)
	}
	funcs := map[string]coverage.Func{}
	for _, f := range r.Files {
		for _, fn := range f.Funcs {
			funcs[filepath.Base(f.Name)+" "+fn.Name] = fn
		}
	}
	sync := funcs["job_controller.go Controller.syncJob"]
	if sync.Reached == 0 || sync.Reached == sync.Statements {
		t.Errorf("syncJob: %d of %d statements reached, want some and not all", sync.Reached, sync.Statements)
	}
	if m := funcs["pod_failure_policy.go matchPodFailurePolicy"]; m.Statements == 0 || m.Reached > 1 {
		t.Errorf("matchPodFailurePolicy: %d of %d reached by Jobs without a pod failure policy", m.Reached, m.Statements)
	}
	if r.Reached == 0 || len(r.Unreached) == 0 || r.Statements < 1000 {
		t.Errorf("coverage: %s, %d blocks unreached", r.Line(), len(r.Unreached))
	}
	html, err := os.ReadFile(filepath.Join(cov, coverage.HTMLFile))
	if err != nil || !strings.Contains(string(html), "job_controller.go") {
		t.Errorf("coverage.html: %v (%d bytes)", err, len(html))
	}
}

// The coverage table of docs/explore.md is what the measurements kept in
// docs/coverage say (issue #69: a claim backed by a check): regenerate it
// with jobconform coverage table docs/coverage/v1.37.1/{unit,catalog,explore}.json.
func TestCoverageTableInDocs(t *testing.T) {
	var rs []*coverage.Report
	for _, name := range []string{"unit", "catalog", "explore"} {
		r, err := coverage.Load(filepath.Join("..", "..", "docs", "coverage", "v1.37.1", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	var b strings.Builder
	if err := coverage.Table(&b, rs...); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "explore.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), b.String()) {
		t.Errorf("docs/explore.md lacks the table the kept measurements give:\n%s", b.String())
	}
}

// docs/coverage/v1.37.1/explore-misses.md lists every function where
// explore left statements that upstream's unit tests or the catalog
// reach, with the count and why (issue #69): held to the measurements.
func TestExploreMissesListed(t *testing.T) {
	load := func(name string) *coverage.Report {
		r, err := coverage.Load(filepath.Join("..", "..", "docs", "coverage", "v1.37.1", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	unit, catalog, explored := load("unit"), load("catalog"), load("explore")
	want := map[string]int{}
	for _, b := range explored.Unreached {
		if unit.Blocks[b.Key()].Reached || catalog.Blocks[b.Key()].Reached {
			want[b.Func] += b.Statements
		}
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "coverage", "v1.37.1", "explore-misses.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| [^|]+ \\| ([0-9]+) \\| [^|]+ \\| ([^|]*) \\|$")
	got := map[string]int{}
	for _, m := range row.FindAllStringSubmatch(string(data), -1) {
		n, _ := strconv.Atoi(m[2])
		got[m[1]] = n
		if strings.TrimSpace(m[3]) == "" {
			t.Errorf("%s: no reason given", m[1])
		}
	}
	for f, n := range want {
		if got[f] != n {
			t.Errorf("%s: explore misses %d statements the others reach; the table says %d", f, n, got[f])
		}
	}
	for f := range got {
		if _, ok := want[f]; !ok {
			t.Errorf("%s: listed, but explore misses nothing there that the others reach", f)
		}
	}
}
