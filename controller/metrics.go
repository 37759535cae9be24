package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	batchv1 "k8s.io/api/batch/v1"
)

// Pod creation reasons, as the built-in controller's
// job_controller_job_pods_creation_total labels them.
const (
	reasonNew                         = "new"
	reasonRecreateTerminatingOrFailed = "recreate_terminating_or_failed"
	reasonRecreateFailed              = "recreate_failed"
)

// Metrics are the controller's Prometheus metrics: its own, and those of
// the built-in controller's that say what happened to the Jobs, under the
// built-in's names and labels (k8s.io/kubernetes pkg/controller/job/metrics,
// v1.37.1), so that dashboards and jobconform's metrics-agree read both alike.
type Metrics struct {
	Syncs             *prometheus.CounterVec
	PodsCreated       *prometheus.CounterVec
	StatusWriteErrors *prometheus.CounterVec
	LiveJobReads      prometheus.Counter

	JobsFinished         *prometheus.CounterVec // completion_mode, result, reason
	PodsFinished         *prometheus.CounterVec // completion_mode, result
	FailuresByPolicy     *prometheus.CounterVec // action
	FinishedIndexes      *prometheus.CounterVec // status, backoffLimit
	ByExternalController *prometheus.CounterVec // controller_name
}

// NewMetrics creates the metrics and registers them with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobconform", Subsystem: "reference_job_controller", Name: "syncs_total",
			Help: "Job syncs by result (success, error).",
		}, []string{"result"}),
		PodsCreated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobconform", Subsystem: "reference_job_controller", Name: "job_pods_creation_total",
			Help: "Pods created, by reason (new, recreate_terminating_or_failed, recreate_failed) and status (succeeded, failed).",
		}, []string{"reason", "status"}),
		StatusWriteErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "jobconform", Subsystem: "reference_job_controller", Name: "status_write_errors_total",
			Help: "Job status writes the apiserver rejected, by reason (Invalid is a controller bug, Conflict is routine).",
		}, []string{"reason"}),
		LiveJobReads: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "jobconform", Subsystem: "reference_job_controller", Name: "live_job_reads_total",
			Help: "Jobs read from the apiserver because the informer cache was known to be behind.",
		}),
		JobsFinished: builtinCounter("jobs_finished_total", "The number of finished jobs", "completion_mode", "result", "reason"),
		PodsFinished: builtinCounter("job_pods_finished_total", "The number of finished Pods that are fully tracked", "completion_mode", "result"),
		FailuresByPolicy: builtinCounter("pod_failures_handled_by_failure_policy_total",
			"The number of failed Pods handled by failure policy with respect to the failure policy action applied based on the matched rule", "action"),
		FinishedIndexes: builtinCounter("job_finished_indexes_total", "The number of finished indexes, by status (succeeded, failed) and backoffLimit (perIndex, global)", "status", "backoffLimit"),
		ByExternalController: builtinCounter("jobs_by_external_controller_total",
			"The number of Jobs seen created as managed by another controller (spec.managedBy), by its name", "controller_name"),
	}
	if reg != nil {
		reg.MustRegister(m.Syncs, m.PodsCreated, m.StatusWriteErrors, m.LiveJobReads,
			m.JobsFinished, m.PodsFinished, m.FailuresByPolicy, m.FinishedIndexes, m.ByExternalController)
	}
	return m
}

func builtinCounter(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "job_controller", Name: name, Help: help}, labels)
}

// addPositive adds d when it is positive (a counter cannot go down: an
// elastic scale-down drops completed indexes from the status).
func addPositive(c prometheus.Counter, d int) {
	if d > 0 {
		c.Add(float64(d))
	}
}

func (m *Metrics) observeSync(err error) {
	result := "success"
	if err != nil {
		result = "error"
	}
	m.Syncs.WithLabelValues(result).Inc()
}

// counters are the parts of a Job's status the pod metrics follow.
type counters struct {
	succeeded, failed int32
	completedIndexes  int
	failedIndexes     int
}

func countersOf(job *batchv1.Job) counters {
	c := counters{succeeded: job.Status.Succeeded, failed: job.Status.Failed}
	if isIndexed(job) {
		n := int(*job.Spec.Completions)
		c.completedIndexes = len(parseIndexes(job.Status.CompletedIndexes, n))
		if job.Status.FailedIndexes != nil {
			c.failedIndexes = len(parseIndexes(*job.Status.FailedIndexes, n))
		}
	}
	return c
}

// recordPodsFinished adds what a successful status write counted since the
// last one, as upstream's recordJobPodFinished: for an Indexed Job the
// succeeded pods are its newly completed indexes.
func (c *Controller) recordPodsFinished(st *syncState) {
	job, was := st.job, st.written
	now := countersOf(job)
	st.written = now
	mode := completionMode(job)
	succeeded := int(now.succeeded - was.succeeded)
	if isIndexed(job) {
		succeeded = now.completedIndexes - was.completedIndexes
		limit := "global"
		if hasBackoffLimitPerIndex(job) {
			limit = "perIndex"
			addPositive(c.metrics.FinishedIndexes.WithLabelValues("failed", limit), now.failedIndexes-was.failedIndexes)
		}
		addPositive(c.metrics.FinishedIndexes.WithLabelValues("succeeded", limit), succeeded)
	}
	addPositive(c.metrics.PodsFinished.WithLabelValues(mode, "succeeded"), succeeded)
	addPositive(c.metrics.PodsFinished.WithLabelValues(mode, "failed"), int(now.failed-was.failed))
}

// recordPolicyActions adds the failures each pod failure policy action handled.
func (c *Controller) recordPolicyActions(st *syncState) {
	for a, n := range st.policyActions {
		c.metrics.FailuresByPolicy.WithLabelValues(string(a)).Add(float64(n))
	}
	clear(st.policyActions)
}

// recordJobFinished counts the Job's terminal condition.
func (c *Controller) recordJobFinished(job *batchv1.Job, cond *batchv1.JobCondition) {
	result := "failed"
	if cond.Type == batchv1.JobComplete || cond.Type == batchv1.JobSuccessCriteriaMet {
		result = "succeeded"
	}
	c.metrics.JobsFinished.WithLabelValues(completionMode(job), result, cond.Reason).Inc()
}

func completionMode(job *batchv1.Job) string {
	if isIndexed(job) {
		return string(batchv1.IndexedCompletion)
	}
	return string(batchv1.NonIndexedCompletion)
}
