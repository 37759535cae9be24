package catalog

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/scenarios/invariants"
)

// coverageVersion is the upstream release docs/coverage.md maps.
const coverageVersion = "v1.37.1"

// coverageFiles are the upstream test files docs/coverage.md maps, and how
// each names its tests.
var coverageFiles = map[string]*regexp.Regexp{
	"test/integration/job/job_test.go":          regexp.MustCompile(`(?m)^func (Test\w+)\(`),
	"pkg/controller/job/job_controller_test.go": regexp.MustCompile(`(?m)^func (Test\w+)\(`),
	"test/e2e/apps/job.go":                      regexp.MustCompile(`(?:ginkgo\.It|f\.It|framework\.ConformanceIt)\("([^"]+)"`),
}

// TestCoverageMap: every scenario, drill or invariant docs/coverage.md names
// exists, every row has a status, and — when upstream's source is in the
// module cache — every upstream test of the three files has its row.
func TestCoverageMap(t *testing.T) {
	doc, err := os.ReadFile("../../docs/coverage.md")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	conf, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	chaos, err := LoadChaos()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(conf, chaos...) {
		known[s.Name] = true
	}
	drills, _, err := LoadDrills()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range drills {
		known[d.Name] = true
	}
	for _, inv := range invariants.All {
		known[inv.Name] = true
	}
	rows := map[string]bool{}
	name := regexp.MustCompile("`([^`]+)`")
	statuses := map[string]int{}
	for _, line := range strings.Split(string(doc), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 6 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "upstream test" {
			continue
		}
		test, status, by := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2]), cells[3]
		rows[test] = true
		statuses[status]++
		switch status {
		case "covered", "partly":
			if !name.MatchString(by) {
				t.Errorf("%s is %s but names no check", test, status)
			}
		case "n/a", "not yet":
			if strings.TrimSpace(cells[4]) == "" {
				t.Errorf("%s is %s: the note must say why", test, status)
			}
		default:
			t.Errorf("%s: status %q is not covered, partly, n/a or not yet", test, status)
		}
		for _, m := range name.FindAllStringSubmatch(by, -1) {
			if !known[m[1]] {
				t.Errorf("%s: %q is no scenario, drill or invariant", test, m[1])
			}
		}
	}
	if len(rows) < 100 {
		t.Errorf("docs/coverage.md maps %d upstream tests, want every one of the three files (107 at %s)", len(rows), coverageVersion)
	}
	t.Logf("upstream tests mapped: %v", statuses)
	// The page's tally is the rows' own.
	tally := fmt.Sprintf("**Tally: %d covered, %d partly, %d not yet, %d n/a** (of %d upstream tests)",
		statuses["covered"], statuses["partly"], statuses["not yet"], statuses["n/a"], len(rows))
	if !strings.Contains(string(doc), tally) {
		t.Errorf("docs/coverage.md must state the rows' tally: %s", tally)
	}

	dir := upstreamSource()
	if dir == "" {
		t.Logf("k8s.io/kubernetes@%s is not in the module cache: the map is not compared with upstream's files", coverageVersion)
		return
	}
	compared := 0
	for file, re := range coverageFiles {
		src, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		tests := re.FindAllStringSubmatch(string(src), -1)
		if len(tests) == 0 {
			t.Errorf("%s: no test found; has upstream changed how it names them?", file)
		}
		compared += len(tests)
		for _, m := range tests {
			if !rows[m[1]] {
				t.Errorf("%s: upstream test %q has no row in docs/coverage.md", file, m[1])
			}
		}
	}
	t.Logf("compared with the %d tests of upstream's %s", compared, coverageVersion)
}

// upstreamSource is k8s.io/kubernetes@coverageVersion in the module cache, or "".
func upstreamSource() string {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return ""
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "k8s.io", "kubernetes@"+coverageVersion)
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}

// TestDifferAllowancesDocumented: docs/oracle.md names every scenario that
// lets a field differ from the built-in's run, and no other.
func TestDifferAllowancesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/oracle.md")
	if err != nil {
		t.Fatal(err)
	}
	all, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	chaos, err := LoadChaos()
	if err != nil {
		t.Fatal(err)
	}
	explored, err := LoadExplored()
	if err != nil {
		t.Fatal(err)
	}
	all = append(append(all, chaos...), explored...)
	for form := range ScaleForms {
		scale, err := LoadScale(form)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, scale...)
	}
	_, para, _ := strings.Cut(string(doc), "reason is required). ")
	para, _, _ = strings.Cut(para, "\n\n")
	para, _, _ = strings.Cut(para, "One allowance is derived") // the list ends there
	for _, s := range all {
		named := strings.Contains(para, "`"+s.Name+"`")
		if allows := len(s.Oracle.Differ)+len(s.Oracle.MayLose) > 0; allows != named {
			t.Errorf("scenario %s: lets fields differ %v, named in docs/oracle.md's list %v", s.Name, allows, named)
		}
	}
}
