package chaos

import (
	"context"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/pods"
)

func TestEndRunKeepsTheBehavioursExitCodeUnlessGiven(t *testing.T) {
	ctx := context.Background()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: "2"}}}
	client := fake.NewClientset(p)
	if err := EndRun(ctx, client, p, nil); err != nil {
		t.Fatal(err)
	}
	got, _ := client.CoreV1().Pods("ns").Get(ctx, "p", metav1.GetOptions{})
	if got.Annotations[pods.AnnRunSeconds] != "0" || got.Annotations[pods.AnnRunSeconds+".2"] != "0" {
		t.Fatalf("run not ended for the pod and its index: %v", got.Annotations)
	}
	if _, set := got.Annotations[pods.AnnExitCode]; set {
		t.Fatalf("finishing a run changed its exit code: %v", got.Annotations)
	}
	if err := EndRun(ctx, client, p, ptr.To[int32](137)); err != nil {
		t.Fatal(err)
	}
	got, _ = client.CoreV1().Pods("ns").Get(ctx, "p", metav1.GetOptions{})
	if got.Annotations[pods.AnnExitCode] != "137" || got.Annotations[pods.AnnExitCode+".2"] != "137" {
		t.Fatalf("kill: %v", got.Annotations)
	}
}

func TestPodOpsSpeakTheAPI(t *testing.T) {
	ctx := context.Background()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	client := fake.NewClientset(p)
	var verbs []string
	client.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		verbs = append(verbs, a.GetVerb()+" "+a.GetResource().Resource+"/"+a.GetSubresource())
		return false, nil, nil
	})
	if err := SetPodCondition(ctx, client, p, "example.com/gate", corev1.ConditionTrue); err != nil {
		t.Fatal(err)
	}
	_ = EvictPod(ctx, client, p) // the fake has no eviction storage; the verb is what counts
	if err := DeletePod(ctx, client, p, ptr.To[int64](0)); err != nil {
		t.Fatal(err)
	}
	want := []string{"patch pods/status", "create pods/eviction", "delete pods/"}
	if len(verbs) != len(want) {
		t.Fatalf("calls %v, want %v", verbs, want)
	}
	for i := range want {
		if verbs[i] != want[i] {
			t.Fatalf("calls %v, want %v", verbs, want)
		}
	}
	if err := DeletePod(ctx, client, p, nil); err == nil {
		t.Fatal("deleting a pod that is gone must say so")
	}
}
