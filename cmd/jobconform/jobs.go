package main

// Planning a run: the suite runs (jobs) of its releases, controllers and
// nodes, and the two streams they go in (streams.go runs them, outcome.go
// reads what they left).

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/release"
)

// job is one suite run: a Ginkgo run of one suite against some controllers
// at one release, on one kind of node, its reports in dir.
type job struct {
	suite string
	o     options.Options // what its processes are told: one release, its controllers, its nodes
	dir   string          // artifacts/<release>, artifacts/kubelet-<release>, ...
	// beside: run in the second stream (see runJobs).
	beside bool
}

func (j job) String() string {
	where := orDefault(j.o.Version, "the existing cluster")
	if j.o.Nodes == options.NodesKubelet {
		where += " on kubelet nodes"
	}
	if g := options.FormatGates(j.o.FeatureGates); g != "" {
		where += " with " + g
	}
	if j.o.Oracle.Twice && !j.o.BuiltinScenarios {
		where += " on explore's cases" // make test's short explore (addExploreSample)
	}
	return fmt.Sprintf("%s suite at %s (%s)", j.suite, where, strings.Join(j.o.ControllerNames(), ", "))
}

// jobs is the plan of a run, in the order each stream runs it:
//   - every suite at every release of Versions, against the controllers
//     under test;
//   - the conformance and chaos suites at every release of BuiltinAt,
//     against the built-in controller alone;
//   - with KubeletConformance, the conformance suite again at the first
//     release, on kubelet nodes.
//
// On a release where JobManagedBy is alpha and off (1.31), the apiserver
// drops spec.managedBy: a delegated controller's runs there go to a cluster
// of their own with JobManagedBy=true, reported under
// artifacts/JobManagedBy/<release> (unless --feature-gates names the gate).
func planJobs(o options.Options, specs map[string]int) []job {
	var out []job
	add := func(suite, v string, controllers []string, nodes, dir string) {
		out = append(out, suiteJobs(o, suite, v, controllers, nodes, dir)...)
	}
	art := o.Run.Artifacts
	versions := o.Run.Versions
	if len(versions) == 0 {
		versions = []string{""} // an existing cluster
	}
	// A dispatcher (options.Dispatchers) is judged by the conformance suite
	// alone, on kwok nodes (its worker cluster's): the other jobs run without it.
	single := slices.DeleteFunc(slices.Clone(o.Controllers), func(c string) bool { return slices.Contains(options.Dispatchers, c) })
	for _, v := range versions {
		for _, s := range o.Run.Suites {
			cs := o.Controllers
			if s != "conformance" {
				cs = single
			}
			if len(cs) > 0 {
				add(s, v, cs, o.Nodes, filepath.Join(art, orDefault(v, "cluster")))
			}
		}
	}
	for _, v := range o.Run.BuiltinAt {
		for _, s := range o.Run.Suites {
			if s != "drill" && s != "scale" && specs[s] > 0 {
				add(s, v, []string{"builtin"}, o.Nodes, filepath.Join(art, v))
			}
		}
	}
	if o.Run.KubeletConformance && len(single) > 0 {
		add("conformance", versions[0], single, options.NodesKubelet, filepath.Join(art, "kubelet-"+versions[0]))
	}
	orderStreams(out, o)
	return out
}

// suiteJobs is the job of suite at release v against controllers: its
// processes are told their own suite only, so the settings they validate
// hold for it (kubelet nodes and the scale suite don't mix). On a release
// where JobManagedBy is off by default, and unless the user set the gate,
// the delegated controllers go to a cluster of their own with the gate on.
func suiteJobs(o options.Options, suite, v string, controllers []string, nodes, dir string) []job {
	jo := o
	jo.Version, jo.Controllers, jo.Nodes = v, controllers, nodes
	jo.Run.Suites = []string{suite}
	jo.Run.KubeletConformance = jo.Run.KubeletConformance && suite == "conformance"
	_, gateSet := o.FeatureGates["JobManagedBy"]
	if v == "" || release.Minor(v) >= managedByBeta || !hasDelegated(controllers) || gateSet {
		return []job{{suite: suite, o: jo, dir: dir}}
	}
	var out []job
	var builtin, delegated []string
	for _, c := range controllers {
		if c == "builtin" {
			builtin = append(builtin, c)
		} else {
			delegated = append(delegated, c)
		}
	}
	if len(builtin) > 0 {
		jo.Controllers = builtin
		out = append(out, job{suite: suite, o: jo, dir: dir})
	}
	jo.Controllers = delegated
	jo.FeatureGates = map[string]bool{"JobManagedBy": true}
	for k, on := range o.FeatureGates {
		jo.FeatureGates[k] = on
	}
	return append(out, job{suite: suite, o: jo, dir: filepath.Join(filepath.Dir(dir), "JobManagedBy", filepath.Base(dir))})
}

// orderStreams puts the jobs in two streams, so that neither waits on the
// other's sleeping specs: in front the conformance suites, then the chaos
// suites of the releases under test, then kubelet nodes; beside them the
// drills, then the built-in's chaos suites at the other releases (measured
// on 2 cores: the drills and a chaos suite each leave cores idle for
// minutes). In each stream, in this order; beside, the drills first: the
// longest, as make run measured them.
func orderStreams(out []job, o options.Options) {
	for i := range out {
		j := &out[i]
		j.beside = j.suite == "drill" || (j.suite == "chaos" && slices.Contains(o.Run.BuiltinAt, j.o.Version))
	}
	rank := func(j job) int {
		// The scale suite last, alone in its stream: it measures.
		r := map[string]int{"conformance": 0, "chaos": 1, "drill": 2, "scale": 20}[j.suite]
		if j.beside && j.suite == "drill" {
			r = -1
		}
		if j.o.Nodes == options.NodesKubelet && o.Nodes != options.NodesKubelet {
			r += 10
		}
		return r
	}
	sort.SliceStable(out, func(a, b int) bool { return rank(out[a]) < rank(out[b]) })
}

// managedByBeta is the first minor where JobManagedBy is on by default.
const managedByBeta = 32

func hasDelegated(controllers []string) bool {
	for _, c := range controllers {
		if c != "builtin" {
			return true
		}
	}
	return false
}

// kubeletProcs caps the conformance suite's processes on kubelet nodes: every
// pod there is a real container, and at 24 specs at once on two cores (a CI
// run of 2026-11-26) containers started 5-25 s after their creation and 17 of
// 144 specs timed out for both controllers alike, where kwok nodes keep up.
const kubeletProcs = 12

// procs is how many Ginkgo processes run j: the chaos and drill suites bring
// up a cluster per spec, so fewer.
func (j job) procs() int {
	switch j.suite {
	case "conformance":
		if j.o.Nodes == options.NodesKubelet || j.o.ProviderName() == "existing" { // a cluster's own nodes: real containers, as a rule
			return min(j.o.Run.Procs, kubeletProcs)
		}
		return j.o.Run.Procs
	case "scale":
		return 1 // one Job at a time: each spec measures the controller alone
	}
	return j.o.Run.ClusterProcs
}
