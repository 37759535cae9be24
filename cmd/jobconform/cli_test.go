package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"
)

// buildJobconform compiles this command into a fresh directory.
func buildJobconform(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "jobconform")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// cleanEnv is the environment without the JOBCONFORM_* settings of the
// developer's shell or the Makefile (the cache directory aside), so that
// only what a test gives decides.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "JOBCONFORM_") && !strings.HasPrefix(kv, "JOBCONFORM_CACHE_DIR=") || strings.HasPrefix(kv, "ARTIFACTS=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// exitCode runs cmd and returns its combined output and exit code.
func exitCode(t *testing.T, cmd *exec.Cmd) (string, int) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("%s: %v\n%s", cmd, err, out)
	return "", -1
}

// jobconform validate prints one clear error per broken file and exits 2.
func TestValidateBrokenFiles(t *testing.T) {
	bin := buildJobconform(t)
	dir := t.TempDir()
	files := map[string]struct{ doc, want string }{
		"wrong-field.yaml":     {"name: a\nfeatures: [suspend]\nsteps: [{await: {active: 1}}]\nbogus: 1\n", `unknown field "bogus"`},
		"wrong-type.yaml":      {"name: b\nfeatures: [suspend]\nsteps: [{await: {active: one}}]\n", "field steps.await.active: got a string, want a value of type int32"},
		"unknown-feature.yaml": {"name: c\nfeatures: [teleport]\nsteps: [{await: {active: 1}}]\n", `features: "teleport" is not one of [podReplacementPolicy`},
		"bad-duration.yaml":    {"name: d\nfeatures: [suspend]\ntimeout: soon\nsteps: [{await: {active: 1}}]\n", `duration "soon": write it like 5s or 1m30s`},
		"empty-steps.yaml":     {"name: e\nfeatures: [suspend]\nsteps: []\n", "steps: give at least one await"},
		"good.yaml":            {"name: f\nfeatures: [suspend]\nsteps: [{await: {active: 1}}]\n", "ok: f (conformance)"},
	}
	var args []string
	for name, f := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(f.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, path)
	}
	out, code := exitCode(t, exec.Command(bin, append([]string{"validate"}, args...)...))
	if code != 2 {
		t.Errorf("exit code %d, want 2\n%s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for name, f := range files {
		var mine []string
		for _, l := range lines {
			if strings.HasPrefix(l, filepath.Join(dir, name)+": ") {
				mine = append(mine, l)
			}
		}
		if len(mine) != 1 || !strings.Contains(mine[0], f.want) {
			t.Errorf("%s: lines %q, want one holding %q", name, mine, f.want)
		}
	}
	if !strings.Contains(out, "5 of 6 files are not valid scenarios") {
		t.Errorf("no summary line:\n%s", out)
	}
	if out, code := exitCode(t, exec.Command(bin, "validate", filepath.Join(dir, "good.yaml"))); code != 0 {
		t.Errorf("a valid file: exit code %d\n%s", code, out)
	}
}

