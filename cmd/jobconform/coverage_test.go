package main

import (
	"os"
	"os/exec"
	"path/filepath"
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
