package leftovers

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/jobconform/jobconform/chaos"
	"github.com/jobconform/jobconform/internal/kube"
)

func ns(name, run string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{kube.TestLabel: "true", kube.RunLabel: run}}}
}

func changedNode(name, byNamespace string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{chaos.RestoreAnnotation: `{"cordoned":true,"namespace":"` + byNamespace + `"}`}},
		Spec: corev1.NodeSpec{Unschedulable: true}}
}

// A run's sweep removes its own leftovers — and a gone run's node — but not
// another live run's; the sweep of every run removes those too.
func TestRemoveOwnThenAll(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientset(
		ns("ours-1", "a"), ns("theirs-1", "b"),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}},
		changedNode("n1", "ours-1"), changedNode("n2", "theirs-1"), changedNode("n3", "gone-ns"),
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n4"}},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: chaos.PreemptorPriorityClass}},
	)
	found, err := Find(ctx, c, "a")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"namespace ours-1", "node n1,", "node n3,"}
	if len(found) != len(want) {
		t.Fatalf("Find(a) = %q, want %d entries", found, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(found[i], w) {
			t.Errorf("Find(a)[%d] = %q, want it to start %q", i, found[i], w)
		}
	}
	if err := Remove(ctx, c, "a", 5*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"n1", "n3"} {
		node, _ := c.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
		if node.Spec.Unschedulable || len(node.Annotations) > 0 {
			t.Errorf("%s not restored: %+v", n, node)
		}
	}
	if node, _ := c.CoreV1().Nodes().Get(ctx, "n2", metav1.GetOptions{}); !node.Spec.Unschedulable {
		t.Error("run a's sweep restored run b's node while b's namespace is there")
	}
	if _, err := c.SchedulingV1().PriorityClasses().Get(ctx, chaos.PreemptorPriorityClass, metav1.GetOptions{}); err != nil {
		t.Error("run a's sweep deleted the PriorityClass while run b may use it")
	}
	if err := Remove(ctx, c, "", 5*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	left, err := Find(ctx, c, "")
	if err != nil || len(left) != 0 {
		t.Errorf("after the sweep of every run: %q, %v", left, err)
	}
	if _, err := c.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); err != nil {
		t.Error("the sweep deleted a namespace not jobconform's")
	}
}

// The pods of a deleted namespace lose jobconform's finalizers, and keep others'.
func TestReleasePods(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "x", Finalizers: []string{"jobconform.io/job-tracking", "example.com/keep"}}})
	releasePods(ctx, c, "x")
	p, _ := c.CoreV1().Pods("x").Get(ctx, "p", metav1.GetOptions{})
	if strings.Join(p.Finalizers, ",") != "example.com/keep" {
		t.Errorf("finalizers after release: %v", p.Finalizers)
	}
}

// A refusal of pod changes left by a run (its admission policy and binding,
// cluster objects) is found and removed with its namespace's run, or once
// that namespace is gone; another live run's stays.
func TestRemoveRefusals(t *testing.T) {
	ctx := context.Background()
	refusal := func(name, namespace string) (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
		meta := metav1.ObjectMeta{Name: name, Labels: map[string]string{kube.TestLabel: "true", kube.NamespaceLabel: namespace}}
		return &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: meta}, &admissionv1.ValidatingAdmissionPolicyBinding{ObjectMeta: meta}
	}
	p1, b1 := refusal("refuse-ours", "ours-1")
	p2, b2 := refusal("refuse-theirs", "theirs-1")
	p3, b3 := refusal("refuse-gone", "gone-ns")
	other := &admissionv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "a-users-own"}}
	c := fake.NewClientset(ns("ours-1", "a"), ns("theirs-1", "b"), p1, b1, p2, b2, p3, b3, other)
	found, err := Find(ctx, c, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(found, "; "); !strings.Contains(got, "refuse-ours") || !strings.Contains(got, "refuse-gone") || strings.Contains(got, "refuse-theirs") {
		t.Errorf("Find(a) = %q", found)
	}
	if err := Remove(ctx, c, "a", 5*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	left, _ := c.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(ctx, metav1.ListOptions{})
	bindings, _ := c.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().List(ctx, metav1.ListOptions{})
	var names []string
	for _, p := range left.Items {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "a-users-own,refuse-theirs" || len(bindings.Items) != 1 {
		t.Errorf("after run a's sweep: policies %v, %d bindings; want a-users-own and refuse-theirs, one binding", names, len(bindings.Items))
	}
}
