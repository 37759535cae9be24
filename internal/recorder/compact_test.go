package recorder

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

func stateOf(uid, phase string, labels map[string]string) *corev1.Pod {
	p := pod("ns", "p")
	p.UID = types.UID("u" + uid)
	p.Labels = labels
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{}}`)}}}
	p.Spec.Containers = []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sh", "-c", "sleep 1"}}}
	p.Spec.NodeSelector = map[string]string{"zone": "a"}
	p.Status.Phase = corev1.PodPhase(phase)
	return p
}

// The transform drops the field sets of managedFields (keeping who wrote)
// and lets a pod's states share what did not change, each state still
// equal to what the apiserver sent.
func TestCompactor(t *testing.T) {
	c := compactor()
	first := stateOf("", "Pending", map[string]string{"a": "1"})
	second := stateOf("", "Running", map[string]string{"a": "1"})
	third := stateOf("", "Running", map[string]string{"a": "2"})
	other := stateOf("-other", "Pending", map[string]string{"a": "1"})
	for _, p := range []*corev1.Pod{first, second, third, other} {
		if _, err := c(p); err != nil {
			t.Fatal(err)
		}
	}
	f := second.ManagedFields[0]
	if f.FieldsV1 != nil || f.Manager != "kube-controller-manager" || f.Subresource != "status" || f.Operation != metav1.ManagedFieldsOperationUpdate {
		t.Errorf("managedFields after the transform: %+v; want who wrote, without the field set", f)
	}
	if &second.Spec.Containers[0] != &first.Spec.Containers[0] || &third.Spec.Containers[0] != &second.Spec.Containers[0] {
		t.Errorf("identical containers of one pod's states are not shared")
	}
	if &other.Spec.Containers[0] == &first.Spec.Containers[0] {
		t.Errorf("another pod shares the first one's containers")
	}
	if third.Labels["a"] != "2" || second.Labels["a"] != "1" || second.Status.Phase != corev1.PodRunning || first.Status.Phase != corev1.PodPending {
		t.Errorf("a state lost what was its own: labels %v %v, phases %s %s", second.Labels, third.Labels, first.Status.Phase, second.Status.Phase)
	}
	if _, err := c("not an object"); err != nil {
		t.Errorf("a tombstone or other value: %v", err)
	}
}

// Through the recorder: what it records has no field sets.
func TestRecordingHasNoFieldSets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := fake.NewClientset(stateOf("", "Pending", nil))
	r, err := Start(ctx, client, "ns")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	e, err := r.WaitFor(ctx, 10*time.Second, "the pod", func(e Entry) bool { return e.Kind == "Pod" })
	if err != nil {
		t.Fatal(err)
	}
	if f := e.Pod().ManagedFields; len(f) != 1 || f[0].FieldsV1 != nil || f[0].Manager != "kube-controller-manager" {
		t.Fatalf("recorded managedFields %+v", f)
	}
}