// jobconform run refuses bad input before it starts anything: exit 2, a
// message that says what to do, and no artifacts written.
func TestRunRefusesBadInput(t *testing.T) {
	bin := buildJobconform(t)
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	unreachable := filepath.Join(dir, "unreachable.kubeconfig")
	kc := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n" +
		"contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {token: x}}]\n"
	if err := os.WriteFile(unreachable, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
		env  []string
	}{
		{"unknown controller", []string{"--controllers", "builtin,mine"}, `unknown controller "mine" (use builtin, reference, dispatcher, multikueue, external)`, nil},
		{"unknown provider", []string{"--provider", "minikube"}, `--provider "minikube": use one of existing, kind, local`, nil},
		{"not a release", []string{"--k8s-version", "1.37"}, "not a release like v1.37.1", nil},
		{"unknown suite", []string{"--suites", "soak"}, `unknown suite "soak"`, nil},
		{"external without name", []string{"--controllers", "external"}, "give --external-managed-by", nil},
		{"no scenarios in directory", []string{"--scenarios", empty}, "holds no scenario", nil},
		{"missing directory", []string{"--scenarios", filepath.Join(dir, "nope")}, "no such file or directory", nil},
		{"filter selects nothing", []string{"--label-filter", "teleport"}, "the filters select no scenario", nil},
		{"bad label filter", []string{"--label-filter", "a &&"}, "--label-filter", nil},
		// Ginkgo matches the suite's description first: this selects nothing there.
		{"focus anchored at the container", []string{"--focus", `^conformance \[builtin\]`}, "the filters select no scenario", nil},
		{"unreachable kubeconfig", []string{"--kubeconfig", unreachable}, "unreachable", nil},
		{"unknown node kind", []string{"--nodes", "vm"}, `--nodes "vm": use kwok or kubelet`, nil},
		{"kubelet nodes on an existing cluster", []string{"--nodes", "kubelet", "--kubeconfig", unreachable}, "--nodes kubelet is a setting of the local provider", nil},
		{"unknown flag", []string{"--colour"}, "flag provided but not defined: -colour (jobconform run -h lists the flags)", nil},
		{"scenarios from the environment", nil, "holds no scenario", []string{"JOBCONFORM_SCENARIOS=" + empty}},
		{"baseline without reports", []string{"--baseline", empty}, "--baseline: no report-*.json under", nil},
		{"baseline missing", []string{"--baseline", filepath.Join(dir, "nope")}, "--baseline: stat", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			artifacts := filepath.Join(t.TempDir(), "artifacts")
			cmd := exec.Command(bin, append([]string{"run", "--artifacts", artifacts}, c.args...)...)
			cmd.Env = cleanEnv(c.env...)
			out, code := exitCode(t, cmd)
			if code != 2 || !strings.Contains(out, c.want) {
				t.Errorf("exit code %d, output:\n%s\nwant exit code 2 and %q", code, out, c.want)
			}
			if n := strings.Count(out, "flag provided but not defined"); c.name == "unknown flag" && n != 1 {
				t.Errorf("a bad flag said %d times:\n%s", n, out) // once: not the flag package's and then ours
			}
			if _, err := os.Stat(artifacts); !os.IsNotExist(err) {
				t.Errorf("bad input wrote %s", artifacts)
			}
		})
	}
}

// An external controller whose command ends at once is bad input (exit 2),
// shown with the last lines it logged.
func TestRunExternalCommandThatExitsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real cluster")
	}
	bin := buildJobconform(t)
	cmd := exec.Command(bin, "run", "--suites", "conformance", "--focus", "prp-failed-sigterm",
		"--controllers", "external", "--external-managed-by", "example.com/broken",
		"--external-command", "echo my-controller starting; echo 'unknown flag --kubecfg' >&2; exit 3",
		"--artifacts", t.TempDir())
	cmd.Dir, cmd.Env = t.TempDir(), cleanEnv()
	out, code := exitCode(t, cmd)
	if code != 2 {
		t.Errorf("exit code %d, want 2", code)
	}
	for _, want := range []string{"the external controller's command exited at once", "unknown flag --kubecfg"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// readmeBlocks returns the fenced blocks of README.md that follow a
// "<!-- readme-test:KIND ARG -->" marker, by KIND and ARG.
func readmeBlocks(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)<!-- readme-test:([^>]*?) -->\n```[a-z]*\n(.*?)```")
	out := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(string(data), -1) {
		out[m[1]] = m[2]
	}
	if len(out) < 3 {
		t.Fatalf("README.md: %d readme-test blocks, want the scenario file, the commands and the workflow", len(out))
	}
	return out
}

