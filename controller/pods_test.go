package controller

import (
	"errors"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// The pods a scale-down removes are ranked as upstream's ActivePods: among
// ready pods the one ready most recently goes first, whatever their
// creation (explore-4-110: pods made in one second, ready seconds apart);
// then the one restarted most; then the newest; then, on an Indexed Job,
// the lowest index.
func TestPodsForRemovalRankedAsUpstream(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	pod := func(name string, ix string, created, ready time.Time, restarts int32) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created),
				Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: ix}},
			Spec:   corev1.PodSpec{NodeName: "node"},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{RestartCount: restarts}}},
		}
		if !ready.IsZero() {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(ready)}}
		}
		return p
	}
	job := &batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr.To[int32](3), CompletionMode: ptr.To(batchv1.IndexedCompletion)}}
	c := &Controller{}
	names := func(ps []*corev1.Pod) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	for _, tc := range []struct {
		what string
		pods []*corev1.Pod
		n    int
		want []string
	}{
		{"ready most recently first, though created first",
			[]*corev1.Pod{pod("a", "0", t0, t0.Add(4*time.Second), 0), pod("b", "1", t0, t0.Add(3*time.Second), 0), pod("c", "2", t0.Add(time.Second), t0.Add(2*time.Second), 0)},
			2, []string{"a", "b"}},
		{"not ready before ready",
			[]*corev1.Pod{pod("a", "0", t0, t0.Add(time.Second), 0), pod("b", "1", t0, time.Time{}, 0)},
			1, []string{"b"}},
		{"restarted most, at the same ready time",
			[]*corev1.Pod{pod("a", "0", t0.Add(time.Second), t0.Add(2*time.Second), 0), pod("b", "1", t0, t0.Add(2*time.Second), 3)},
			1, []string{"b"}},
		{"newest, at the same ready time and restarts",
			[]*corev1.Pod{pod("a", "0", t0, t0.Add(2*time.Second), 0), pod("b", "1", t0.Add(time.Second), t0.Add(2*time.Second), 0)},
			1, []string{"b"}},
		{"of pods alike, the lowest index first, whatever their order",
			[]*corev1.Pod{pod("c", "2", t0, t0.Add(2*time.Second), 0), pod("a", "0", t0, t0.Add(2*time.Second), 0), pod("b", "1", t0, t0.Add(2*time.Second), 0)},
			2, []string{"a", "b"}},
		{"an out-of-range index whatever the count",
			[]*corev1.Pod{pod("a", "0", t0, t0.Add(2*time.Second), 0), pod("z", "3", t0, t0.Add(time.Second), 0)},
			0, []string{"z"}},
	} {
		if got := names(c.podsForRemoval(job, tc.pods, tc.n)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: removed %v, want %v", tc.what, got, tc.want)
		}
	}
}

// A patch naming the pod's uid, refused because the pod under the name has
// another, is a gone pod; any other Invalid (an admission policy's
// refusal) is an error to retry, not a gone pod.
func TestUIDChanged(t *testing.T) {
	gk := schema.GroupKind{Kind: "Pod"}
	immutable := apierrors.NewInvalid(gk, "p", field.ErrorList{field.Invalid(field.NewPath("metadata", "uid"), "b", "field is immutable")})
	policy := apierrors.NewInvalid(gk, "p", field.ErrorList{field.Invalid(field.NewPath(""), nil, "ValidatingAdmissionPolicy 'x' denied request")})
	for _, c := range []struct {
		err  error
		want bool
	}{{immutable, true}, {policy, false}, {apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "p", errors.New("x")), false}, {nil, false}} {
		if got := uidChanged(c.err); got != c.want {
			t.Errorf("uidChanged(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
