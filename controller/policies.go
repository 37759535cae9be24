package controller

import (
	"fmt"
	"slices"
	"strconv"
	"time"

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

// failJobMessage: the FailJob message of the first failed pod a rule fails the Job for.
func (c *Controller) failJobMessage(job *batchv1.Job, pods []*corev1.Pod) *string {
	if job.Spec.PodFailurePolicy == nil {
		return nil
	}
	for _, p := range pods {
		if c.podFailed(p, job) {
			if msg, _, _ := matchFailurePolicy(job.Spec.PodFailurePolicy, p); msg != nil {
				return msg
			}
		}
	}
	return nil
}

// countedFailures is how many of failed count towards backoffLimit (Ignore rules excluded).
func countedFailures(job *batchv1.Job, failed []*corev1.Pod) int32 {
	n := int32(0)
	for _, p := range failed {
		if _, count, _ := matchFailurePolicy(job.Spec.PodFailurePolicy, p); count {
			n++
		}
	}
	return n
}

// matchSuccessPolicy: the first rule the succeeded indexes satisfy (Indexed Jobs only).
func matchSuccessPolicy(policy *batchv1.SuccessPolicy, completions int, succeeded indexSet) (string, bool) {
	if policy == nil || len(succeeded) == 0 {
		return "", false
	}
	for i, rule := range policy.Rules {
		if rule.SucceededIndexes != nil {
			required := parseIndexes(*rule.SucceededIndexes, completions)
			if len(required) == 0 {
				continue
			}
			have := 0
			for _, ix := range required {
				if succeeded.has(ix) {
					have++
				}
			}
			if have == len(required) || (rule.SucceededCount != nil && have >= int(*rule.SucceededCount)) {
				return fmt.Sprintf("Matched rules at index %d", i), true
			}
		} else if rule.SucceededCount != nil && len(succeeded) >= int(*rule.SucceededCount) {
			return fmt.Sprintf("Matched rules at index %d", i), true
		}
	}
	return "", false
}

func hasBackoffLimitPerIndex(job *batchv1.Job) bool {
	return isIndexed(job) && job.Spec.BackoffLimitPerIndex != nil
}

func annotationInt(p *corev1.Pod, key string) int32 {
	if p == nil {
		return 0
	}
	v, err := strconv.ParseInt(p.Annotations[key], 10, 32)
	if err != nil || v < 0 {
		return 0
	}
	return int32(v)
}

// indexFailed: a failed pod fails its index under backoffLimitPerIndex when a
// FailIndex rule matches, or its counted failures reached the per-index limit.
func (c *Controller) indexFailed(job *batchv1.Job, p *corev1.Pod) bool {
	if !c.podFailed(p, job) {
		return false
	}
	counted := true
	if job.Spec.PodFailurePolicy != nil {
		_, count, action := matchFailurePolicy(job.Spec.PodFailurePolicy, p)
		if action != nil && *action == batchv1.PodFailurePolicyActionFailIndex {
			return true
		}
		counted = count
	}
	return counted && annotationInt(p, batchv1.JobIndexFailureCountAnnotation) >= *job.Spec.BackoffLimitPerIndex
}

// failedIndexes: status.failedIndexes plus the indexes newly failed by pods
// that still carry the finalizer.
func (c *Controller) failedIndexes(job *batchv1.Job, pods []*corev1.Pod) indexSet {
	completions := int(*job.Spec.Completions)
	var prev indexSet
	if job.Status.FailedIndexes != nil {
		prev = parseIndexes(*job.Status.FailedIndexes, completions)
	}
	var more []int
	for _, p := range pods {
		ix := completionIndex(p)
		if ix >= 0 && ix < completions && hasTrackingFinalizer(p) && c.indexFailed(job, p) {
			more = append(more, ix)
		}
	}
	return prev.with(more...)
}

// delayedDeletion picks, per index still to be retried, the last failed pod:
// it keeps its finalizer (and so stays) until its replacement exists, because
// the replacement's failure count is read from it.
func (c *Controller) delayedDeletion(st *syncState) map[int]*corev1.Pod {
	active := map[int]bool{}
	for _, p := range st.active {
		active[completionIndex(p)] = true
	}
	out := map[int]*corev1.Pod{}
	for _, p := range c.countablePods(st) {
		if !c.podFailed(p, st.job) {
			continue
		}
		ix := completionIndex(p)
		if st.succeededIndexes.has(ix) || st.failedIdx.has(ix) || active[ix] {
			continue
		}
		if last, ok := out[ix]; !ok || (absoluteFailures(last) <= absoluteFailures(p) && !finishTime(p).Before(finishTime(last))) {
			out[ix] = p
		}
	}
	return out
}

func absoluteFailures(p *corev1.Pod) int32 {
	return annotationInt(p, batchv1.JobIndexFailureCountAnnotation) + annotationInt(p, batchv1.JobIndexIgnoredFailureCountAnnotation)
}

// nextIndexFailureCounts are the failure-count annotations of the pod that
// replaces failed (nil: the first pod of its index).
func nextIndexFailureCounts(job *batchv1.Job, failed *corev1.Pod) (int32, int32) {
	if failed == nil {
		return 0, 0
	}
	count := annotationInt(failed, batchv1.JobIndexFailureCountAnnotation)
	ignored := annotationInt(failed, batchv1.JobIndexIgnoredFailureCountAnnotation)
	if _, counted, _ := matchFailurePolicy(job.Spec.PodFailurePolicy, failed); counted {
		count++
	} else {
		ignored++
	}
	return count, ignored
}

// indexBackoff is how long index's replacement must wait after failed.
func (c *Controller) indexBackoff(failed *corev1.Pod) time.Duration {
	if failed == nil {
		return 0
	}
	t := finishTime(failed)
	r := backoffRecord{failuresAfterLastSuccess: absoluteFailures(failed) + 1, lastFailureTime: &t}
	return r.remaining(c.clock.Now())
}
