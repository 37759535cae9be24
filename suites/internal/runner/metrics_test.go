package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/jobconform/jobconform/scenarios/invariants"
)

const page = `# HELP job_controller_jobs_finished_total The number of finished jobs
# TYPE job_controller_jobs_finished_total counter
job_controller_jobs_finished_total{completion_mode="NonIndexed",reason="CompletionsReached",result="succeeded"} 3
# HELP job_controller_job_sync_duration_seconds x
# TYPE job_controller_job_sync_duration_seconds histogram
job_controller_job_sync_duration_seconds_bucket{action="reconciling",completion_mode="NonIndexed",result="success",le="0.1"} 1
job_controller_job_sync_duration_seconds_sum{action="reconciling",completion_mode="NonIndexed",result="success"} 0.01
job_controller_job_sync_duration_seconds_count{action="reconciling",completion_mode="NonIndexed",result="success"} 1
`

func TestParseCounters(t *testing.T) {
	got, err := ParseCounters(page)
	if err != nil {
		t.Fatal(err)
	}
	key := invariants.MetricKey(invariants.MetricJobsFinished, map[string]string{"completion_mode": "NonIndexed", "reason": "CompletionsReached", "result": "succeeded"})
	if len(got) != 1 || got[key] != 3 {
		t.Errorf("counters: %v", got)
	}
	if _, err := ParseCounters("not a metrics page {"); err == nil {
		t.Error("a broken page parsed")
	}
}

func TestStartMetrics(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset()
	// No reader, or one that cannot read here: not judged, and said why.
	if m, skip, err := startMetrics(ctx, client, BuiltIn, nil); m != nil || err != nil || !strings.Contains(skip, "not judged") {
		t.Errorf("no reader: %v %q %v", m, skip, err)
	}
	unreachable := func(context.Context) (string, error) { return "", fmt.Errorf("%w: kind", ErrNoMetrics) }
	if m, skip, err := startMetrics(ctx, client, BuiltIn, unreachable); m != nil || err != nil || !strings.Contains(skip, "kind") {
		t.Errorf("unreachable: %v %q %v", m, skip, err)
	}
	// Another error is the harness's.
	broken := func(context.Context) (string, error) { return "", errors.New("connection refused") }
	if _, _, err := startMetrics(ctx, client, BuiltIn, broken); err == nil {
		t.Error("a failed read passed")
	}
	// A reader that works: the samples, and the built-in's own name.
	ok := func(context.Context) (string, error) { return page, nil }
	m, skip, err := startMetrics(ctx, client, BuiltIn, ok)
	if err != nil || skip != "" || m.manager != batchv1.JobControllerName || len(m.before) != 1 {
		t.Fatalf("working reader: %+v %q %v", m, skip, err)
	}
	if s, err := m.finish(ctx); err != nil || s.Manager != batchv1.JobControllerName || len(s.After) != 1 {
		t.Errorf("finish: %+v %v", s, err)
	}
}

// The counters are read only once no other Job of the controller is
// unfinished; another manager's Job does not count.
func TestStartMetricsWaitsForQuiet(t *testing.T) {
	done := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "done"},
		Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}}
	foreign := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "foreign"}}
	foreign.Spec.ManagedBy = new(string)
	*foreign.Spec.ManagedBy = "example.com/other"
	client := fake.NewClientset(done, foreign)
	read := func(context.Context) (string, error) { return page, nil }
	if _, _, err := startMetrics(context.Background(), client, BuiltIn, read); err != nil {
		t.Fatalf("a quiet cluster: %v", err)
	}
}
