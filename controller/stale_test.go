package controller

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestSucceededUncounted(t *testing.T) {
	tracked := func(p *corev1.Pod) bool { return len(p.Finalizers) > 0 }
	pod := func(uid string, ix string, phase corev1.PodPhase, finalized bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: ix}}}
		p.Status.Phase = phase
		if finalized {
			p.Finalizers = []string{"f"}
		}
		return p
	}
	indexed := &batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr.To[int32](3), CompletionMode: ptr.To(batchv1.IndexedCompletion)}}
	indexed.Status.CompletedIndexes = "0"
	type tc struct {
		name string
		job  *batchv1.Job
		pods []*corev1.Pod
		want bool
	}
	cases := []tc{
		{"index 0 released and counted", indexed, []*corev1.Pod{pod("a", "0", corev1.PodSucceeded, false)}, false},
		// The drill's case: index 1 released, the cached status not yet counting it.
		{"index 1 released, not counted", indexed, []*corev1.Pod{pod("b", "1", corev1.PodSucceeded, false)}, true},
		{"index 1 succeeded, still tracked", indexed, []*corev1.Pod{pod("b", "1", corev1.PodSucceeded, true)}, false},
		{"failed pods do not count", indexed, []*corev1.Pod{pod("b", "1", corev1.PodFailed, false)}, false},
	}
	nonIndexed := &batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr.To[int32](3)}}
	nonIndexed.Status.Succeeded = 1
	nonIndexed.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"c"}}
	cases = append(cases,
		tc{"one released, one counted", nonIndexed, []*corev1.Pod{pod("a", "", corev1.PodSucceeded, false)}, false},
		tc{"uncounted is recorded", nonIndexed, []*corev1.Pod{pod("a", "", corev1.PodSucceeded, false), pod("c", "", corev1.PodSucceeded, false)}, false},
		tc{"two released, one counted", nonIndexed, []*corev1.Pod{pod("a", "", corev1.PodSucceeded, false), pod("b", "", corev1.PodSucceeded, false)}, true},
	)
	for _, c := range cases {
		if got := succeededUncounted(c.job, c.pods, tracked); got != c.want {
			t.Errorf("%s: behind = %v, want %v", c.name, got, c.want)
		}
	}
}
