package controller

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Pod creation reasons, as the built-in controller's
// job_controller_job_pods_creation_total labels them.
const (
	reasonNew                         = "new"
	reasonRecreateTerminatingOrFailed = "recreate_terminating_or_failed"
	reasonRecreateFailed              = "recreate_failed"
)

// Metrics are the controller's Prometheus metrics.
type Metrics struct {
	Syncs             *prometheus.CounterVec
	PodsCreated       *prometheus.CounterVec
	StatusWriteErrors *prometheus.CounterVec
	LiveJobReads      prometheus.Counter
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
	}
	if reg != nil {
		reg.MustRegister(m.Syncs, m.PodsCreated, m.StatusWriteErrors, m.LiveJobReads)
	}
	return m
}

func (m *Metrics) observeSync(err error) {
	result := "success"
	if err != nil {
		result = "error"
	}
	m.Syncs.WithLabelValues(result).Inc()
}
