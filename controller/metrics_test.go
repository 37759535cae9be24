package controller

import (
	"maps"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// The reason a replacement is counted under in job_pods_creation_total, as
// upstream's recordJobPodsCreationTotal gives it (v1.31-v1.37): under
// podReplacementPolicy Failed a replacement after a failure is
// recreate_failed, otherwise recreate_terminating_or_failed; with the gate
// off, every pod is new.
func TestPodsCreationReason(t *testing.T) {
	created := func(f *fixture) map[string]float64 {
		out := map[string]float64{}
		for _, r := range []string{reasonNew, reasonRecreateFailed, reasonRecreateTerminatingOrFailed} {
			if v := testutil.ToFloat64(f.c.metrics.PodsCreated.WithLabelValues(r, "succeeded")); v > 0 {
				out[r] = v
			}
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		gates []string
		prp   *batchv1.PodReplacementPolicy
		want  map[string]float64
	}{
		{"failed", nil, ptr.To(batchv1.Failed), map[string]float64{reasonNew: 1, reasonRecreateFailed: 1}},
		{"terminating-or-failed", nil, nil, map[string]float64{reasonNew: 1, reasonRecreateTerminatingOrFailed: 1}},
		{"gate-off", []string{"JobPodReplacementPolicy=false"}, nil, map[string]float64{reasonNew: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.gates...)
			j, p := f.startAndTerminateFirstPod(newJob("reason", 1, func(j *batchv1.Job) { j.Spec.PodReplacementPolicy = tc.prp }))
			finish(p, corev1.PodFailed, f.now)
			f.setPod(p)
			j = f.sync(j)
			f.clock.Step(DefaultPodFailureBackoff)
			j = f.sync(j)
			if n := len(f.pods(j)); n != 2 {
				t.Fatalf("%d pods, want the first and its replacement", n)
			}
			if got := created(f); !maps.Equal(got, tc.want) {
				t.Errorf("pods created by reason %v, want %v", got, tc.want)
			}
		})
	}
}

// Under podReplacementPolicy Failed, a pod created while another terminates
// and none has failed (a scale-up beside a deleted pod) is
// recreate_terminating_or_failed: upstream's recreate_failed wants a failure
// in the sync that creates (recordJobPodsCreationTotal, v1.31-v1.37).
func TestPodsCreationReasonTerminatingNoFailure(t *testing.T) {
	f := newFixture(t)
	j, _ := f.startAndTerminateFirstPod(newJob("reason", 1, func(j *batchv1.Job) {
		j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
		j.Spec.Completions = ptr.To[int32](2)
	}))
	if n := len(f.pods(j)); n != 1 {
		t.Fatalf("%d pods while the first terminates, want 1 (Failed: not replaced before it fails)", n)
	}
	j.Spec.Parallelism = ptr.To[int32](2)
	f.putJob(j)
	j = f.sync(j)
	if n := len(f.pods(j)); n != 2 {
		t.Fatalf("%d pods after the scale-up, want the terminating one and a new one", n)
	}
	for reason, want := range map[string]float64{reasonNew: 1, reasonRecreateTerminatingOrFailed: 1, reasonRecreateFailed: 0} {
		if got := testutil.ToFloat64(f.c.metrics.PodsCreated.WithLabelValues(reason, "succeeded")); got != want {
			t.Errorf("pods created as %s: %v, want %v", reason, got, want)
		}
	}
}
