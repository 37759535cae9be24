// podFailurePolicy: which rule a failed pod matches, and what it counts.

package controller

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// matchFailurePolicy applies a podFailurePolicy to a failed pod: the first
// matching rule decides. It returns the FailJob message (nil otherwise),
// whether the failure counts towards backoffLimit, and the matched action.
func matchFailurePolicy(policy *batchv1.PodFailurePolicy, pod *corev1.Pod) (*string, bool, *batchv1.PodFailurePolicyAction) {
	if policy == nil {
		return nil, true, nil
	}
	for i, rule := range policy.Rules {
		action := rule.Action
		var msg string
		switch {
		case rule.OnExitCodes != nil:
			cs := matchExitCodes(pod, rule.OnExitCodes)
			if cs == nil {
				continue
			}
			msg = fmt.Sprintf("Container %s for pod %s/%s failed with exit code %v matching %v rule at index %d",
				cs.Name, pod.Namespace, pod.Name, cs.State.Terminated.ExitCode, action, i)
		case rule.OnPodConditions != nil:
			cond := matchPodConditions(pod, rule.OnPodConditions)
			if cond == nil {
				continue
			}
			msg = fmt.Sprintf("Pod %s/%s has condition %v matching %v rule at index %d", pod.Namespace, pod.Name, cond.Type, action, i)
		default:
			continue
		}
		switch action {
		case batchv1.PodFailurePolicyActionIgnore:
			return nil, false, &action
		case batchv1.PodFailurePolicyActionFailJob:
			return &msg, true, &action
		case batchv1.PodFailurePolicyActionFailIndex, batchv1.PodFailurePolicyActionCount:
			return nil, true, &action
		}
	}
	return nil, true, nil
}

// matchExitCodes finds a terminated container (regular first, then init) with
// a non-zero exit code the requirement matches.
func matchExitCodes(pod *corev1.Pod, req *batchv1.PodFailurePolicyOnExitCodesRequirement) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for i := range list {
			cs := &list[i]
			t := cs.State.Terminated
			if t == nil || t.ExitCode == 0 || (req.ContainerName != nil && *req.ContainerName != cs.Name) {
				continue
			}
			in := slices.Contains(req.Values, t.ExitCode)
			if (req.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && in) || (req.Operator == batchv1.PodFailurePolicyOnExitCodesOpNotIn && !in) {
				return cs
			}
		}
	}
	return nil
}

func matchPodConditions(pod *corev1.Pod, patterns []batchv1.PodFailurePolicyOnPodConditionsPattern) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		c := &pod.Status.Conditions[i]
		for _, p := range patterns {
			if c.Type == p.Type && c.Status == p.Status {
				return c
			}
		}
	}
	return nil
}

// failJobMessage: the FailJob message of the first failed pod a rule fails
// the Job for, among the pods it still tracks. A pod let go uncounted — one
// a suspension deleted, its finalizer removed first — is no failure of the
// Job; upstream reads every pod in its cache here and fails a Job by such a
// pod when it sees it Failed before it is gone (docs/bugs.md,
// suspend-killed-pod-fails-job). A failure that counts is still tracked when
// this runs: FailureTarget is written before its finalizer goes.
func (c *Controller) failJobMessage(job *batchv1.Job, pods []*corev1.Pod) *string {
	if job.Spec.PodFailurePolicy == nil {
		return nil
	}
	for _, p := range pods {
		if c.tracked(p) && c.podFailed(p, job) {
			if msg, _, _ := matchFailurePolicy(job.Spec.PodFailurePolicy, p); msg != nil {
				return msg
			}
		}
	}
	return nil
}

// countedFailures is how many of failed count towards backoffLimit (Ignore rules excluded).
func (c *Controller) countedFailures(job *batchv1.Job, failed []*corev1.Pod) int32 {
	n := int32(0)
	for _, p := range failed {
		if _, count, _ := matchFailurePolicy(job.Spec.PodFailurePolicy, p); count {
			n++
		}
	}
	return n
}
