package oracle

import (
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The Job's metadata and spec are compared, its UID and managedBy aside: a
// controller that labels (or edits) the Job differs.
func TestJobShapeCompared(t *testing.T) {
	shape := func(uid, managedBy string) func(*batchv1.Job, []*corev1.Pod) {
		return func(j *batchv1.Job, _ []*corev1.Pod) {
			j.Labels = map[string]string{"batch.kubernetes.io/controller-uid": uid}
			j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": uid}}
			if managedBy != "" {
				j.Spec.ManagedBy = ptr.To(managedBy)
			}
		}
	}
	builtin := Observe(run("11111111", "f", shape("11111111", "")), "job", "f")
	other := Observe(run("22222222", "f", shape("22222222", "jobconform.io/reference")), "job", "f")
	if ds := Compare(builtin, other, nil); len(ds) != 0 {
		t.Fatalf("same Jobs but their UIDs and managedBy: %v", ds)
	}
	labelled := Observe(run("22222222", "f", func(j *batchv1.Job, ps []*corev1.Pod) {
		shape("22222222", "x")(j, ps)
		j.Labels["mine"] = "yes"
		j.Spec.Parallelism = ptr.To[int32](3)
	}), "job", "f")
	ds := Compare(builtin, labelled, nil)
	var fields []string
	for _, d := range ds {
		fields = append(fields, d.Field)
	}
	if !slices.Equal(fields, []string{"job.labels.mine", "job.spec.parallelism"}) {
		t.Fatalf("want job.labels.mine and job.spec.parallelism, got %v", ds)
	}
}
