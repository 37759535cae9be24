package invariants

import (
	"fmt"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// largeRecording is the recording of an Indexed Job of n pods, each
// created, running, succeeded and let go, with a status write per 10 pods,
// then Complete and its pods removed: what the scale suite's Jobs leave for
// the invariants.
func largeRecording(n int) *builder {
	b := newBuilder(func(j *batchv1.Job) {
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.Parallelism, j.Spec.Completions = ptr.To(int32(n)), ptr.To(int32(n))
	})
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("p%d", i)
		b.pod(name, withIndex(fmt.Sprint(i))).pod(name, running)
	}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("p%d", i)
		b.pod(name, func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
		b.pod(name, unfinalized)
		if i%10 == 9 {
			b.status(func(s *batchv1.JobStatus) {
				s.Succeeded, s.Active, s.CompletedIndexes = int32(i+1), int32(n-i-1), fmt.Sprintf("0-%d", i)
			})
		}
	}
	b.status(func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, ""), cond(batchv1.JobComplete, "")}
	})
	for i := 0; i < n; i++ { // the Job's pods removed once it is complete, as its deletion does
		b.podGone(fmt.Sprintf("p%d", i))
	}
	return b
}

// BenchmarkCheckAll judges every invariant over recordings of 100 and
// 1,000 pods: how the judging cost grows with a Job's size (issue #32
// wants 10,000 pods judged in 10 s).
func BenchmarkCheckAll(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		rec := largeRecording(n)
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			b.ReportMetric(float64(len(rec.tl)), "entries")
			for b.Loop() {
				CheckAll(Context{Job: "j", Finalizer: fin}, rec.tl)
			}
		})
	}
}
