package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/internal/release"
	"sigs.k8s.io/yaml"
)

// action is the part of action.yml a workflow runs.
type action struct {
	Inputs map[string]struct {
		Default string `json:"default"`
	} `json:"inputs"`
	Runs struct {
		Using string `json:"using"`
		Steps []struct {
			Name  string `json:"name"`
			Uses  string `json:"uses"`
			Shell string `json:"shell"`
			Run   string `json:"run"`
		} `json:"steps"`
	} `json:"runs"`
}

var expression = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// TestActionSteps runs action.yml's shell steps as a GitHub workflow does
// (issue #71): its expressions replaced by what the runner gives them, in a
// workspace of their own, with GITHUB_ACTIONS, GITHUB_PATH and
// GITHUB_STEP_SUMMARY set; the steps that use GitHub's own actions (Go's
// set-up, the cache, the upload) are GitHub's, not run here. The install
// step must build jobconform stamped with the ref, the run step judge a
// scenario on a local cluster and write the job summary and the reports.
func TestActionSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds jobconform and starts a real cluster")
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using %q, want composite", a.Runs.Using)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	work, tmp := t.TempDir(), t.TempDir()
	scen := filepath.Join(work, "scenarios")
	if err := os.Mkdir(scen, 0o755); err != nil {
		t.Fatal(err)
	}
	doc := "name: action-completes\nfeatures: [terminalConditions]\njob: {parallelism: 1, completions: 1}\npods: {run: 1s}\n" +
		"steps:\n- await: {succeeded: 1, conditions: [Complete]}\n"
	if err := os.WriteFile(filepath.Join(scen, "action.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	values := map[string]string{
		"github.action_path": root,
		"github.action_ref":  "v0.0.0-action-test",
		"inputs.args":        "--suites conformance --controllers builtin --builtin-scenarios=false --scenarios scenarios --procs 2",
	}
	for name, in := range a.Inputs {
		if _, ok := values["inputs."+name]; !ok {
			values["inputs."+name] = in.Default
		}
	}
	pathFile, summary := filepath.Join(tmp, "path"), filepath.Join(tmp, "summary.md")
	var path []string
	ran := 0
	for _, st := range a.Runs.Steps {
		if st.Uses != "" {
			t.Logf("step %s: GitHub's own, not run here", st.Uses)
			continue
		}
		if st.Shell != "bash" {
			t.Fatalf("step %q: shell %q, want bash", st.Name, st.Shell)
		}
		script := expression.ReplaceAllStringFunc(st.Run, func(e string) string {
			v, ok := values[expression.FindStringSubmatch(e)[1]]
			if !ok {
				t.Fatalf("step %q: the expression %s is not one a runner gives here", st.Name, e)
			}
			return v
		})
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
		cmd.Dir = work
		env := append(cleanEnv(), "GITHUB_ACTIONS=true", "GITHUB_PATH="+pathFile, "GITHUB_STEP_SUMMARY="+summary,
			"RUNNER_TEMP="+tmp, "GITHUB_WORKSPACE="+work)
		if len(path) > 0 {
			env = append(env, "PATH="+strings.Join(path, ":")+":"+os.Getenv("PATH"))
		}
		cmd.Env = env
		out, code := exitCode(t, cmd)
		if code != 0 {
			t.Fatalf("step %q exited %d:\n%s", st.Name, code, tail25(out))
		}
		ran++
		if data, err := os.ReadFile(pathFile); err == nil {
			path = strings.Fields(string(data))
		}
		if st.Name == "Install jobconform" && !strings.Contains(out, "jobconform v0.0.0-action-test") {
			t.Errorf("the installed jobconform does not say the ref it was built from:\n%s", tail25(out))
		}
	}
	if ran != 2 {
		t.Fatalf("%d shell steps ran, want the install and the run", ran)
	}
	page, err := os.ReadFile(summary)
	if err != nil || !strings.Contains(string(page), "| builtin @ "+release.Default+" | 1 | 0 |") || !strings.Contains(string(page), "jobconform v0.0.0-action-test") ||
		strings.Contains(string(page), "unknown") {
		t.Errorf("the job summary (%v) does not give the one spec passed, judged by the jobconform built from the ref:\n%s", err, page)
	}
	for _, f := range []string{"summary.md", "report.html"} {
		if _, err := os.Stat(filepath.Join(work, values["inputs.artifacts"], f)); err != nil {
			t.Errorf("reports: %v", err)
		}
	}
}
