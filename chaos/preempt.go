// Preemption: a higher-priority pod that only fits where the chosen pods run.

package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// PreemptorPriorityClass is the PriorityClass of the pods that preempt
// (cluster-wide: made by the run that preempts, deleted when it closes).
const PreemptorPriorityClass = "jobconform-preemptor"

// PreemptionReason is the reason kube-scheduler gives the DisruptionTarget
// condition of the pods it preempts (since 1.26).
const PreemptionReason = "PreemptionByScheduler"

// preempt makes kube-scheduler preempt the chosen pods: for each of their
// nodes, a pod of a higher priority that asks for all the node's CPU and
// may run only there. The chosen pods must request some CPU (the scenario's
// template says so), or they leave room and nothing is preempted. It
// returns once every chosen pod carries DisruptionTarget with reason
// PreemptionByScheduler.
func (in *Injector) preempt(ctx context.Context, sel Selection, rng *rand.Rand) (string, error) {
	c := in.Env.Client()
	targets, err := in.choose(ctx, sel, rng, func(p *corev1.Pod) bool { return p.Spec.NodeName != "" && requestsCPU(p) })
	if err != nil {
		return "", fmt.Errorf("%w (preempt chooses pods that request CPU: give the template's container a cpu request)", err)
	}
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: PreemptorPriorityClass}, Value: 1000000,
		Description: "jobconform's preempt chaos action"}
	switch _, err := c.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); {
	case err == nil:
		in.priorityClass = true
	case !apierrors.IsAlreadyExists(err):
		return "", fmt.Errorf("create PriorityClass %s: %w", PreemptorPriorityClass, err)
	}
	var nodes []string
	for _, p := range targets {
		if slices.Contains(nodes, p.Spec.NodeName) {
			continue
		}
		nodes = append(nodes, p.Spec.NodeName)
		node, err := c.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		if err := createPreemptor(ctx, c, in.Namespace, preemptor(&p, node)); err != nil {
			return "", fmt.Errorf("create the preemptor for %s: %w", node.Name, err)
		}
	}
	effect := "preempted " + describe(targets) + " for a pod asking all the CPU of " + strings.Join(nodes, ", ")
	var why string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, in.waitTimeout(), true, func(ctx context.Context) (bool, error) {
		for _, t := range targets {
			p, err := c.CoreV1().Pods(in.Namespace).Get(ctx, t.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				continue // preempted and gone already
			}
			if err != nil {
				return false, nil
			}
			cond := podCondition(p, corev1.DisruptionTarget)
			switch {
			case cond == nil:
				why = "pod " + p.Name + " has no DisruptionTarget condition"
				return false, nil
			case cond.Reason != PreemptionReason:
				return false, fmt.Errorf("pod %s got DisruptionTarget with reason %q, not %s", p.Name, cond.Reason, PreemptionReason)
			}
		}
		return true, nil
	})
	if err != nil {
		return effect, fmt.Errorf("kube-scheduler did not preempt within %s (%s): %w", in.waitTimeout(), why, err)
	}
	return effect, nil
}

// createPreemptor creates pod, again while the apiserver's Priority
// admission has not yet seen the PriorityClass just made: it reads them
// from an informer's cache, and on a loaded machine that lags the write
// (seen in make run, 2026-11-29: "no PriorityClass with name
// jobconform-preemptor was found" a few milliseconds after its creation).
func createPreemptor(ctx context.Context, c kubernetes.Interface, ns string, pod *corev1.Pod) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, last = c.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		switch {
		case last == nil:
			return true, nil
		case apierrors.IsForbidden(last) && strings.Contains(last.Error(), "no PriorityClass with name"):
			return false, nil
		}
		return false, last
	})
	if err != nil && last != nil {
		return last
	}
	return err
}

// preemptor is a pod that fits on node only once victim's kind is gone:
// it asks for all the node's allocatable CPU, tolerates what victim
// tolerates, may run on node alone, and matches no Job's selector.
func preemptor(victim *corev1.Pod, node *corev1.Node) *corev1.Pod {
	spec := victim.Spec.DeepCopy()
	spec.NodeName = ""
	spec.Hostname, spec.Subdomain = "", ""
	spec.PriorityClassName, spec.Priority = PreemptorPriorityClass, nil
	spec.NodeSelector = map[string]string{corev1.LabelHostname: node.Name}
	spec.Affinity = nil
	spec.ReadinessGates = nil
	spec.Volumes = nil // the service account's token is mounted again on admission
	spec.Containers = spec.Containers[:1]
	spec.InitContainers = nil
	spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: node.Status.Allocatable[corev1.ResourceCPU]}}
	spec.Containers[0].Env, spec.Containers[0].VolumeMounts = nil, nil
	annotations := map[string]string{}
	for k, v := range victim.Annotations { // how kwok plays the pod, if it does
		if strings.Contains(k, "kwok") || strings.HasPrefix(k, "jobconform.io/") {
			annotations[k] = v
		}
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "preemptor-", Annotations: annotations}, Spec: *spec}
}

func requestsCPU(p *corev1.Pod) bool {
	for _, c := range p.Spec.Containers {
		if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok && !q.IsZero() {
			return true
		}
	}
	return false
}

func podCondition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// deletePriorityClass deletes the preemptors' PriorityClass (pods that
// already have their priority keep it).
func deletePriorityClass(ctx context.Context, c kubernetes.Interface) error {
	err := c.SchedulingV1().PriorityClasses().Delete(ctx, PreemptorPriorityClass, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete PriorityClass %s: %w", PreemptorPriorityClass, err)
	}
	return nil
}
