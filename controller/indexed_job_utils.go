package controller

import (
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// indexSet is a set of completion indexes kept sorted, rendered the way
// status.completedIndexes and status.failedIndexes spell it: "1,3-5,7,8" —
// runs of three or more as a range, a pair as two numbers.
type indexSet []int

// parseIndexes reads "1,3-5,7", keeping indexes below limit and skipping
// malformed parts (the apiserver validates what is written).
func parseIndexes(s string, limit int) indexSet {
	var out indexSet
	if s == "" {
		return out
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		for i := a; i <= b && i < limit; i++ {
			out = append(out, i)
		}
	}
	return out.with()
}

// with returns the union of s and more, sorted and without duplicates.
func (s indexSet) with(more ...int) indexSet {
	all := append(append(indexSet(nil), s...), more...)
	sort.Ints(all)
	out := all[:0]
	for i, v := range all {
		if i == 0 || v != all[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func (s indexSet) has(i int) bool {
	j := sort.SearchInts(s, i)
	return j < len(s) && s[j] == i
}

func (s indexSet) String() string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(s[i]))
		switch {
		case j == i+1:
			b.WriteByte(',')
			b.WriteString(strconv.Itoa(s[j]))
		case j > i+1:
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(s[j]))
		}
		i = j + 1
	}
	return b.String()
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
		if ix >= 0 && ix < completions && c.tracked(p) && c.indexFailed(job, p) {
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
func (c *Controller) nextIndexFailureCounts(job *batchv1.Job, failed *corev1.Pod) (int32, int32) {
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
