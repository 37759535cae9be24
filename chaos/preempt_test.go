package chaos

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
