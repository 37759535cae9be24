package controller

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
)

// staleFor bounds how long a sync waits for the Job informer to catch up
// with the pod informer (statusBehind): informer lag is seconds, and a
// finalizer removed by someone else must not stop the controller for good.
const staleFor = 30 * time.Second

// statusBehind tells whether the cached Job is older than its pods show: the
// tracking finalizer of a succeeded pod comes off only after a status write
// recorded the pod (uncountedTerminatedPods, or completedIndexes), so a
// status that does not count such a pod is not the latest. Acting on it
// would recreate completions already done — seen in a drill after an
// apiserver restart, the pod informer ahead of the Job informer: pods for
// every index of a Job that had met its success criteria. The sync waits
// for the newer Job instead, at most staleFor.
func (c *Controller) statusBehind(key string, job *batchv1.Job, pods []*corev1.Pod) bool {
	if !succeededUncounted(job, pods, c.tracked) {
		c.behindSince.Delete(key)
		return false
	}
	first, _ := c.behindSince.LoadOrStore(key, c.clock.Now())
	if c.clock.Since(first.(time.Time)) > staleFor {
		klog.Background().Info("Job status still behind its pods; acting on it", "job", key, "after", staleFor)
		return false
	}
	return true
}

// succeededUncounted: a succeeded pod without the tracking finalizer that
// job's status does not count.
func succeededUncounted(job *batchv1.Job, pods []*corev1.Pod, tracked func(*corev1.Pod) bool) bool {
	uncounted := sets.New[types.UID]()
	if u := job.Status.UncountedTerminatedPods; u != nil {
		uncounted.Insert(u.Succeeded...)
	}
	released := 0
	var done indexSet
	if isIndexed(job) {
		done = parseIndexes(job.Status.CompletedIndexes, int(*job.Spec.Completions))
	}
	for _, p := range pods {
		if p.Status.Phase != corev1.PodSucceeded || tracked(p) || uncounted.Has(p.UID) {
			continue
		}
		if isIndexed(job) {
			if ix := completionIndex(p); ix >= 0 && ix < int(*job.Spec.Completions) && !done.has(ix) {
				return true
			}
			continue
		}
		released++
	}
	return int32(released) > job.Status.Succeeded
}
