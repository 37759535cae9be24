package reports

import (
	"reflect"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
)

// The compact lines draw as the full ones do: the same events, less a pod
// change that changes nothing drawn.
func TestCompactLinesDrawTheSame(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", CreationTimestamp: metav1.NewTime(t0),
		Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: "3", "other": "x"}, Labels: map[string]string{"a": "b"}}}
	running := pod.DeepCopy()
	running.Status.Phase = corev1.PodRunning
	running.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
	relabelled := running.DeepCopy()
	relabelled.Labels["c"] = "d" // nothing drawn changes
	done := running.DeepCopy()
	done.Status.Phase = corev1.PodFailed
	done.DeletionTimestamp = ptr.To(metav1.NewTime(t0.Add(time.Second)))
	done.Status.ContainerStatuses = []corev1.ContainerStatus{{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 42, Reason: "Error"}}}}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "job"}, Status: batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](1), Terminating: ptr.To[int32](0),
		Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}}}}
	tl := timeline.Timeline{
		{Time: t0, Type: timeline.Added, Kind: "Pod", Name: "p", Object: pod},
		{Time: t0.Add(1), Type: timeline.Modified, Kind: "Pod", Name: "p", Object: running},
		{Time: t0.Add(2), Type: timeline.Modified, Kind: "Pod", Name: "p", Object: relabelled},
		{Time: t0.Add(3), Type: timeline.Modified, Kind: "Job", Name: "job", Object: job},
		{Time: t0.Add(4), Type: timeline.Modified, Kind: "Pod", Name: "p", Object: done},
		{Time: t0.Add(5), Type: timeline.Deleted, Kind: "Pod", Name: "p", Object: done},
		{Time: t0.Add(6), Type: timeline.Added, Kind: "Node", Name: "n", Object: &corev1.Node{}},
	}
	full, err := tl.Lines()
	if err != nil {
		t.Fatal(err)
	}
	compact, err := CompactLines(tl)
	if err != nil {
		t.Fatal(err)
	}
	want, err := parseTimeline(full)
	if err != nil {
		t.Fatal(err)
	}
	want = append(want[:2:2], want[3:]...) // the relabelling
	got, err := parseTimeline(compact)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("compact:\n%+v\nfull:\n%+v", got, want)
	}
	if len(compact)*2 > len(full) {
		t.Errorf("compact lines are %d bytes, the full ones %d", len(compact), len(full))
	}
}
