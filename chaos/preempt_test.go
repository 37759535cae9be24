package chaos

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// The preemptor needs the victim's node alone, all of its CPU, a higher
// priority, and must not pass for one of the Job's pods.
func TestPreemptor(t *testing.T) {
	victim := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "job-abc", Labels: map[string]string{"batch.kubernetes.io/controller-uid": "u"},
			Annotations:     map[string]string{"kwok.x-k8s.io/stage": "run", "batch.kubernetes.io/job-completion-index": "0"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: "job"}}},
		Spec: corev1.PodSpec{NodeName: "node-1", Hostname: "job-0", Tolerations: []corev1.Toleration{{Key: "kwok", Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{Name: "main", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}},
			Volumes:    []corev1.Volume{{Name: "token"}}},
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32")}}}
	p := preemptor(victim, node)
	switch {
	case p.Spec.NodeName != "" || p.Spec.NodeSelector[corev1.LabelHostname] != "node-1":
		t.Errorf("not bound to node-1 by the scheduler: nodeName %q, nodeSelector %v", p.Spec.NodeName, p.Spec.NodeSelector)
	case p.Spec.PriorityClassName != PreemptorPriorityClass:
		t.Errorf("priority class %q", p.Spec.PriorityClassName)
	case !p.Spec.Containers[0].Resources.Requests.Cpu().Equal(resource.MustParse("32")):
		t.Errorf("asks %v CPU, want the node's 32", p.Spec.Containers[0].Resources.Requests.Cpu())
	case len(p.Labels) != 0 || len(p.OwnerReferences) != 0 || p.Annotations["batch.kubernetes.io/job-completion-index"] != "":
		t.Errorf("passes for a pod of the Job: labels %v, owners %v, annotations %v", p.Labels, p.OwnerReferences, p.Annotations)
	case p.Annotations["kwok.x-k8s.io/stage"] != "run" || len(p.Spec.Tolerations) != 1 || p.Spec.Volumes != nil:
		t.Errorf("kwok annotations %v, tolerations %v, volumes %v", p.Annotations, p.Spec.Tolerations, p.Spec.Volumes)
	}
	if victim.Spec.NodeName != "node-1" || victim.Spec.Containers[0].Resources.Requests.Cpu().String() != "100m" {
		t.Error("the victim was changed")
	}
}

// The apiserver's Priority admission reads PriorityClasses from a cache: a
// preemptor refused for a class it has not seen yet is created again; any
// other refusal is returned as it is.
func TestCreatePreemptorWaitsForThePriorityClass(t *testing.T) {
	c := fake.NewClientset()
	refusals := 2
	c.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		if refusals > 0 {
			refusals--
			return true, nil, apierrors.NewForbidden(corev1.Resource("pods"), "preemptor-", errors.New("no PriorityClass with name jobconform-preemptor was found"))
		}
		return false, nil, nil
	})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	if err := createPreemptor(context.Background(), c, "ns", pod); err != nil || refusals != 0 {
		t.Fatalf("err %v, refusals left %d", err, refusals)
	}
	c2 := fake.NewClientset()
	c2.PrependReactor("create", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("pods"), "p", errors.New("exceeded quota"))
	})
	if err := createPreemptor(context.Background(), c2, "ns", pod); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "quota") {
		t.Fatalf("another refusal: %v", err)
	}
}
