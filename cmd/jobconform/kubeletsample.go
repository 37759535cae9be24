package main

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/jobconform/jobconform/scenarios"
)

// kubeletTraits are what a scenario asks of the nodes that only a real
// kubelet does for real, and kwok's Stages imitate: a process that traps
// SIGTERM and exits late (with its own code), a grace period cut short, a
// container that becomes ready later, readiness gates folded into Ready,
// restarts in place, exit codes, several containers, init containers and
// sidecars (their statuses, the order a kubelet runs and stops them), and the acts that end running pods
// (deletion, forced deletion, eviction, a finished pod deleted, suspension,
// scale-down, a Job deleted, a pod of its own created beside the Job's).
// A scenario that has none of them asks of the nodes only that pods start
// and end: kwok's run of it says all a kubelet's would.
func kubeletTraits(s *scenarios.Scenario) []string {
	set := map[string]bool{}
	var behaviour func(p scenarios.PodBehavior)
	behaviour = func(p scenarios.PodBehavior) {
		if p.SIGTERM != nil {
			set["sigterm-trap"] = true
			if p.SIGTERM.ExitCode != nil {
				set["sigterm-exit-code"] = true
			}
		}
		if p.ExitCode != 0 {
			set["exit-code"] = true
		}
		if p.Failures > 0 {
			set["fails-then-succeeds"] = true
		}
		if p.ReadyAfter.Duration > 0 {
			set["ready-after"] = true
		}
		if len(p.Gates) > 0 {
			set["readiness-gate"] = true
		}
		if len(p.Containers) > 0 {
			set["several-containers"] = true
		}
		if len(p.InitContainers) > 0 {
			set["init-containers"] = true
		}
		if len(p.Sidecars) > 0 {
			set["sidecars"] = true
		}
		for _, o := range p.ByIndex {
			behaviour(o)
		}
	}
	behaviour(s.Pods)
	if s.Job.Template.Spec.RestartPolicy == corev1.RestartPolicyOnFailure {
		set["restart-in-place"] = true
	}
	for _, st := range s.Steps {
		a := st.Act
		if a == nil {
			continue
		}
		switch a.Kind {
		case scenarios.ActDeletePod:
			switch {
			case a.Finished:
				set["delete-finished-pod"] = true
			case a.GracePeriod != nil && *a.GracePeriod == 0:
				set["force-delete"] = true
			default:
				set["delete-running-pod"] = true
			}
		case scenarios.ActEvictPod:
			set["evict"] = true
		case scenarios.ActSetGate:
			set["readiness-gate"] = true
		case scenarios.ActSuspend:
			set["suspend-ends-pods"] = true
		case scenarios.ActScale:
			set["scale"] = true
		case scenarios.ActDeleteJob:
			set["delete-job"] = true
		case scenarios.ActCreatePod:
			set["foreign-pod"] = true
		}
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// kubeletSample are the conformance scenarios make test runs again on
// kubelet nodes: together they have every kubelet trait of the catalog at
// least twice where the catalog has it twice (TestKubeletSampleCoversTraits),
// so each imitation of kwok's is held to a real kubelet in every make
// test, and the fidelity table compares them. The whole catalog on kubelet
// nodes is make fidelity's (docs/kubelet-nodes.md has its table).
var kubeletSample = []string{
	"complete-simple",                                // pods that start and end: the baseline
	"prp-failed-sigterm",                             // SIGTERM trap, deletion, replacement after Failed
	"prp-terminating-or-failed-sigterm",              // SIGTERM trap, replacement while terminating
	"deferred-failed-backoff-limit",                  // exit codes, deferred Failed while pods trap
	"deferred-complete-while-terminating",            // deferred Complete behind a 120 s trap
	"success-criteria-met-wins-over-later-failjob",   // the trap's own exit code
	"failjob-wins-over-later-success",                // the trap's own exit code (0)
	"readiness-after-delay",                          // a container ready after a delay
	"readiness-gate-flips",                           // readiness gates flipped
	"readiness-terminating-not-ready",                // gates, deletion, trap
	"onfailure-restarts-exceed-backoff-limit",        // restarts in place
	"onfailure-restarts-one-short-goes-on",           // restarts in place, fails then succeeds
	"prp-failed-eviction",                            // eviction
	"pod-failure-policy-ignore-eviction",             // eviction under a pod failure policy
	"tracking-force-delete",                          // deletion with grace period 0
	"prp-failed-resume-waits-for-terminating",        // suspension ends trapping pods
	"elastic-indexed-scale-down-terminating",         // scale-down of trapping pods
	"delete-foreground",                              // the Job deleted, its pods trapping
	"pod-failure-policy-failindex",                   // exit codes per index
	"delete-orphan",                                  // the Job deleted, its pods running on
	"suspend-resume",                                 // suspension ends running pods
	"nonindexed-scale-down-not-ready-first",          // scale-down by readiness (gates)
	"indexed-removes-bad-indexes",                    // pods of its own created beside the Job's
	"manual-selector-adopts-orphans-not-others-pods", // orphans and others' pods
	"pfp-second-container-fails-job",                 // a second container's exit code
	"pfp-init-container-exit-code",                   // an init container fails the pod
	"init-containers-then-indexed-main",              // init containers, then two containers
	"sidecar-stopped-job-completes",                  // sidecars stopped once the main containers end
	"pfp-sidecar-exit-code-matched",                  // a stopped sidecar's exit code
}

// kubeletSampleFocus selects kubeletSample's specs of the conformance suite,
// for every controller.
func kubeletSampleFocus() string {
	quoted := make([]string, len(kubeletSample))
	for i, n := range kubeletSample {
		quoted[i] = regexp.QuoteMeta(n)
	}
	return ` conformance \[[^]]+\] (` + strings.Join(quoted, "|") + `)$`
}

// narrowKubeletConformance runs the conformance suite on kubelet nodes for
// kubeletSample alone (make test's; --kubelet-conformance alone, or make
// fidelity, runs the catalog), unless the user narrowed the run with a
// filter of their own.
func (p *plan) narrowKubeletConformance() error {
	if p.o.Run.Focus != "" || p.o.Run.LabelFilter != "" {
		return nil
	}
	for i, j := range p.jobs {
		if j.suite != "conformance" || j.o.Nodes != "kubelet" {
			continue
		}
		p.jobs[i].o.Run.Focus = kubeletSampleFocus()
		n, err := p.countSpecs(p.jobs[i].o, "conformance")
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("the kubelet sample selects no spec of the conformance suite: %s", strings.Join(kubeletSample, ", "))
		}
	}
	return nil
}

// sampleTraits are the kubelet traits of the named scenarios (none for one
// limited to kwok nodes, which never runs on a kubelet), each with how
// many of them have it.
func sampleTraits(all []*scenarios.Scenario, names []string) map[string]int {
	out := map[string]int{}
	for _, s := range all {
		if s.Nodes == "kwok" {
			continue // never runs on kubelet nodes
		}
		if names == nil || slices.Contains(names, s.Name) {
			for _, t := range kubeletTraits(s) {
				out[t]++
			}
		}
	}
	return out
}
