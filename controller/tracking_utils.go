// Exactly-once accounting of finished pods (see the package doc): the three
// steps of trackStatus and what they need.

package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
)

// trackStatus accounts finished pods exactly once (see the package doc),
// writes the status when anything changed, and adds Failed or Complete once
// no pod terminates and nothing is uncounted.
func (c *Controller) trackStatus(ctx context.Context, st *syncState, needsFlush bool) error {
	key := jobKey(st.job)
	job := st.job
	status := &job.Status

	withFinalizer := sets.New[types.UID]()
	for _, p := range st.pods {
		if c.tracked(p) && !st.expectedRmFinal.Has(p.UID) {
			withFinalizer.Insert(p.UID)
		}
	}
	if moveCounted(status, withFinalizer) {
		needsFlush = true
	}

	toUnfinalize, newIndexes, full, changed := c.podsToUnfinalize(st)
	needsFlush = changed || needsFlush
	needsFlush = c.updateIndexes(st, newIndexes) || needsFlush
	interim := c.addInterimCondition(st)
	needsFlush = interim || needsFlush

	var rmErr error
	// Step 1: record the finished pods in uncountedTerminatedPods.
	if needsFlush {
		if err := c.writeStatus(ctx, st); err != nil {
			return fmt.Errorf("adding uncounted pods to status: %w", err)
		}
		c.backoff.update(key, st.backoff)
		needsFlush = false
	}
	c.recordPolicyActions(st)
	// Step 2: remove their finalizers.
	if len(toUnfinalize) > 0 {
		rmErr = c.removeFinalizers(ctx, key, toUnfinalize, withFinalizer)
	}
	// Step 3: count what lost its finalizer.
	if moveCounted(status, withFinalizer) {
		needsFlush = true
	}
	if rmErr != nil {
		if needsFlush {
			if err := c.writeStatus(ctx, st); err != nil {
				return errors.Join(rmErr, err)
			}
		}
		return rmErr
	}
	finishing := !full && c.enactFinished(st)
	if finishing || needsFlush {
		if err := c.writeStatus(ctx, st); err != nil {
			return fmt.Errorf("counting finished pods: %w", err)
		}
		if finishing {
			c.recordJobFinished(job, st.finished)
			c.recordFinished(job, st.finished)
			c.finishedJobs.Store(job.UID, struct{}{})
		}
	}
	return nil
}

// moveCounted moves uncounted UIDs whose pods no longer carry the finalizer
// into the counters; it reports whether anything moved.
func moveCounted(status *batchv1.JobStatus, withFinalizer sets.Set[types.UID]) bool {
	u := status.UncountedTerminatedPods
	keep := func(in []types.UID) []types.UID {
		var out []types.UID
		for _, uid := range in {
			if withFinalizer.Has(uid) {
				out = append(out, uid)
			}
		}
		return out
	}
	s, f := keep(u.Succeeded), keep(u.Failed)
	moved := len(s) != len(u.Succeeded) || len(f) != len(u.Failed)
	status.Succeeded += int32(len(u.Succeeded) - len(s))
	status.Failed += int32(len(u.Failed) - len(f))
	u.Succeeded, u.Failed = s, f
	return moved
}

// enactFinished adds Failed/Complete when nothing is uncounted and no pod terminates.
func (c *Controller) enactFinished(st *syncState) bool {
	if st.finished == nil {
		return false
	}
	u := st.job.Status.UncountedTerminatedPods
	if len(u.Succeeded)+len(u.Failed) > 0 {
		return false
	}
	if st.terminating > 0 {
		return false
	}
	setCondition(st.job, st.finished.Type, st.finished.Status, st.finished.Reason, st.finished.Message, c.clock.Now())
	if st.finished.Type == batchv1.JobComplete {
		st.job.Status.CompletionTime = ptr.To(condition(st.job, batchv1.JobComplete).LastTransitionTime)
	}
	return true
}

