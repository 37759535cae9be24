package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/reports"
)

// In a GitHub job, failures are annotations (escaped as GitHub's toolkit
// escapes them), a suite's output a folded group, and summary.md joins
// the job's summary page; elsewhere none of it is written.
func TestGitHubActions(t *testing.T) {
	runs := []reports.Run{{Spec: "conformance [reference] a", Version: "v1.37.1", SpecVerdict: "FAIL", Failures: []string{"step 2: 50% done, not reached\nmore"}}}
	var b strings.Builder
	t.Setenv("GITHUB_ACTIONS", "")
	ghAnnotateFailures(&b, runs)
	ghGroup(&b, "x")()
	if b.Len() != 0 {
		t.Fatalf("annotations outside GitHub Actions: %q", b.String())
	}
	t.Setenv("GITHUB_ACTIONS", "true")
	ghGroup(&b, "[front 1/2] conformance")()
	ghAnnotateFailures(&b, runs)
	want := "::group::[front 1/2] conformance\n::endgroup::\n::error title=conformance [reference] a (Kubernetes v1.37.1)::step 2: 50%25 done, not reached\n"
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
	b.Reset()
	ghError(&b, "a,b:c.yaml", 3, "t", "m")
	if b.String() != "::error file=a%2Cb%3Ac.yaml,line=3,title=t::m\n" {
		t.Errorf("properties not escaped: %q", b.String())
	}
	dir := t.TempDir()
	page, summary := filepath.Join(dir, "page.md"), filepath.Join(dir, "summary.md")
	if err := os.WriteFile(summary, []byte("## jobconform\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GITHUB_STEP_SUMMARY", page)
	for range 2 {
		if err := ghStepSummary(summary); err != nil {
			t.Fatal(err)
		}
	}
	if data, _ := os.ReadFile(page); string(data) != "## jobconform\n\n## jobconform\n\n" {
		t.Errorf("the job's summary page: %q", data)
	}
}

// validate -o github annotates each file that is wrong; -o json lists all.
func TestValidateOutputs(t *testing.T) {
	bin := buildJobconform(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: bad\nstepz: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := exitCode(t, exec.Command(bin, "validate", "-o", "github", bad))
	if code != 2 || !strings.Contains(out, "::error file="+bad+",title=not a valid jobconform scenario::unknown field") {
		t.Errorf("validate -o github: exit %d\n%s", code, out)
	}
	cmd := exec.Command(bin, "validate", "-o", "json", bad)
	js, err := cmd.Output()
	if !strings.Contains(string(js), `"error": "unknown field`) || err == nil {
		t.Errorf("validate -o json: %v\n%s", err, js)
	}
}
