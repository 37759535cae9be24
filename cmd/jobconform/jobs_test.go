package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/scenarios/catalog"
)

// The plan of make run and make test: which suite runs where, against whom,
// in which stream, with its reports where.
func TestPlanJobs(t *testing.T) {
	o := options.Defaults()
	o.Run.Artifacts = "/a"
	o.Run.Versions = []string{"v1.37.1"}
	o.Run.BuiltinAt = []string{"v1.36.3"}
	o.Run.Suites = []string{"conformance", "chaos", "drill", "scale"}
	o.Run.KubeletConformance = true
	o.Controllers = []string{"builtin", "reference", "dispatcher"} // the dispatcher: conformance on kwok nodes only
	specs := map[string]int{"conformance": 1, "chaos": 1, "drill": 1, "scale": 1}
	var got []string
	for _, j := range planJobs(o, specs) {
		stream := "front"
		if j.beside {
			stream = "beside"
		}
		got = append(got, fmt.Sprintf("%s %s %s %s %s %s procs=%d", stream, j.suite, j.o.Version, strings.Join(j.o.Controllers, ","), orDefault(j.o.Nodes, "kwok"), j.dir, j.procs()))
		// What each job's processes are told holds for them (seen: the
		// kubelet conformance suite told of the scale suite refused it).
		if jo := j.o; jo.Validate() != nil || len(jo.Run.Suites) != 1 || jo.Run.Suites[0] != j.suite {
			t.Errorf("%s at %s on %s nodes: told suites %v, Validate() = %v", j.suite, j.o.Version, j.o.Nodes, j.o.Run.Suites, jo.Validate())
		}
	}
	want := []string{ // each stream runs its jobs in this order
		"beside drill v1.37.1 builtin,reference kwok /a/v1.37.1 procs=6",
		"front conformance v1.37.1 builtin,reference,dispatcher kwok /a/v1.37.1 procs=24",
		"front conformance v1.36.3 builtin kwok /a/v1.36.3 procs=24",
		"front chaos v1.37.1 builtin,reference kwok /a/v1.37.1 procs=6",
		"beside chaos v1.36.3 builtin kwok /a/v1.36.3 procs=6",
		"front conformance v1.37.1 builtin,reference kubelet /a/kubelet-v1.37.1 procs=12", // real containers: fewer at once
		"front scale v1.37.1 builtin,reference kwok /a/v1.37.1 procs=1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// On 1.31 the apiserver drops spec.managedBy unless JobManagedBy is on: the
// delegated controllers run on a cluster of their own with the gate, the
// built-in where it is off, as on any cluster of that release.
func TestPlanJobsManagedByGate(t *testing.T) {
	o := options.Defaults()
	o.Run.Artifacts = "/a"
	o.Run.Versions = []string{"v1.31.4"}
	o.Run.Suites = []string{"conformance"}
	jobs := planJobs(o, map[string]int{"conformance": 1})
	if len(jobs) != 2 {
		t.Fatalf("%d jobs, want 2: %v", len(jobs), jobs)
	}
	if b := jobs[0]; strings.Join(b.o.Controllers, ",") != "builtin" || len(b.o.FeatureGates) != 0 || b.dir != "/a/v1.31.4" {
		t.Errorf("built-in job: %v in %s", b, b.dir)
	}
	if r := jobs[1]; strings.Join(r.o.Controllers, ",") != "reference" || !r.o.FeatureGates["JobManagedBy"] || r.dir != "/a/JobManagedBy/v1.31.4" {
		t.Errorf("delegated job: %v in %s", r, r.dir)
	}
	o.FeatureGates = map[string]bool{"JobManagedBy": false} // the user's word wins
	if jobs := planJobs(o, map[string]int{"conformance": 1}); len(jobs) != 1 {
		t.Errorf("with the gate given: %d jobs, want 1", len(jobs))
	}
	o.FeatureGates = nil
	o.Run.Versions = []string{"v1.32.5"}
	if jobs := planJobs(o, map[string]int{"conformance": 1}); len(jobs) != 1 {
		t.Errorf("on 1.32: %d jobs, want 1", len(jobs))
	}
}

// make test's MultiKueue run: its scenarios exist, its focus selects them
// and nothing else, its job follows the conformance suite at the release
// under test with its reports apart.
func TestMultiKueueSample(t *testing.T) {
	o := options.Defaults()
	o.Run.Artifacts = "/a"
	o.Run.Versions = []string{"v1.37.1"}
	o.Run.Suites = []string{"conformance", "chaos"}
	o.Controllers = []string{"builtin", "reference", "dispatcher"}
	p := &plan{o: o, specs: map[string]int{"conformance": 1, "chaos": 1}}
	var err error
	if p.scenarios, err = catalog.Assemble(true); err != nil {
		t.Fatal(err)
	}
	focus := regexp.MustCompile(multiKueueFocus())
	names := map[string]bool{}
	for _, s := range p.scenarios.Conformance {
		names[s.Name] = true
		// Ginkgo matches "jobconform conformance conformance [multikueue] NAME".
		if text := specText("conformance", "multikueue", s.Name); focus.MatchString(text) != slices.Contains(multiKueueSample, s.Name) {
			t.Errorf("focus %s on %q: %v", focus, text, focus.MatchString(text))
		}
		if focus.MatchString(specText("conformance", "dispatcher", s.Name)) {
			t.Errorf("focus selects the reference dispatcher's %s", s.Name)
		}
	}
	for _, n := range multiKueueSample {
		if !names[n] {
			t.Errorf("multiKueueSample names %q, not a conformance scenario", n)
		}
	}
	p.jobs = planJobs(p.o, p.specs)
	p.addMultiKueueSample()
	if len(p.jobs) < 2 || !slices.Equal(p.jobs[1].o.Controllers, []string{"multikueue"}) || p.jobs[1].suite != "conformance" ||
		p.jobs[1].dir != "/a/multikueue-v1.37.1" || p.jobs[1].o.Validate() != nil || p.jobs[1].beside {
		t.Fatalf("jobs: %v", p.jobs)
	}
	if !slices.Contains(p.jobs[0].o.Controllers, "dispatcher") || p.jobs[0].o.Run.Focus != "" {
		t.Errorf("the conformance job before it changed: %v", p.jobs[0])
	}
	if !p.selects(p.jobs[1]) {
		t.Error("the sample's job selects no spec")
	}
	n := len(p.jobs)
	p.addMultiKueueSample() // a plan that runs MultiKueue already
	if len(p.jobs) != n {
		t.Errorf("added twice")
	}
}

// A job selects the specs its own filters and controllers select, counted
// on the text Ginkgo matches (the suite's description first): a job of the
// built-in alone under a focus on the reference selects none, and that is no
// error; a focus anchored at the spec's container selects none anywhere.
func TestSelects(t *testing.T) {
	if got := specText("conformance", "builtin", "x"); got != "jobconform conformance conformance [builtin] x" {
		t.Errorf("specText = %q", got)
	}
	set, err := catalog.Assemble(true)
	if err != nil {
		t.Fatal(err)
	}
	p := &plan{scenarios: set}
	for _, tc := range []struct {
		focus       string
		controllers []string
		want        bool
	}{
		{`\[reference\] prp-failed-sigterm$`, []string{"reference"}, true},
		{`\[reference\] prp-failed-sigterm$`, []string{"builtin"}, false},
		{`^conformance \[reference\]`, []string{"reference"}, false},
		{`^jobconform conformance conformance \[reference\] prp-failed-sigterm$`, []string{"reference"}, true},
	} {
		o := options.Defaults()
		o.Controllers, o.Run.Focus = tc.controllers, tc.focus
		if got := p.selects(job{suite: "conformance", o: o}); got != tc.want {
			t.Errorf("focus %s, %v: %v, want %v", tc.focus, tc.controllers, got, tc.want)
		}
	}
}

// --fail-fast reaches Ginkgo (make mutate stops a mutant at its first catch);
// without it every spec runs.
func TestGinkgoArgsFailFast(t *testing.T) {
	o := options.Defaults()
	o.Run.Suites = []string{"conformance"}
	j := job{suite: "conformance", o: o, dir: t.TempDir()}
	if args := j.ginkgoArgs("bin", nil); slices.Contains(args, "--fail-fast") {
		t.Errorf("--fail-fast without being asked: %v", args)
	}
	j.o.Run.FailFast = true
	if args := j.ginkgoArgs("bin", nil); !slices.Contains(args, "--fail-fast") {
		t.Errorf("no --fail-fast in %v", args)
	}
}

// --shard K/N: the specs of 4 shards add up to the unsharded selection, in
// every suite and under a label filter; each shard has some; the drills fly
// in shard 1 only.
func TestShardsAddUp(t *testing.T) {
	set, err := catalog.Assemble(true)
	if err != nil {
		t.Fatal(err)
	}
	p := &plan{scenarios: set}
	for _, filter := range []string{"", "podReplacementPolicy || suspend"} {
		for _, suite := range []string{"conformance", "chaos", "scale", "drill"} {
			o := options.Defaults()
			o.Run.LabelFilter = filter
			whole, err := p.countSpecs(o, suite)
			if err != nil {
				t.Fatal(err)
			}
			sum := 0
			for k := 1; k <= 4; k++ {
				o.Run.Shard = fmt.Sprintf("%d/4", k)
				n, err := p.countSpecs(o, suite)
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 && filter == "" && suite == "conformance" {
					t.Errorf("%s shard %d/4 has no spec", suite, k)
				}
				if suite == "drill" && k > 1 && n > 0 {
					t.Errorf("drill shard %d/4 has %d specs: the drills fly in shard 1", k, n)
				}
				sum += n
			}
			if sum != whole {
				t.Errorf("%s, filter %q: the 4 shards have %d specs, the whole %d", suite, filter, sum, whole)
			}
		}
	}
	o := options.Defaults()
	for _, bad := range []string{"0/4", "5/4", "1/0", "2", "a/b", "1/4x"} {
		o.Run.Shard = bad
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "K/N") {
			t.Errorf("--shard %s: %v, want it refused saying K/N", bad, err)
		}
	}
}