// podsToUnfinalize picks the pods whose tracking finalizer can go — their
// outcome is final — and records each in uncountedTerminatedPods (or, for
// Indexed Jobs, as a newly completed index) unless it is there already. full:
// uncountedTerminatedPods reached its limit, the rest waits for a later sync.
func (c *Controller) podsToUnfinalize(st *syncState) (toUnfinalize []*corev1.Pod, newIndexes []int, full, changed bool) {
	job := st.job
	uncounted := job.Status.UncountedTerminatedPods
	for _, p := range st.pods {
		if !c.tracked(p) || st.expectedRmFinal.Has(p.UID) {
			continue
		}
		failed := c.podFailed(p, job)
		// A pod's finalizer goes once its outcome is final: it finished, or
		// the Job is finishing or being deleted — except the last failed pod
		// of an index still to be retried (backoffLimitPerIndex).
		if !(job.DeletionTimestamp != nil || st.finished != nil || p.Status.Phase == corev1.PodSucceeded || failed) {
			continue
		}
		if job.DeletionTimestamp == nil && st.finished == nil && p.Status.Phase != corev1.PodSucceeded && st.delayed[completionIndex(p)] == p {
			continue
		}
		toUnfinalize = append(toUnfinalize, p)
		ix := completionIndex(p)
		switch {
		case p.Status.Phase == corev1.PodSucceeded && !st.uncountedFailed.Has(p.UID):
			if isIndexed(job) {
				if ix >= 0 && ix < int(*job.Spec.Completions) && !st.prevSucceededIndexes.has(ix) {
					newIndexes = append(newIndexes, ix)
					changed = true
				}
			} else if !st.uncountedSucceeded.Has(p.UID) {
				uncounted.Succeeded = append(uncounted.Succeeded, p.UID)
				changed = true
			}
		case failed || (st.finished != nil && st.finished.Type != batchv1.JobSuccessCriteriaMet):
			if !st.uncountedFailed.Has(p.UID) && (!isIndexed(job) || (ix >= 0 && ix < int(*job.Spec.Completions))) {
				_, counted, action := matchFailurePolicy(job.Spec.PodFailurePolicy, p)
				if action != nil && job.Spec.PodFailurePolicy != nil {
					st.policyActions[*action]++
				}
				if counted {
					uncounted.Failed = append(uncounted.Failed, p.UID)
					changed = true
				}
			}
		}
		if len(newIndexes)+len(uncounted.Succeeded)+len(uncounted.Failed) >= maxUncountedPods {
			return toUnfinalize, newIndexes, true, changed
		}
	}
	return toUnfinalize, newIndexes, false, changed
}

// updateIndexes writes completedIndexes (and failedIndexes under
// backoffLimitPerIndex) of an Indexed Job; it reports whether they changed.
func (c *Controller) updateIndexes(st *syncState, newIndexes []int) bool {
	job, status := st.job, &st.job.Status
	if !isIndexed(job) {
		return false
	}
	changed := false
	st.succeededIndexes = st.succeededIndexes.with(newIndexes...)
	if s := st.succeededIndexes.String(); s != status.CompletedIndexes {
		status.CompletedIndexes = s
		changed = true
	}
	status.Succeeded = int32(len(st.succeededIndexes))
	var failedIndexes *string
	if hasBackoffLimitPerIndex(job) {
		failedIndexes = ptr.To(st.failedIdx.String())
	}
	if !ptr.Equal(failedIndexes, status.FailedIndexes) {
		status.FailedIndexes = failedIndexes
		changed = true
	}
	return changed
}

// addInterimCondition writes FailureTarget or SuccessCriteriaMet when the
// Job is done, and turns st.finished into the terminal condition that
// follows once no pod terminates; it reports whether the status changed.
func (c *Controller) addInterimCondition(st *syncState) bool {
	job, status := st.job, &st.job.Status
	changed := false
	if st.finished != nil && st.finished.Type == batchv1.JobFailureTarget {
		if condition(job, batchv1.JobFailureTarget) == nil {
			status.Conditions = append(status.Conditions, *st.finished)
			changed = true
		}
		st.finished = c.newCondition(batchv1.JobFailed, st.finished.Reason, st.finished.Message)
	}
	if st.finished != nil && st.finished.Type == batchv1.JobSuccessCriteriaMet {
		if condition(job, batchv1.JobSuccessCriteriaMet) == nil {
			status.Conditions = append(status.Conditions, *st.finished)
			changed = true
		}
		st.finished = c.newCondition(batchv1.JobComplete, st.finished.Reason, st.finished.Message)
	}

	return changed
}

// removeFinalizers removes the tracking finalizer of pods (at once, in
// parallel), expecting each removal; a pod whose finalizer is gone leaves
// withFinalizer.
func (c *Controller) removeFinalizers(ctx context.Context, key string, pods []*corev1.Pod, withFinalizer sets.Set[types.UID]) error {
	if len(pods) == 0 {
		return nil
	}
	var uids []types.UID
	for _, p := range pods {
		uids = append(uids, p.UID)
	}
	c.finalizerExpectations.expect(key, uids...)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var errs []error
	for _, p := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := c.removeFinalizer(ctx, p)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && !apierrors.IsNotFound(err) {
				c.finalizerExpectations.observed(key, p.UID)
				errs = append(errs, err)
				return
			}
			withFinalizer.Delete(p.UID)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
