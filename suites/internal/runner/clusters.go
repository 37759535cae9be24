// Runs across a manager and a worker cluster: what a dispatcher cannot promise, and the manager's pods.

package runner

import (
	"context"
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/invariants"
)

// NotAcrossClusters says why scenario s makes no promise dispatcher c can
// keep across clusters ("" when it does): each reason is by design of the
// multi-cluster mode or of the dispatcher, stated in the verdict, never a
// silent skip.
func NotAcrossClusters(s *scenarios.Scenario, c Controller) string {
	switch {
	case s.HasChaos():
		return "multi-cluster runs: chaos across a manager and a worker cluster is not built yet (issue #31)"
	case s.Metrics:
		return "multi-cluster runs: the scenario judges a Job controller's /metrics; a dispatcher serves none of the Job controller's counters"
	case s.ForeignManagedBy:
		return "multi-cluster runs: the scenario is about a Job whose manager does not run; a dispatched Job's does"
	case slices.ContainsFunc(s.Steps, func(st scenarios.Step) bool { return st.Act != nil && st.Act.Kind == scenarios.ActRecreateJob }):
		return "multi-cluster runs: a Job deleted and created again under its name is not told apart from the one before it on the worker cluster yet (the recording's copies of the two share a name; issue #30)"
	case s.Acts(scenarios.ActRefusePodChanges):
		// Rehearsal 21 (2026-12-07): the await after the refusal met the
		// manager's Job before the dispatcher's first copy of the worker's
		// status, and the copy then broke its hold.
		return "multi-cluster runs: the refusal is of the pod changes of the worker's own Job controller, which its own run judges; the dispatcher changes no pod, and the manager's copy of the status, late by design, cannot meet awaits timed against the refusal"
	}
	switch c.Name {
	case Dispatcher.Name:
		return notAcrossClustersReference(s)
	case MultiKueue.Name:
		return notAcrossClustersKueue(s)
	}
	return "" // what the two dispatchers above leave out by design, others are judged on
}

// notAcrossClustersKueue is what Kueue's MultiKueue leaves to Kueue's own
// contract (read in v0.17.0's source, seen in its runs): a Job in a queue is
// Kueue's to start, stop and size once admitted.
func notAcrossClustersKueue(s *scenarios.Scenario) string {
	for _, st := range s.Steps {
		if st.Act == nil || st.Act.Refused {
			continue
		}
		switch st.Act.Kind {
		case scenarios.ActSuspend:
			return "MultiKueue: Kueue owns spec.suspend of a Job in its queue and starts an admitted Job its user suspends again (jobframework reconciler, \"Job admitted, unsuspending\", Kueue v0.17.0): a Kueue user stops a Job by deactivating its Workload; the suspension this scenario judges does not happen, by design"
		case scenarios.ActScale:
			if ptr.Deref(s.Job.Parallelism, 1) == 0 {
				continue // no pod runs yet: Kueue queues the resized Job again before any does (passes, judged)
			}
			return "MultiKueue: a Job's parallelism is part of its Workload's admission; Kueue stops a running Job whose Workload no longer matches it and queues it again (jobframework reconciler, \"job with no matching workload, suspending\", Kueue v0.17.0): resizing a running Job is Kueue's elastic Jobs (feature gate ElasticJobsViaWorkloadSlices, alpha, off), by design"
		}
	}
	return ""
}

// notAcrossClustersReference is what the reference dispatcher leaves out by
// design: it copies a Job once and deletes the copy one way.
func notAcrossClustersReference(s *scenarios.Scenario) string {
	for _, st := range s.Steps {
		if st.Act == nil {
			continue
		}
		switch st.Act.Kind {
		case scenarios.ActSuspend, scenarios.ActResume, scenarios.ActScale, scenarios.ActPatchTemplate:
			return "multi-cluster runs: the scenario changes the Job's spec once it runs (" + st.Act.Kind + "); the reference dispatcher copies a Job to its worker once, so a later change to the manager's Job does not reach the running copy, by design"
		case scenarios.ActDeleteJob:
			return "multi-cluster runs: the scenario deletes the Job with a propagation policy; the reference dispatcher deletes the worker's copy in the background whatever the policy, by design"
		}
	}
	return ""
}

// managerPods: a dispatched Job gets no pod on the manager cluster — its
// built-in Job controller leaves a Job managed by another alone (KEP-4368).
// Judged once the run is over, from the manager's namespace.
func managerPods(client kubernetes.Interface, ns string) invariants.Result {
	res := invariants.Result{Invariant: "delegation-manager-pods", Applicable: true}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		res.Violations = append(res.Violations, invariants.Violation{Invariant: res.Invariant, Time: time.Now(),
			Message: "the harness could not list the manager's pods (no verdict on the controller): " + err.Error()})
		return res
	}
	for _, p := range list.Items {
		if kube.IsOwnedBy(&p, JobName) {
			res.Violations = append(res.Violations, invariants.Violation{Invariant: res.Invariant, Time: p.CreationTimestamp.Time,
				Message: fmt.Sprintf("pod %s was created on the manager cluster for a Job a dispatcher runs elsewhere", p.Name)})
		}
	}
	return res
}
