package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/scenarios/catalog"
)

// clusterPackages are exactly the packages (the suites' aside, which make
// test runs with -short) whose tests skip under -short: a package that
// starts clusters and is missing from the list would run beside others, one
// listed that starts none would wait its turn for nothing.
func TestClusterPackagesListed(t *testing.T) {
	root := filepath.Join("..", "..")
	var found []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "_artifacts") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		if strings.Contains(string(data), "testing.Short()") && !slices.Contains(found, rel) {
			found = append(found, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"suites/conformance", "suites/chaos", "suites/drill", "suites/scale"} {
		found = slices.DeleteFunc(found, func(p string) bool { return p == s })
	}
	slices.Sort(found)
	want := slices.Sorted(maps.Keys(clusterPackages))
	if !slices.Equal(found, want) {
		t.Errorf("packages whose tests skip under -short: %v; clusterPackages: %v", found, want)
	}
}

// The cluster packages go into lanes of about equal time, every package
// once, the longest alone at the head of its lane.
func TestLanes(t *testing.T) {
	var pkgs []string
	for p := range clusterPackages {
		pkgs = append(pkgs, module+"/"+p)
	}
	got := lanes(pkgs, 2)
	if len(got) != 2 {
		t.Fatalf("lanes %v", got)
	}
	var all []string
	var times []time.Duration
	for _, l := range got {
		all = append(all, l...)
		var sum time.Duration
		for _, p := range l {
			sum += clusterPackages[strings.TrimPrefix(p, module+"/")]
		}
		times = append(times, sum)
	}
	slices.Sort(all)
	slices.Sort(pkgs)
	if !slices.Equal(all, pkgs) {
		t.Errorf("the lanes hold %v, want each of %v once", all, pkgs)
	}
	if d := times[0] - times[1]; d > 2*time.Minute || d < -2*time.Minute {
		t.Errorf("lanes of %v and %v: more than two minutes apart", times[0], times[1])
	}
	if one := lanes(pkgs[:1], 2); len(one) != 1 {
		t.Errorf("one package in %d lanes", len(one))
	}
}

// make test's plan: the chaos suite beside the conformance suites, after
// the drills; kubelet nodes and the scale suite in front.
func TestChaosBesideDrills(t *testing.T) {
	o := options.Defaults()
	o.Run.Artifacts = "/a"
	o.Run.Versions = []string{"v1.37.1"}
	o.Run.Suites = []string{"conformance", "chaos", "drill", "scale"}
	o.Run.KubeletConformance = true
	o.Controllers = []string{"builtin", "reference"}
	p := &plan{o: o, jobs: planJobs(o, map[string]int{"conformance": 1, "chaos": 1, "drill": 1, "scale": 1})}
	p.chaosBesideDrills()
	var front, beside []string
	for _, j := range p.jobs {
		name := j.suite + "/" + orDefault(j.o.Nodes, "kwok")
		if j.beside {
			beside = append(beside, name)
		} else {
			front = append(front, name)
		}
	}
	if want := []string{"drill/kwok", "chaos/kwok"}; !slices.Equal(beside, want) {
		t.Errorf("beside: %v, want %v", beside, want)
	}
	if want := []string{"conformance/kwok", "scale/kwok", "conformance/kubelet"}; !slices.Equal(front, want) {
		t.Errorf("front: %v, want %v", front, want)
	}
}

// make test's short explore: the conformance suite on explore's fixed
// cases alone, last beside (after the chaos suite), the built-in twice,
// without the dispatcher; its cases written where its reports go.
func TestExploreSample(t *testing.T) {
	o := options.Defaults()
	o.Run.Artifacts = t.TempDir()
	o.Run.Versions = []string{"v1.37.1"}
	o.Run.Suites = []string{"conformance", "chaos", "drill", "scale"}
	o.Run.KubeletConformance = true
	o.Controllers = []string{"builtin", "reference", "dispatcher"}
	p := &plan{o: o, jobs: planJobs(o, map[string]int{"conformance": 1, "chaos": 1, "drill": 1, "scale": 1}), specs: map[string]int{}}
	p.chaosBesideDrills()
	if err := p.addExploreSample(); err != nil {
		t.Fatal(err)
	}
	ex := p.jobs[len(p.jobs)-1]
	cases := filepath.Join(o.Run.Artifacts, "explore-v1.37.1", "cases")
	if ex.suite != "conformance" || !ex.beside || ex.o.BuiltinScenarios || !ex.o.Oracle.Twice || !slices.Equal(ex.o.ScenarioDirs, []string{cases}) || !slices.Equal(ex.o.Controllers, []string{"builtin", "reference"}) || ex.o.Nodes != "" {
		t.Fatalf("explore job: %+v", ex)
	}
	files, _ := filepath.Glob(filepath.Join(cases, "*.yaml"))
	if len(files) != exploreCases {
		t.Errorf("%d cases written, want %d", len(files), exploreCases)
	}
	var beside []string
	for _, j := range p.jobs {
		if j.beside {
			beside = append(beside, j.suite)
		}
	}
	if want := []string{"drill", "chaos", "conformance"}; !slices.Equal(beside, want) {
		t.Errorf("beside: %v, want %v", beside, want)
	}
	// Narrowed by the user: none.
	p.o.Run.Focus = "x"
	n := len(p.jobs)
	if err := p.addExploreSample(); err != nil || len(p.jobs) != n {
		t.Errorf("with --focus: %d jobs, want %d (%v)", len(p.jobs), n, err)
	}
}

// make test's scale suite: its 600-pod form narrowed to scaleSample, every
// sample scenario selected for each controller and no other; a run the
// user narrowed keeps its own filter.
func TestScaleSample(t *testing.T) {
	o := options.Defaults()
	o.Run.Artifacts = "/a"
	o.Run.Versions = []string{"v1.37.1"}
	o.Run.Suites = []string{"conformance", "scale"}
	o.Controllers = []string{"builtin", "reference"}
	o.Scale = "600"
	p := &plan{o: o, jobs: planJobs(o, map[string]int{"conformance": 1, "scale": 1}), specs: map[string]int{}, scenarios: &catalog.Set{}}
	if err := p.narrowScale(); err != nil {
		t.Fatal(err)
	}
	var sc *job
	for i := range p.jobs {
		if p.jobs[i].suite == "scale" {
			sc = &p.jobs[i]
		}
	}
	if sc == nil || sc.o.Run.Focus == "" {
		t.Fatalf("scale job not narrowed: %+v", sc)
	}
	specs, err := p.selectedSpecs(sc.o, "scale")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, s := range specs {
		i := slices.IndexFunc(scaleSample, func(n string) bool { return strings.HasSuffix(s.Scenario, "-"+n) })
		if i < 0 {
			t.Errorf("%s [%s] selected, not in the sample", s.Scenario, s.Controller)
			continue
		}
		seen[scaleSample[i]]++
	}
	for _, n := range scaleSample {
		if seen[n] < len(o.Controllers) {
			t.Errorf("%s selected %d times, want one per controller (%d)", n, seen[n], len(o.Controllers))
		}
	}
	if p.specs["scale"] != len(specs) {
		t.Errorf("specs counted %d, selected %d", p.specs["scale"], len(specs))
	}
	p.o.Run.Focus = "backoff"
	p.jobs = planJobs(p.o, map[string]int{"scale": 1})
	if err := p.narrowScale(); err != nil || p.jobs[0].o.Run.Focus != "backoff" {
		t.Errorf("a user's focus replaced: %q (%v)", p.jobs[0].o.Run.Focus, err)
	}
}
