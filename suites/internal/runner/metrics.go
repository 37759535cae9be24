package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/scenarios/invariants"
)

// ErrNoMetrics is wrapped by a metrics reader that cannot read the
// controller's metrics here (a cluster whose control plane the harness does
// not reach, an external controller): the metrics are not judged, and the
// run says why.
var ErrNoMetrics = errors.New("the controller's metrics cannot be read")

// quietTimeout bounds the wait for the other scenarios' Jobs to finish or go
// before a metrics scenario reads the counters.
const quietTimeout = 2 * time.Minute

// metricsRun reads the controller's counters around a serial scenario's run.
type metricsRun struct {
	read    func(context.Context) (string, error)
	manager string
	before  map[string]float64
}

// startMetrics waits until no Job of controller c is unfinished (it would
// move the counters), then reads them; the scenario's Job is created next.
// skip says why the metrics are not judged ("" when they are); err is a
// harness error.
func startMetrics(ctx context.Context, client kubernetes.Interface, c Controller, read func(context.Context) (string, error)) (m *metricsRun, skip string, err error) {
	if read == nil {
		return nil, fmt.Sprintf("metrics-agree not judged: %v (no reader for %s's)", ErrNoMetrics, c.Name), nil
	}
	m = &metricsRun{read: read, manager: batchv1.JobControllerName}
	if c.ManagedBy != nil {
		m.manager = *c.ManagedBy
	}
	var busy string
	err = wait.PollUntilContextTimeout(ctx, time.Second, quietTimeout, true, func(ctx context.Context) (bool, error) {
		jobs, err := client.BatchV1().Jobs(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		busy = ""
		for _, j := range jobs.Items {
			if managedByName(&j) == m.manager && !kube.JobFinished(&j) {
				busy = j.Namespace + "/" + j.Name
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("metrics: the cluster did not quiet down within %s before the counters were read (Job %s still unfinished): %w", quietTimeout, busy, err)
	}
	if m.before, err = m.sample(ctx); errors.Is(err, ErrNoMetrics) {
		return nil, "metrics-agree not judged: " + err.Error(), nil
	}
	return m, "", err
}

// finish reads the counters again: the samples metrics-agree compares.
func (m *metricsRun) finish(ctx context.Context) (*invariants.MetricSamples, error) {
	after, err := m.sample(ctx)
	if err != nil {
		return nil, err
	}
	return &invariants.MetricSamples{Before: m.before, After: after, Manager: m.manager}, nil
}

func (m *metricsRun) sample(ctx context.Context) (map[string]float64, error) {
	text, err := m.read(ctx)
	if err != nil {
		return nil, err
	}
	return ParseCounters(text)
}

// ParseCounters reads the counters of a /metrics page (Prometheus text
// format), keyed by invariants.MetricKey.
func ParseCounters(text string) (map[string]float64, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("parse the metrics: %w", err)
	}
	out := map[string]float64{}
	for name, f := range families {
		if f.GetType() != dto.MetricType_COUNTER {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			out[invariants.MetricKey(name, labels)] = m.GetCounter().GetValue()
		}
	}
	return out, nil
}

// managedByName is the manager a Job names, the built-in's when none.
func managedByName(j *batchv1.Job) string {
	if j.Spec.ManagedBy == nil {
		return batchv1.JobControllerName
	}
	return *j.Spec.ManagedBy
}
