package invariants

import (
	"maps"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func exited(code int32) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodFailed
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}}}
	}
}

func TestMetricsAgree(t *testing.T) {
	policy := func(j *batchv1.Job) {
		j.Spec.Parallelism, j.Spec.Completions = ptr.To[int32](2), ptr.To[int32](2)
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
			{Action: batchv1.PodFailurePolicyActionIgnore, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{3}}},
			{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}}},
		}}
	}
	// An ignored failure, a FailJob, and a pod deleted while the Job fails
	// (no rule matches it): the Job failed with one pod counted.
	run := newBuilder(policy).
		pod("a", exited(3)).pod("a", unfinalized).
		pod("b", exited(42)).pod("c", running).
		status(func(s *batchv1.JobStatus) {
			s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "PodFailurePolicy")}
		}).
		pod("b", unfinalized).pod("c", deleting).pod("c", unfinalized).
		status(func(s *batchv1.JobStatus) {
			s.Failed = 2
			s.Conditions = append(s.Conditions, cond(batchv1.JobFailed, "PodFailurePolicy"))
		})
	samples := func(after map[string]float64) Context {
		return Context{Job: "j", Finalizer: fin, Metrics: &MetricSamples{Manager: "kubernetes.io/job-controller",
			Before: map[string]float64{MetricKey(MetricJobsFinished, map[string]string{"completion_mode": "NonIndexed", "result": "failed", "reason": "PodFailurePolicy"}): 4}, After: after}}
	}
	right := map[string]float64{
		MetricKey(MetricJobsFinished, map[string]string{"completion_mode": "NonIndexed", "result": "failed", "reason": "PodFailurePolicy"}): 5,
		MetricKey(MetricPodsFinished, map[string]string{"completion_mode": "NonIndexed", "result": "failed"}):                               2,
		MetricKey(MetricPodsFinished, map[string]string{"completion_mode": "NonIndexed", "result": "succeeded"}):                            0,
		MetricKey(MetricFailuresByPolicy, map[string]string{"action": "Ignore"}):                                                            1,
		MetricKey(MetricFailuresByPolicy, map[string]string{"action": "FailJob"}):                                                           1,
		"unrelated_total{}": 7,
	}
	expectOK(t, MetricsAgree, samples(right), run)

	twice := ptr.To(*samples(right).Metrics)
	twice.After = maps.Clone(right)
	twice.After[MetricKey(MetricJobsFinished, map[string]string{"completion_mode": "NonIndexed", "result": "failed", "reason": "PodFailurePolicy"})] = 6
	expectViolation(t, MetricsAgree, Context{Job: "j", Finalizer: fin, Metrics: twice}, run,
		`job_controller_jobs_finished_total{completion_mode="NonIndexed",reason="PodFailurePolicy",result="failed"} rose by 2; the recording shows 1`)
	noIgnore := maps.Clone(right)
	delete(noIgnore, MetricKey(MetricFailuresByPolicy, map[string]string{"action": "Ignore"}))
	expectViolation(t, MetricsAgree, samples(noIgnore), run, `action="Ignore"} rose by 0; the recording shows 1`)

	// Not judged without samples.
	if r := MetricsAgree.Evaluate(Context{Job: "j"}, run.tl); r.Applicable {
		t.Error("metrics-agree applied to a run without metrics")
	}

	// Another manager's Job: counted once by the controller, nothing else.
	foreign := newBuilder(func(j *batchv1.Job) { j.Spec.ManagedBy = ptr.To("example.com/other") })
	ext := map[string]float64{MetricKey(MetricByExternalController, map[string]string{"controller_name": "example.com/other"}): 1}
	expectOK(t, MetricsAgree, samples(ext), foreign)
	expectViolation(t, MetricsAgree, samples(nil), foreign, `jobs_by_external_controller_total{controller_name="example.com/other"} rose by 0; the recording shows 1`)

	// Indexed: completed indexes, and failed ones under backoffLimitPerIndex.
	perIndex := func(j *batchv1.Job) {
		indexedJob(3)(j)
		j.Spec.BackoffLimitPerIndex = ptr.To[int32](0)
	}
	ix := newBuilder(perIndex).status(func(s *batchv1.JobStatus) {
		s.CompletedIndexes, s.FailedIndexes, s.Succeeded, s.Failed = "0,2", ptr.To("1"), 2, 1
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "FailedIndexes"), cond(batchv1.JobFailed, "FailedIndexes")}
	})
	ixWant := map[string]float64{
		MetricKey(MetricJobsFinished, map[string]string{"completion_mode": "Indexed", "result": "failed", "reason": "FailedIndexes"}): 1,
		MetricKey(MetricPodsFinished, map[string]string{"completion_mode": "Indexed", "result": "failed"}):                            1,
		MetricKey(MetricPodsFinished, map[string]string{"completion_mode": "Indexed", "result": "succeeded"}):                         2,
		MetricKey(MetricFinishedIndexes, map[string]string{"status": "succeeded", "backoffLimit": "perIndex"}):                        2,
		MetricKey(MetricFinishedIndexes, map[string]string{"status": "failed", "backoffLimit": "perIndex"}):                           1,
	}
	expectOK(t, MetricsAgree, samples(ixWant), ix)
}
