package main

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/reports"
	"github.com/jobconform/jobconform/suites/ginkgoreport"
)

// --rerun-failed REPORT (issue #71): run again only the specs that failed
// in an earlier run — each at the releases and on the nodes where it
// failed, with the built-in's spec of the same scenario beside another
// controller's (its run is the oracle) — then fold the rerun into the
// first with jobconform report merge --rerun.

// narrowToFailed narrows o to the failed specs of the runs in report (an
// artifacts directory, or Ginkgo JSON reports comma-separated); it says
// how many it found.
func narrowToFailed(o *options.Options, report string) (int, error) {
	if o.Run.Focus != "" {
		return 0, errors.New("--rerun-failed chooses the specs itself: leave out --focus")
	}
	art := mustAbs(cmp.Or(o.Run.Artifacts, options.Artifacts()))
	for _, p := range strings.Split(report, ",") {
		if a := mustAbs(p); a == art || strings.HasPrefix(a+"/", art+"/") || strings.HasPrefix(art+"/", a+"/") {
			return 0, fmt.Errorf("--rerun-failed %s: the rerun would write its reports over the run it reads (--artifacts %s): give --artifacts another directory, then fold the two with jobconform report merge --rerun", report, art)
		}
	}
	paths, err := reportFiles(report)
	if err != nil {
		return 0, fmt.Errorf("--rerun-failed: %w", err)
	}
	runs, err := ginkgoreport.Load(paths...)
	if err != nil {
		return 0, fmt.Errorf("--rerun-failed: %w", err)
	}
	failed := slices.DeleteFunc(slices.Clone(runs), func(r reports.Run) bool { return r.SpecVerdict != "FAIL" })
	if len(failed) == 0 {
		return 0, fmt.Errorf("--rerun-failed %s: no spec failed there, nothing to run again", report)
	}
	var focus, suites, versions, controllers []string
	kubelet, kwok := false, false
	add := func(list *[]string, s string) {
		if s != "" && !slices.Contains(*list, s) {
			*list = append(*list, s)
		}
	}
	for _, r := range failed {
		add(&focus, regexp.QuoteMeta(r.Spec)+"$")
		add(&suites, strings.TrimPrefix(r.Suite, "jobconform "))
		if !strings.HasSuffix(r.Suite, "drill") { // a drill's version is its path; it flies from the first release
			add(&versions, r.Version)
		}
		add(&controllers, r.Controller)
		if r.Controller != "" && r.Controller != "builtin" && !r.Control() {
			// The built-in's run of the scenario is the others' oracle.
			add(&focus, regexp.QuoteMeta(strings.Replace(r.Spec, "["+r.Controller+"]", "[builtin]", 1))+"$")
			add(&controllers, "builtin")
		}
		kubelet, kwok = kubelet || r.Nodes == options.NodesKubelet, kwok || r.Nodes == ""
	}
	slices.Sort(focus)
	o.Run.Focus = "(" + strings.Join(focus, "|") + ")"
	o.Run.Suites = slices.DeleteFunc(slices.Clone(options.Suites), func(s string) bool { return !slices.Contains(suites, s) })
	o.Run.Versions, o.Run.BuiltinAt = slices.DeleteFunc(versions, func(v string) bool { return !strings.HasPrefix(v, "v") }), nil
	if o.Kubeconfig != "" || o.Provider == "existing" {
		o.Run.Versions = nil // the cluster runs its own release
	}
	if c := slices.DeleteFunc(controllers, func(c string) bool { return !slices.Contains(options.Controllers, c) }); len(c) > 0 {
		o.Controllers = c
	}
	o.Run.KubeletConformance = kubelet && kwok
	if kubelet && !kwok {
		o.Nodes = options.NodesKubelet
	}
	o.Run.Artifacts = cmp.Or(o.Run.Artifacts, options.Artifacts())
	return len(failed), nil
}