// copyCheckout copies the files git knows of (committed or not, not ignored)
// into dst: a checkout to install from and then delete.
func copyCheckout(t *testing.T, dst string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	list, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestREADMEExample runs the README's worked example exactly: jobconform
// installed with go install from a copy of the checkout that is then
// deleted, run in an empty directory holding only the README's scenario
// file, against the reference controller under the README's managedBy name.
func TestREADMEExample(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real cluster")
	}
	blocks := readmeBlocks(t)
	commands, workflow := blocks["commands"], blocks["workflow"]
	if commands == "" || workflow == "" {
		t.Fatalf("README.md lacks the readme-test:commands or readme-test:workflow block")
	}

	tmp := t.TempDir()
	src, gobin, work := filepath.Join(tmp, "checkout"), filepath.Join(tmp, "bin"), filepath.Join(tmp, "work")
	copyCheckout(t, src)
	install := exec.Command("go", "install", "./cmd/jobconform")
	install.Dir, install.Env = src, cleanEnv("GOBIN="+gobin)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	if err := os.RemoveAll(src); err != nil {
		t.Fatal(err)
	}
	for kind, body := range blocks {
		if name, ok := strings.CutPrefix(kind, "file "); ok {
			if err := os.MkdirAll(filepath.Join(work, filepath.Dir(name)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(work, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", commands)
	cmd.Dir = work
	cmd.Env = cleanEnv("PATH=" + gobin + string(os.PathListSeparator) + os.Getenv("PATH"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("README commands:\n%s\noutput (tail):\n%s", commands, tail25(out.String()))
	if err != nil {
		t.Fatalf("the README's commands failed: %v", err)
	}
	if want := "report: " + filepath.Join(work, "jobconform-report", "report.html"); !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q", want)
	}
	for _, f := range []string{"report.html", "summary.md", "v1.37.1/report.json", "v1.37.1/junit-conformance.xml"} {
		if _, err := os.Stat(filepath.Join(work, "jobconform-report", f)); err != nil {
			t.Errorf("the run wrote no %s: %v", f, err)
		}
	}

	// The Ginkgo report: the user's scenario and jobconform's own ran against
	// the controller under the README's name, and passed.
	data, err := os.ReadFile(filepath.Join(work, "jobconform-report", "v1.37.1", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var suites []types.Report
	if err := json.Unmarshal(data, &suites); err != nil {
		t.Fatal(err)
	}
	passed, sawUsers := 0, false
	for _, r := range suites {
		for _, sr := range r.SpecReports {
			if sr.LeafNodeType != types.NodeTypeIt || sr.State != types.SpecStatePassed {
				continue
			}
			if !strings.HasPrefix(sr.LeafNodeText, "[example.com/my-controller] ") {
				t.Errorf("spec %q is not for the README's controller", sr.LeafNodeText)
			}
			passed++
			sawUsers = sawUsers || sr.LeafNodeText == "[example.com/my-controller] my-replacement-waits-for-sigterm"
		}
	}
	if !sawUsers || passed < 10 {
		t.Errorf("%d specs passed (the user's scenario among them: %v); want the user's and jobconform's podReplacementPolicy scenarios", passed, sawUsers)
	}

	// Nothing of the run is left: no process runs the installed binary (the
	// reference controller, suite processes).
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		return len(processesUsing(gobin)) == 0, nil
	})
	if err != nil {
		t.Errorf("processes left: %v", processesUsing(gobin))
	}

	// The CI workflow runs the same command with the same artifacts directory
	// and uploads it.
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Run  string         `json:"run"`
				With map[string]any `json:"with"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(workflow), &wf); err != nil {
		t.Fatalf("the README's workflow is not YAML: %v", err)
	}
	var runs, uploads []string
	for _, j := range wf.Jobs {
		for _, s := range j.Steps {
			if strings.HasPrefix(s.Run, "jobconform ") {
				runs = append(runs, s.Run)
			}
			if p, ok := s.With["path"].(string); ok && p == "jobconform-report" {
				uploads = append(uploads, p)
			}
		}
	}
	if len(runs) != 2 || !strings.HasPrefix(runs[0], "jobconform validate scenarios") || !strings.Contains(runs[1], "--scenarios scenarios --artifacts jobconform-report") || len(uploads) != 1 {
		t.Errorf("the workflow's jobconform steps %q and uploads %q do not match the example", runs, uploads)
	}
}

func tail25(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 25 {
		lines = lines[len(lines)-25:]
	}
	return strings.Join(lines, "\n")
}

// processesUsing lists the processes whose command line mentions dir.
func processesUsing(dir string) []string {
	var out []string
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, c := range cmdlines {
		data, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		line := strings.ReplaceAll(string(data), "\x00", " ")
		if strings.Contains(line, dir) {
			out = append(out, fmt.Sprintf("%s: %s", filepath.Base(filepath.Dir(c)), line))
		}
	}
	return out
}

// Both suites in one run land in one Ginkgo JSON report (each suite's
// report is merged, none overwrites the other), with the user's chaos
// scenario in the chaos suite.
func TestRunBothSuitesOneReport(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real clusters")
	}
	bin := buildJobconform(t)
	dir := t.TempDir()
	scen := filepath.Join(dir, "scenarios")
	if err := os.Mkdir(scen, 0o755); err != nil {
		t.Fatal(err)
	}
	docs := "name: mine-completes\nfeatures: [terminalConditions]\njob: {parallelism: 1, completions: 1}\npods: {run: 2s}\n" +
		"steps:\n- await: {succeeded: 1, conditions: [Complete]}\n" +
		"---\nname: mine-survives-a-controller-restart\nfeatures: [terminalConditions]\njob: {parallelism: 1, completions: 1}\npods: {run: 6s}\n" +
		"steps:\n- await: {active: 1}\n- chaos: {controllerRestart: {}}\n- await: {succeeded: 1, conditions: [Complete]}\n"
	if err := os.WriteFile(filepath.Join(scen, "mine.yaml"), []byte(docs), 0o644); err != nil {
		t.Fatal(err)
	}
	artifacts := filepath.Join(dir, "out")
	cmd := exec.Command(bin, "run", "--builtin-scenarios=false", "--scenarios", "scenarios", "--controllers", "reference",
		"--procs", "2", "--artifacts", artifacts)
	cmd.Dir, cmd.Env = dir, cleanEnv()
	out, code := exitCode(t, cmd)
	if code != 0 {
		t.Fatalf("exit code %d:\n%s", code, tail25(out))
	}
	data, err := os.ReadFile(filepath.Join(artifacts, "v1.37.1", "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var suites []types.Report
	if err := json.Unmarshal(data, &suites); err != nil {
		t.Fatal(err)
	}
	passed := map[string]string{}
	for _, r := range suites {
		for _, sr := range r.SpecReports {
			if sr.LeafNodeType == types.NodeTypeIt && sr.State == types.SpecStatePassed {
				passed[sr.LeafNodeText] = r.SuiteDescription
			}
		}
	}
	want := map[string]string{
		"[reference] mine-completes":                     "jobconform conformance",
		"[reference] mine-survives-a-controller-restart": "jobconform chaos",
	}
	for spec, suite := range want {
		if passed[spec] != suite {
			t.Errorf("%s: passed in %q, want %q (passed: %v)", spec, passed[spec], suite, passed)
		}
	}
	for _, line := range []string{"v1.37.1      jobconform chaos", "v1.37.1      jobconform conformance"} {
		if !strings.Contains(out, line) {
			t.Errorf("the verdict table lacks a row %q:\n%s", line, tail25(out))
		}
	}
}

// jobconform list shows what jobconform run would run with the same flags:
// each suite run and its specs (controller, scenario, features, releases,
// file), filters and shards applied as run applies them (issue #71).
func TestList(t *testing.T) {
	bin := buildJobconform(t)
	dir := t.TempDir()
	doc := "name: mine\nfeatures: [suspend, deadline]\nversions: '>=1.32.0'\nsteps: [{await: {active: 1}}]\n"
	if err := os.WriteFile(filepath.Join(dir, "mine.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	list := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"list"}, args...)...)
		cmd.Env = cleanEnv()
		out, code := exitCode(t, cmd)
		if code != 0 {
			t.Fatalf("list %v: exit code %d\n%s", args, code, out)
		}
		return out
	}
	out := list("--scenarios", dir)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^conformance suite at v1.37.1 on kwok nodes \(builtin, reference\): [0-9]+ specs$`),
		regexp.MustCompile(`(?m)^  builtin +prp-failed-sigterm +podReplacementPolicy,backoff +all +pod-replacement-policy.yaml$`),
		regexp.MustCompile(`(?m)^  reference +mine +suspend,deadline +>=1.32.0 +` + regexp.QuoteMeta(filepath.Join(dir, "mine.yaml")) + `$`),
		regexp.MustCompile(`(?m)^chaos suite at v1.37.1 on kwok nodes \(builtin, reference\): [0-9]+ specs$`),
		regexp.MustCompile(`(?m)^  builtin +seeded-soak `),
		regexp.MustCompile(`(?m)^[0-9]+ suite runs, [0-9]+ specs`),
	} {
		if !want.MatchString(out) {
			t.Errorf("list output lacks %s:\n%s", want, out)
		}
	}
	// The selection flags of run select here too, and -o json says the same.
	var runs []listedRun
	if err := json.Unmarshal([]byte(list("--suites", "conformance", "--controllers", "reference", "--label-filter", "suspend && deadline", "--scenarios", dir, "-o", "json")), &runs); err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Suite != "conformance" || len(runs[0].Specs) == 0 {
		t.Fatalf("list -o json: %+v", runs)
	}
	mine := false
	for _, s := range runs[0].Specs {
		mine = mine || s.Scenario == "mine"
		if s.Controller != "reference" || !slices.Contains(s.Features, "suspend") || !slices.Contains(s.Features, "deadline") {
			t.Errorf("a spec the filters do not select: %+v", s)
		}
	}
	if !mine {
		t.Errorf("the user's scenario not listed: %+v", runs[0].Specs)
	}
	specs := func(out string) int {
		m := regexp.MustCompile(`(?m)^[0-9]+ suite runs, ([0-9]+) specs`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no totals:\n%s", out)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	whole := specs(list("--suites", "conformance"))
	if halves := specs(list("--suites", "conformance", "--shard", "1/2")) + specs(list("--suites", "conformance", "--shard", "2/2")); halves != whole {
		t.Errorf("two shards list %d specs, the whole %d", halves, whole)
	}
	if out, code := exitCode(t, exec.Command(bin, "list", "--scenarios", dir, "--scenarios", dir)); code != 2 || !strings.Contains(out, `scenario name "mine" is also used in`) {
		t.Errorf("one directory twice: exit code %d\n%s", code, out)
	}
}

// report diff compares two runs' artifacts and exits 1 when something
// newly fails, naming it; a baseline without reports is a clear error.
func TestReportDiff(t *testing.T) {
	bin := buildJobconform(t)
	spec := func(leaf string, state types.SpecState, failures ...string) types.SpecReport {
		res, _ := json.Marshal(map[string]any{"scenario": leaf, "controller": "reference", "version": "v1.37.1", "failures": failures})
		return types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: "[reference] " + leaf, State: state, RunTime: 10 * time.Second,
			ReportEntries: types.ReportEntries{{Name: "jobconform.result", Value: types.WrapEntryValue(string(res))}}}
	}
	write := func(specs ...types.SpecReport) string {
		dir := t.TempDir()
		data, _ := json.Marshal([]types.Report{{SuiteDescription: "jobconform conformance", SpecReports: specs}})
		if err := os.MkdirAll(filepath.Join(dir, "v1.37.1"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "v1.37.1", "report-conformance.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	old := write(spec("a", types.SpecStatePassed), spec("b", types.SpecStatePassed))
	cur := write(spec("a", types.SpecStateFailed, "step 1 (await active=1): not reached"), spec("b", types.SpecStatePassed))
	out, code := exitCode(t, exec.Command(bin, "report", "diff", old, cur))
	if code != 1 || !strings.Contains(out, "1 newly failing") || !strings.Contains(out, "jobconform conformance: a** (was PASS): step 1") {
		t.Errorf("a newly failing spec: exit %d\n%s", code, out)
	}
	if out, code := exitCode(t, exec.Command(bin, "report", "diff", old, old)); code != 0 || !strings.Contains(out, "0 newly failing") {
		t.Errorf("a run compared with itself: exit %d\n%s", code, out)
	}
	if out, code := exitCode(t, exec.Command(bin, "report", "diff", t.TempDir(), cur)); code == 0 || !strings.Contains(out, "no report-*.json under") {
		t.Errorf("a baseline without reports: exit %d\n%s", code, out)
	}
}

// A baseline that holds this run's artifacts would be overwritten by it.
func TestBaselineNotTheArtifacts(t *testing.T) {
	dir := t.TempDir()
	for _, art := range []string{dir, filepath.Join(dir, "run")} {
		if _, err := readBaseline(dir, art); err == nil || !strings.Contains(err.Error(), "holds this run's artifacts") {
			t.Errorf("--baseline %s --artifacts %s: %v", dir, art, err)
		}
	}
}
