package controller

import (
	"context"
	"fmt"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
)

// A sync must not act on a Job older than the apiserver's: pod creations
// carry no precondition, so a status that does not count completions already
// made creates them again. Informers lag for milliseconds, but after an
// apiserver restart client-go's reflector may stay blind for minutes (its
// backoff waits up to 30s with as much jitter, twice: the watch, then the
// relist). Seen in drills: a Job informer 80s behind, a sync acting on it
// after a 30s wait, and a Job with completions 4 ending with 6 succeeded
// pods. So when the cache is known to be behind, the sync reads the Job
// from the apiserver instead.

// maxStaleVersions bounds the versions remembered per Job; forgetting them
// costs at most a conflicting write, after which the next sync reads live.
const maxStaleVersions = 32

// staleVersions are, by Job key, resourceVersions of Jobs the cache may still
// hold but the apiserver has replaced: the version a sync of ours wrote over,
// or the one a write of ours conflicted with.
type staleVersions struct {
	mu sync.Mutex
	m  map[string]sets.Set[string]
}

func newStaleVersions() *staleVersions { return &staleVersions{m: map[string]sets.Set[string]{}} }

func (s *staleVersions) add(key, rv string) {
	if rv == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[key] == nil || s.m[key].Len() >= maxStaleVersions {
		s.m[key] = sets.New[string]()
	}
	s.m[key].Insert(rv)
}

func (s *staleVersions) has(key, rv string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return rv != "" && s.m[key].Has(rv)
}

func (s *staleVersions) forget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
}

// jobToSync returns a copy of the Job to sync and its pods (nil Job: nothing
// to do). It is the cached Job unless the cache is known to be behind: it
// holds a replaced version (staleVersions), or its status does not count
// pods whose tracking finalizer already came off (succeededUncounted). Then
// it is the apiserver's, whatever that says: someone else may have removed
// a finalizer, and the apiserver's Job is the truth either way.
func (c *Controller) jobToSync(ctx context.Context, key string) (*batchv1.Job, []*corev1.Pod, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil, nil, err
	}
	job, err := c.jobLister.Jobs(ns).Get(name)
	live := false
	if err == nil && c.stale.has(key, job.ResourceVersion) {
		job, err = c.readJob(ctx, ns, name)
		live = true
	}
	for {
		if apierrors.IsNotFound(err) {
			c.forgetJob(key)
			return nil, nil, nil
		}
		if err != nil {
			return nil, nil, err
		}
		if !c.Manages(job) {
			// Checked here too, not only when queueing: a sync queued for a
			// Job may run on another made since under its name.
			return nil, nil, nil
		}
		pods, err := c.podsForJob(ctx, job)
		if err != nil {
			return nil, nil, err
		}
		if live || !succeededUncounted(job, pods, c.tracked) {
			return job.DeepCopy(), pods, nil
		}
		job, err = c.readJob(ctx, ns, name)
		live = true
	}
}

// readJob reads a Job from the apiserver, past the cache.
func (c *Controller) readJob(ctx context.Context, ns, name string) (*batchv1.Job, error) {
	c.metrics.LiveJobReads.Inc()
	job, err := c.client.BatchV1().Jobs(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading the Job past a stale cache: %w", err)
	}
	return job, err
}

// succeededUncounted: a succeeded pod without the tracking finalizer that
// job's status does not count. The finalizer of a succeeded pod comes off
// only after a status write recorded the pod (uncountedTerminatedPods, or
// completedIndexes), so such a status is not the latest.
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
