package chaos

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chaos-mesh/chaos-mesh/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// With Chaos Mesh, a pod-kill is a PodChaos selecting exactly the pods the
// injector chose, waited for until Chaos Mesh recorded it applied, read
// back into the record, and deleted; a container-kill stays the injector's.
func TestPodChaosThroughChaosMesh(t *testing.T) {
	ctx := context.Background()
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{PodChaosResource: "PodChaosList"})
	var submitted *v1alpha1.PodChaos
	dyn.PrependReactor("get", "podchaos", func(a k8stesting.Action) (bool, runtime.Object, error) {
		// Chaos Mesh's controller, once the experiment exists: applied.
		if submitted == nil {
			return false, nil, nil
		}
		pc := submitted.DeepCopy()
		for _, names := range pc.Spec.Selector.Pods {
			for _, n := range names {
				pc.Status.Experiment.Records = append(pc.Status.Experiment.Records, &v1alpha1.Record{Id: "ns/" + n, Phase: v1alpha1.Injected,
					Events: []v1alpha1.RecordEvent{{Type: v1alpha1.TypeSucceeded, Operation: v1alpha1.Apply, Timestamp: &metav1.Time{Time: time.Now()}}}})
			}
		}
		obj, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(pc)
		return true, &unstructured.Unstructured{Object: obj}, nil
	})
	dyn.PrependReactor("create", "podchaos", func(a k8stesting.Action) (bool, runtime.Object, error) {
		u := a.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured)
		submitted = &v1alpha1.PodChaos{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, submitted); err != nil {
			t.Fatal(err)
		}
		return false, nil, nil
	})
	env := &fakeEnv{client: fake.NewClientset(jobPods(4)...)}
	in := NewInjector(env, "ns", "job", 7)
	in.ChaosMesh = dyn
	kill := Action{PodChaos: &v1alpha1.PodChaosSpec{Action: v1alpha1.PodKillAction, GracePeriod: 5}}
	kill.PodChaos.Mode, kill.PodChaos.Value = v1alpha1.FixedMode, "2"
	if err := in.Do(ctx, 0, kill); err != nil {
		t.Fatal(err)
	}
	if submitted == nil || submitted.Spec.Mode != v1alpha1.AllMode || len(submitted.Spec.Selector.Pods["ns"]) != 2 || submitted.Spec.GracePeriod != 5 {
		t.Fatalf("submitted %+v", submitted)
	}
	rec := in.Records()[0]
	if rec.Experiment == nil || len(rec.Experiment.Records) != 2 || !strings.Contains(rec.Effect, "by Chaos Mesh's PodChaos job-pod-kill-1") {
		t.Errorf("record %+v", rec)
	}
	for _, n := range submitted.Spec.Selector.Pods["ns"] {
		if !strings.Contains(rec.Effect, n) {
			t.Errorf("the effect %q does not name the pod Chaos Mesh killed, %s", rec.Effect, n)
		}
	}
	deleted := false
	for _, a := range dyn.Actions() {
		deleted = deleted || a.GetVerb() == "delete"
	}
	if !deleted {
		t.Error("the experiment was not deleted once done")
	}
	// A container-kill: no experiment.
	submitted = nil
	ck := Action{PodChaos: &v1alpha1.PodChaosSpec{Action: v1alpha1.ContainerKillAction}}
	if err := in.Do(ctx, 1, ck); err != nil {
		t.Fatal(err)
	}
	if submitted != nil || in.Records()[1].Experiment != nil {
		t.Error("a container-kill went to Chaos Mesh")
	}
}

// Without Chaos Mesh, a pod-failure swaps the containers' images for the
// pause image for its duration and back, as Chaos Mesh does.
func TestPodFailureByTheInjector(t *testing.T) {
	ctx := context.Background()
	pods := jobPods(1)
	pods[0].(*corev1.Pod).Spec.Containers = []corev1.Container{{Name: "main", Image: "busybox"}}
	c := fake.NewClientset(pods...)
	var during []string
	c.PrependReactor("update", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.UpdateAction).GetObject().(*corev1.Pod)
		during = append(during, p.Spec.Containers[0].Image)
		return false, nil, nil
	})
	in := NewInjector(&fakeEnv{client: c}, "ns", "job", 1)
	fail := Action{PodChaos: &v1alpha1.PodChaosSpec{Action: v1alpha1.PodFailureAction, Duration: ptr.To("50ms")}}
	if err := in.Do(ctx, 0, fail); err == nil || !strings.Contains(err.Error(), "--pause-image") {
		t.Fatalf("a pod-failure without a pause image: %v", err)
	}
	in.PauseImage = "pause"
	if err := in.Do(ctx, 1, fail); err != nil {
		t.Fatal(err)
	}
	p, _ := c.CoreV1().Pods("ns").Get(ctx, pods[0].(*corev1.Pod).Name, metav1.GetOptions{})
	if strings.Join(during, ",") != "pause,busybox" || p.Spec.Containers[0].Image != "busybox" || len(p.Annotations) != 1 {
		t.Errorf("images %v; after: %s %v", during, p.Spec.Containers[0].Image, p.Annotations)
	}
}
