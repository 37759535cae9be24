package controller

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// A pod's finish time is its containers' last end, its sidecars' included
// (they end after its main containers), as upstream's getFinishedTime reads
// it; without every end, the Ready=False transition.
func TestFinishTimeCountsSidecars(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 11, 0, 0, 0, time.UTC)
	at := func(s int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(s) * time.Second)) }
	ended := func(name string, s int) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: at(s)}}}
	}
	running := func(name string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	}
	pod := func(init []corev1.ContainerStatus, main ...corev1.ContainerStatus) *corev1.Pod {
		return &corev1.Pod{
			Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "setup"}, {Name: "side", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}}},
			Status: corev1.PodStatus{ContainerStatuses: main, InitContainerStatuses: init,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: at(50)}}},
		}
	}
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		want int
	}{
		{"main containers only", pod(nil, ended("main", 3), ended("helper", 5)), 5},
		{"the sidecar ends last", pod([]corev1.ContainerStatus{ended("setup", 1), ended("side", 9)}, ended("main", 3)), 9},
		{"an init container is not a sidecar", pod([]corev1.ContainerStatus{ended("setup", 20), ended("side", 4)}, ended("main", 3)), 4},
		{"the sidecar still runs", pod([]corev1.ContainerStatus{ended("setup", 1), running("side")}, ended("main", 3)), 50},
		{"a main container never ran: the sidecar's end, as upstream", pod([]corev1.ContainerStatus{ended("side", 7)}, running("main")), 7},
	} {
		if got := finishTime(c.pod); !got.Equal(t0.Add(time.Duration(c.want) * time.Second)) {
			t.Errorf("%s: finished at +%v, want +%ds", c.name, got.Sub(t0), c.want)
		}
	}
}
