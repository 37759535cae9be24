package kube

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// A namespace is handed out only once its default ServiceAccount exists
// (pods created before it would be rejected, and look like a controller fault).
func TestCreateNamespaceWaitsForTheServiceAccount(t *testing.T) {
	client := fake.NewClientset()
	var created time.Time
	client.PrependReactor("create", "namespaces", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ns := a.(k8stesting.CreateAction).GetObject().(*corev1.Namespace)
		ns.Name = ns.GenerateName + "abcde"
		go func() {
			time.Sleep(300 * time.Millisecond)
			created = time.Now()
			_, _ = client.CoreV1().ServiceAccounts(ns.Name).Create(context.Background(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{})
		}()
		return false, nil, nil
	})
	ns, err := CreateNamespace(context.Background(), client, "jc-test", "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ns, "jc-test-") || created.IsZero() {
		t.Fatalf("namespace %q returned before its ServiceAccount existed", ns)
	}
	got, _ := client.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
	if got.Labels[TestLabel] != "true" || got.Labels[RunLabel] != "run-1" {
		t.Fatalf("labels %v", got.Labels)
	}
	if err := DeleteNamespace(context.Background(), client, ns); err != nil {
		t.Fatal(err)
	}
	if err := DeleteNamespace(context.Background(), client, ns); err != nil {
		t.Fatalf("deleting a namespace that is gone: %v", err)
	}
}

func TestPodPredicates(t *testing.T) {
	p := &corev1.Pod{}
	p.Status.Phase = corev1.PodRunning
	if PodTerminal(p) || PodTerminating(p) {
		t.Fatal("a running pod")
	}
	p.DeletionTimestamp = ptr.To(metav1.Now())
	if !PodTerminating(p) {
		t.Fatal("a running pod with a deletionTimestamp is terminating")
	}
	p.Status.Phase = corev1.PodFailed
	if !PodTerminal(p) || PodTerminating(p) {
		t.Fatal("a failed pod is terminal, not terminating, deletionTimestamp or not")
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	if PodCondition(p, corev1.PodReady) != corev1.ConditionFalse || PodCondition(p, "Other") != "" {
		t.Fatal("PodCondition")
	}
	p.OwnerReferences = []metav1.OwnerReference{{Kind: "Job", Name: "job", Controller: ptr.To(true)}}
	if !IsOwnedBy(p, "job") || IsOwnedBy(p, "other") {
		t.Fatal("IsOwnedBy")
	}
	p.OwnerReferences[0].Controller = nil
	if IsOwnedBy(p, "job") {
		t.Fatal("an owner that is not the controller")
	}
}

func TestWaitNodeReady(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}}}
	client := fake.NewClientset(node)
	if err := WaitNodeReady(context.Background(), client, "n", 700*time.Millisecond); err == nil || !strings.Contains(err.Error(), "not Ready") {
		t.Fatalf("a NotReady node: %v", err)
	}
	node.Status.Conditions[0].Status = corev1.ConditionTrue
	if _, err := client.CoreV1().Nodes().UpdateStatus(context.Background(), node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WaitNodeReady(context.Background(), client, "n", 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

// Only the hold finalizer goes, only from the pods that carry it: another
// controller's (the Job's tracking finalizer) stays.
func TestReleaseHeld(t *testing.T) {
	pod := func(name string, finalizers ...string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Finalizers: finalizers}}
	}
	client := fake.NewClientset(pod("held", HoldFinalizer, "batch.kubernetes.io/job-tracking"), pod("free", "batch.kubernetes.io/job-tracking"), pod("none"))
	if err := ReleaseHeld(context.Background(), client, "ns"); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{"held": {"batch.kubernetes.io/job-tracking"}, "free": {"batch.kubernetes.io/job-tracking"}, "none": nil} {
		p, err := client.CoreV1().Pods("ns").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.Finalizers, want) {
			t.Errorf("%s: finalizers %v, want %v", name, p.Finalizers, want)
		}
	}
}
