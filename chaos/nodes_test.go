package chaos

import (
	"context"
	"strings"
	"testing"

	"github.com/chaos-mesh/chaos-mesh/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

func nodes(names ...string) []runtime.Object {
	var out []runtime.Object
	for _, n := range names {
		out = append(out, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "theirs", Effect: corev1.TaintEffectNoSchedule}}}})
	}
	return out
}

// A drain and a taint change nodes, say so on them, and are undone by the
// run's Close — or, when the run died first, by RestoreNodes from what the
// nodes say.
func TestDrainAndTaintAreRestored(t *testing.T) {
	ctx := context.Background()
	for _, closeRun := range []bool{true, false} {
		objs := append(jobPods(3), nodes("node-0", "node-1", "node-2")...)
		// Another workload's pod on node-0, and a DaemonSet's, which a drain leaves.
		objs = append(objs,
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: "other"}, Spec: corev1.PodSpec{NodeName: "node-0"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}},
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ds", Namespace: "other", OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: "d", Controller: ptrTrue()}}},
				Spec: corev1.PodSpec{NodeName: "node-0"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}})
		c := fake.NewClientset(objs...)
		in := NewInjector(&fakeEnv{client: c}, "ns", "job", 1)
		if err := in.Do(ctx, 0, Action{Drain: &Selection{Mode: v1alpha1.AllMode, Index: ptrInt(0)}}); err != nil {
			t.Fatal(err)
		}
		if err := in.Do(ctx, 1, Action{Taint: &NodeTaint{Selection: Selection{Mode: v1alpha1.AllMode, Index: ptrInt(1)}, OutOfService: true}}); err != nil {
			t.Fatal(err)
		}
		n0, _ := c.CoreV1().Nodes().Get(ctx, "node-0", metav1.GetOptions{})
		n1, _ := c.CoreV1().Nodes().Get(ctx, "node-1", metav1.GetOptions{})
		if !n0.Spec.Unschedulable || n0.Annotations[RestoreAnnotation] == "" || len(n1.Spec.Taints) != 2 || n1.Annotations[RestoreAnnotation] == "" {
			t.Fatalf("after the drain and the taint: node-0 %+v %v, node-1 %+v %v", n0.Spec, n0.Annotations, n1.Spec, n1.Annotations)
		}
		evictions := 0
		for _, a := range c.Actions() {
			if a.GetSubresource() == "eviction" {
				evictions++
			}
		}
		if evictions != 2 { // the Job's pod and theirs; not the DaemonSet's
			t.Errorf("the drain evicted %d pods, want 2", evictions)
		}
		if log := in.Records()[0].Effect; !strings.Contains(log, "also evicted other/theirs") {
			t.Errorf("the drain's effect does not name the other workload's pod: %q", log)
		}
		if closeRun {
			if err := in.Close(ctx); err != nil {
				t.Fatal(err)
			}
		} else {
			restored, err := RestoreNodes(ctx, c, func(ns string) bool { return ns == "ns" })
			if err != nil || strings.Join(restored, ",") != "node-0,node-1" {
				t.Fatalf("RestoreNodes = %v, %v", restored, err)
			}
		}
		for _, n := range []string{"node-0", "node-1", "node-2"} {
			node, _ := c.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if node.Spec.Unschedulable || len(node.Spec.Taints) != 1 || node.Spec.Taints[0].Key != "theirs" || len(node.Annotations) != 0 {
				t.Errorf("close=%t: %s not as before: %+v %v", closeRun, n, node.Spec, node.Annotations)
			}
		}
	}
}

func TestNeeds(t *testing.T) {
	for _, tc := range []struct {
		a    Action
		want string
	}{
		{Action{Evict: &Selection{}}, ""},
		{Action{Drain: &Selection{}}, "node-disruption"},
		{Action{NodeReturn: &NodeReturn{}}, ""},
		{Action{NodeLoss: &NodeLoss{}}, "kubelet"},
		{Action{ControllerRestart: &Restart{}}, "controller"},
		{Action{Random: &Random{Menu: []string{KindPodKill, KindNodeLoss, KindControllerCrash, KindEvict}}}, "controller,kubelet"},
	} {
		var got []string
		for _, n := range tc.a.Needs() {
			got = append(got, string(n))
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("%s needs %v, want %q", tc.a.Kind(), got, tc.want)
		}
	}
	env := &fakeEnv{lacks: map[Need]string{NeedKubelet: "no kubelet here"}}
	if why := Unmet(env, Action{Evict: &Selection{}}, Action{NodeLoss: &NodeLoss{}}); why != "node-loss: no kubelet here" {
		t.Errorf("Unmet = %q", why)
	}
}

func ptrInt(i int) *int { return &i }
func ptrTrue() *bool    { b := true; return &b }
