package controller

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// syncState is one sync's view of a Job and its pods.
type syncState struct {
	job *batchv1.Job
	// readVersion is the resourceVersion the sync read job at.
	readVersion string
	events      []event // recorded once a status write carrying them succeeds
	pods        []*corev1.Pod
	active      []*corev1.Pod
	ready       int32
	terminating int32
	succeeded   int32 // counted + uncounted + newly finished
	failed      int32

	uncountedSucceeded sets.Set[types.UID]
	uncountedFailed    sets.Set[types.UID]
	expectedRmFinal    sets.Set[types.UID]

	prevSucceededIndexes indexSet
	succeededIndexes     indexSet
	failedIdx            indexSet            // backoffLimitPerIndex only
	delayed              map[int]*corev1.Pod // backoffLimitPerIndex: last failed pod per index to retry

	backoff backoffRecord
	// written are the counters as last written (or read), for the metrics.
	written counters
	// policyActions count the failed pods each pod failure policy action
	// handled, recorded in the metrics once the status write before their
	// finalizers' removal succeeds.
	policyActions map[batchv1.PodFailurePolicyAction]int
	// finished is the condition this sync works towards: FailureTarget or
	// SuccessCriteriaMet first, Failed or Complete once nothing terminates.
	finished *batchv1.JobCondition
}

func (c *Controller) syncJob(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx).WithValues("job", key)
	// Before the pods are listed (as upstream): a creation observed in
	// between must not leave a list without it and expectations met.
	satisfied := c.expectations.satisfied(key)
	// The finalizer removals still expected, read before the pods: a removal
	// observed between the two would leave a stale pod, still finalized and
	// finished, looking uncounted, and it would be counted twice (seen at
	// 1,000 pods: succeeded=1000 with 990 pods succeeded).
	expectedRmFinal := c.finalizerExpectations.get(key)
	job, pods, err := c.jobToSync(ctx, key)
	if err != nil || job == nil {
		return err
	}
	if jobFinished(job) {
		c.backoff.remove(key)
		c.finishedJobs.Delete(job.UID)
		c.stale.forget(key)
		return nil
	}
	if _, done := c.finishedJobs.Load(job.UID); done {
		return nil // our terminal write is not in the cache yet
	}
	if job.Spec.CompletionMode != nil && *job.Spec.CompletionMode != batchv1.NonIndexedCompletion && *job.Spec.CompletionMode != batchv1.IndexedCompletion {
		c.recorder.Event(job, corev1.EventTypeWarning, "UnknownCompletionMode", "Skipped Job sync because completion mode is unknown")
		return nil
	}
	if job.Status.UncountedTerminatedPods == nil {
		job.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	}
	st := c.observePods(key, job, pods, expectedRmFinal)
	active := int32(len(st.active))
	toDelete := st.active // when the Job is finishing
	if !satisfied {
		// The cache has not shown all of our creations or deletions yet (seen:
		// a pod informer blind for 87s after an apiserver restart, and a status
		// saying active=0 a second after the sync that created two pods).
		active = c.expectations.activeNow(key, st.active)
		// The pods we deleted are neither active nor ready, nor to delete
		// again: counting them ready made status.ready exceed status.active,
		// and deleting them again made it negative — both writes refused
		// (422) while a Job of 1,000 running pods was suspended or failed.
		toDelete = c.expectations.notDeleting(key, st.active)
		st.terminating += int32(len(st.active) - len(toDelete)) // ours, being deleted
		st.ready = 0
		for _, p := range toDelete {
			if podReady(p) {
				st.ready++
			}
		}
	}
	c.decideFinish(key, st)

	suspendChanged := false
	var podsErr error // pod creation or deletion failed: report it after the status is tracked
	if st.finished != nil {
		deletedReady, deleted, err := c.deletePods(ctx, key, job, toDelete, false)
		if deleted != active || !satisfied {
			st.finished = nil // not everything is gone yet: finish on a later sync
		}
		active -= deleted
		st.terminating += deleted
		st.ready -= deletedReady
		podsErr = err
	} else {
		managed := false
		if satisfied && job.DeletionTimestamp == nil {
			active, podsErr = c.manageJob(ctx, key, st)
			managed = true
		}
		complete := false
		if job.Spec.Completions == nil {
			complete = st.succeeded > 0 && active == 0
		} else {
			complete = st.succeeded >= *job.Spec.Completions && active == 0
		}
		if complete {
			st.finished = c.newCondition(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonCompletionsReached, "Reached expected number of succeeded pods")
		} else if managed {
			suspendChanged = c.updateSuspended(st)
		}
	}
	needsFlush := suspendChanged || active != job.Status.Active || !ptr.Equal(ptr.To(st.ready), job.Status.Ready)
	job.Status.Active = active
	job.Status.Ready = ptr.To(st.ready)
	needsFlush = c.setTerminating(job, st.terminating) || needsFlush
	logger.V(4).Info("synced", "active", active, "ready", st.ready, "terminating", st.terminating, "succeeded", st.succeeded, "failed", st.failed)
	if err := c.trackStatus(ctx, st, needsFlush); err != nil {
		return fmt.Errorf("tracking status: %w", err)
	}
	return podsErr
}

// observePods is the first half of a sync: what the pods say — active,
// ready and terminating pods, the pods finished since the last count, the
// counters they make, the start time and the backoff they lead to.
func (c *Controller) observePods(key string, job *batchv1.Job, pods []*corev1.Pod, expectedRmFinal sets.Set[types.UID]) *syncState {
	st := &syncState{
		job:                job,
		readVersion:        job.ResourceVersion,
		pods:               pods,
		uncountedSucceeded: sets.New(job.Status.UncountedTerminatedPods.Succeeded...),
		uncountedFailed:    sets.New(job.Status.UncountedTerminatedPods.Failed...),
		expectedRmFinal:    expectedRmFinal,
		written:            countersOf(job),
		policyActions:      map[batchv1.PodFailurePolicyAction]int{},
	}
	for _, p := range pods {
		if podActive(p) {
			st.active = append(st.active, p)
			if podReady(p) {
				st.ready++
			}
		}
		if podTerminating(p) {
			st.terminating++
		}
	}
	newSucceeded, newFailed := c.newlyFinished(st)
	st.succeeded = job.Status.Succeeded + int32(len(newSucceeded)) + int32(st.uncountedSucceeded.Len())
	st.failed = job.Status.Failed + c.countedFailures(job, newFailed) + int32(st.uncountedFailed.Len())

	if job.Status.StartTime == nil && !suspended(job) {
		job.Status.StartTime = ptr.To(metav1.NewTime(c.clock.Now()))
	}
	st.backoff = c.backoff.next(key, newSucceeded, newFailed)

	return st
}

// decideFinish is the second half: whether the Job is done, in the built-in
// controller's order — SuccessCriteriaMet or FailureTarget already set, a
// FailJob rule, the backoff limit, the deadline, the per-index limits, a
// success policy. It sets st.finished (nil: not done) and queues the Job for
// its deadline.
func (c *Controller) decideFinish(key string, st *syncState) {
	job := st.job
	st.finished = condition(job, batchv1.JobSuccessCriteriaMet)
	if st.finished == nil {
		if ft := condition(job, batchv1.JobFailureTarget); ft != nil {
			st.finished = ft
		} else if msg := c.failJobMessage(job, st.pods); msg != nil {
			st.finished = c.newCondition(batchv1.JobFailureTarget, batchv1.JobReasonPodFailurePolicy, *msg)
		}
	}
	if st.finished == nil {
		switch {
		case st.failed > *job.Spec.BackoffLimit || pastBackoffLimitOnFailure(job, st.pods):
			st.finished = c.newCondition(batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit")
		case c.pastActiveDeadline(job):
			st.finished = c.newCondition(batchv1.JobFailureTarget, batchv1.JobReasonDeadlineExceeded, "Job was active longer than specified deadline")
		case job.Spec.ActiveDeadlineSeconds != nil && !suspended(job):
			left := time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second - c.clock.Since(job.Status.StartTime.Time)
			c.queue.AddAfter(key, left)
		}
	}
	if isIndexed(job) {
		st.prevSucceededIndexes, st.succeededIndexes = c.succeededIndexes(job, st.pods)
		st.succeeded = int32(len(st.succeededIndexes))
		if hasBackoffLimitPerIndex(job) {
			st.failedIdx = c.failedIndexes(job, st.pods)
			if st.finished == nil {
				failed, completions := len(st.failedIdx), int(*job.Spec.Completions)
				if job.Spec.MaxFailedIndexes != nil && failed > int(*job.Spec.MaxFailedIndexes) {
					st.finished = c.newCondition(batchv1.JobFailureTarget, batchv1.JobReasonMaxFailedIndexesExceeded, "Job has exceeded the specified maximal number of failed indexes")
				} else if failed > 0 && failed+len(st.succeededIndexes) >= completions {
					st.finished = c.newCondition(batchv1.JobFailureTarget, batchv1.JobReasonFailedIndexes, "Job has failed indexes")
				}
			}
			st.delayed = c.delayedDeletion(st)
		}
		if st.finished == nil {
			if msg, met := matchSuccessPolicy(job.Spec.SuccessPolicy, int(*job.Spec.Completions), st.succeededIndexes); met {
				st.finished = c.newCondition(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonSuccessPolicy, msg)
			}
		}
	}

}

// setTerminating writes status.terminating unless the gate is off (then the
// field stays unset, as before KEP-3939). It reports whether it changed.
func (c *Controller) setTerminating(job *batchv1.Job, n int32) bool {
	var want *int32
	if c.opts.Gates.Enabled(JobPodReplacementPolicy) {
		want = ptr.To(n)
	}
	changed := !ptr.Equal(want, job.Status.Terminating)
	job.Status.Terminating = want
	return changed
}

func (c *Controller) updateSuspended(st *syncState) bool {
	job := st.job
	now := c.clock.Now()
	if suspended(job) {
		changed := setCondition(job, batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended", now)
		if changed {
			st.events = append(st.events, event{corev1.EventTypeNormal, "Suspended", "Job suspended"})
			job.Status.StartTime = nil
		}
		return changed
	}
	changed := setCondition(job, batchv1.JobSuspended, corev1.ConditionFalse, "JobResumed", "Job resumed", now)
	if changed {
		st.events = append(st.events, event{corev1.EventTypeNormal, "Resumed", "Job resumed"})
		job.Status.StartTime = ptr.To(metav1.NewTime(now))
	}
	return changed
}

// newlyFinished lists pods that finished and are not counted nor uncounted yet.
func (c *Controller) newlyFinished(st *syncState) (succeeded, failed []*corev1.Pod) {
	for _, p := range c.countablePods(st) {
		switch {
		case p.Status.Phase == corev1.PodSucceeded:
			succeeded = append(succeeded, p)
		case c.podFailed(p, st.job):
			failed = append(failed, p)
		}
	}
	return succeeded, failed
}

// countablePods: pods still carrying the tracking finalizer, not being
// un-finalized by us, not already uncounted, and (Indexed) with a valid index.
func (c *Controller) countablePods(st *syncState) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range st.pods {
		if !c.tracked(p) || st.expectedRmFinal.Has(p.UID) || st.uncountedSucceeded.Has(p.UID) || st.uncountedFailed.Has(p.UID) {
			continue
		}
		if isIndexed(st.job) {
			ix := completionIndex(p)
			if ix < 0 || ix >= int(*st.job.Spec.Completions) {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// manageJob creates and deletes pods towards parallelism, and returns the new
// active count.
func (c *Controller) manageJob(ctx context.Context, key string, st *syncState) (int32, error) {
	job := st.job
	active := int32(len(st.active))
	var errs []error
	if suspended(job) {
		// Pods a suspension removes are not the Job's failures: released
		// first, they are never counted (upstream deleteJobPods).
		ready, n, err := c.deletePods(ctx, key, job, st.active, true)
		active -= n
		st.terminating += n
		st.ready -= ready
		return active, err
	}
	parallelism := ptr.Deref(job.Spec.Parallelism, 1)
	var want int32
	if job.Spec.Completions == nil {
		if st.succeeded > 0 {
			want = active
		} else {
			want = parallelism
		}
	} else {
		want = min(max(*job.Spec.Completions-st.succeeded, 0), parallelism)
	}
	remaining := activeWithoutRemoved(st.active, nil)
	extra := max(active-want, 0)
	if victims := c.podsForRemoval(job, st.active, int(min(extra, int32(c.opts.MaxPodsPerSync)))); len(victims) > 0 {
		ready, n, err := c.deletePods(ctx, key, job, victims, true)
		active -= n
		st.terminating += n
		st.ready -= ready
		remaining = activeWithoutRemoved(st.active, victims)
		if err != nil {
			errs = append(errs, err)
		}
	}
	// Under podReplacementPolicy Failed, terminating pods still hold their slot.
	var holding int32
	if c.onlyReplaceFailed(job) {
		holding = st.terminating
	}
	diff := want - holding - active
	if diff <= 0 {
		return active, errors.Join(errs...)
	}
	if !hasBackoffLimitPerIndex(job) {
		if wait := st.backoff.remaining(c.clock.Now()); wait > 0 {
			c.queue.AddAfter(key, wait)
			return active, errors.Join(errs...)
		}
	}
	diff = min(diff, int32(c.opts.MaxPodsPerSync))
	indexes := []int(nil)
	if isIndexed(job) {
		indexes = c.pendingIndexes(st, remaining, int(diff))
		if hasBackoffLimitPerIndex(job) {
			indexes = c.indexesPastBackoff(key, st, indexes)
		}
		diff = int32(len(indexes))
	}
	// The reason as upstream's recordJobPodsCreationTotal gives it (v1.31-
	// v1.37): what this sync saw — a failure, a pod terminating.
	reason := reasonNew
	if c.opts.Gates.Enabled(JobPodReplacementPolicy) {
		switch {
		case c.onlyReplaceFailed(job) && st.failed > 0:
			reason = reasonRecreateFailed
		case st.failed > 0 || st.terminating > 0:
			reason = reasonRecreateTerminatingOrFailed
		}
	}
	c.expectations.expectCreations(key, int(diff))
	created, err := c.createPods(ctx, key, st, int(diff), indexes)
	c.metrics.PodsCreated.WithLabelValues(reason, "succeeded").Add(float64(created))
	if int(diff)-created > 0 {
		c.metrics.PodsCreated.WithLabelValues(reason, "failed").Add(float64(int(diff) - created))
	}
	active += int32(created)
	if err != nil {
		errs = append(errs, err)
	}
	return active, errors.Join(errs...)
}

func activeWithoutRemoved(active, removed []*corev1.Pod) []*corev1.Pod {
	gone := sets.New[types.UID]()
	for _, p := range removed {
		gone.Insert(p.UID)
	}
	var out []*corev1.Pod
	for _, p := range active {
		if !gone.Has(p.UID) {
			out = append(out, p)
		}
	}
	return out
}

// pendingIndexes: the first n indexes with no success and no active pod (nor,
// under podReplacementPolicy Failed, a terminating one).
func (c *Controller) pendingIndexes(st *syncState, active []*corev1.Pod, n int) []int {
	taken := sets.New[int]()
	for _, ix := range st.succeededIndexes {
		taken.Insert(ix)
	}
	for _, ix := range st.failedIdx {
		taken.Insert(ix)
	}
	for _, p := range active {
		taken.Insert(completionIndex(p))
	}
	if c.onlyReplaceFailed(st.job) {
		for _, p := range st.pods {
			if podTerminating(p) {
				taken.Insert(completionIndex(p))
			}
		}
	}
	var out []int
	for ix := 0; ix < int(*st.job.Spec.Completions) && len(out) < n; ix++ {
		if !taken.Has(ix) {
			out = append(out, ix)
		}
	}
	return out
}

// indexesPastBackoff keeps the indexes whose own backoff (backoffLimitPerIndex)
// has run out; if none has, it schedules a sync for the earliest.
func (c *Controller) indexesPastBackoff(key string, st *syncState, indexes []int) []int {
	var now []int
	var soonest time.Duration
	for _, ix := range indexes {
		wait := c.indexBackoff(st.delayed[ix])
		if wait == 0 {
			now = append(now, ix)
		} else if soonest == 0 || wait < soonest {
			soonest = wait
		}
	}
	if len(now) == 0 && soonest > 0 {
		c.queue.AddAfter(key, soonest)
	}
	return now
}

// createPods creates n pods (of the given indexes for Indexed Jobs) in
// slow-start batches of 1, 2, 4, …, stopping at the first batch with errors.
func (c *Controller) createPods(ctx context.Context, key string, st *syncState, n int, indexes []int) (int, error) {
	job := st.job
	created := 0
	var errs []error
	var mu sync.Mutex
	for batch := min(1, n); n > 0; batch = min(2*batch, n) {
		var wg sync.WaitGroup
		failedBefore := len(errs)
		for i := 0; i < batch; i++ {
			ix := -1
			if len(indexes) > 0 {
				ix, indexes = indexes[0], indexes[1:]
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				pod := newPod(job, ix, c.finalizer)
				if hasBackoffLimitPerIndex(job) {
					count, ignored := c.nextIndexFailureCounts(job, st.delayed[ix])
					pod.Annotations[batchv1.JobIndexFailureCountAnnotation] = strconv.Itoa(int(count))
					if ignored > 0 {
						pod.Annotations[batchv1.JobIndexIgnoredFailureCountAnnotation] = strconv.Itoa(int(ignored))
					}
				}
				out, err := c.client.CoreV1().Pods(job.Namespace).Create(ctx, pod, metav1.CreateOptions{})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					c.expectations.creationObserved(key)
					if !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
						errs = append(errs, err)
						c.recorder.Eventf(job, corev1.EventTypeWarning, "FailedCreate", "Error creating: %v", err)
					}
					return
				}
				created++
				c.recorder.Eventf(job, corev1.EventTypeNormal, "SuccessfulCreate", "Created pod: %v", out.Name)
			}()
		}
		wg.Wait()
		n -= batch
		if len(errs) > failedBefore && n > 0 {
			for i := 0; i < n; i++ { // not attempted: not expected either
				c.expectations.creationObserved(key)
			}
			break
		}
	}
	return created, errors.Join(errs...)
}

// deletePods deletes pods (those already going are skipped) and returns how
// many ready ones and how many in all it removed. release removes a pod's
// tracking finalizer first, so that it is never counted (suspension, excess
// pods); without it the pod is counted when it finishes (a failing Job).
func (c *Controller) deletePods(ctx context.Context, key string, job *batchv1.Job, pods []*corev1.Pod, release bool) (int32, int32, error) {
	var uids []types.UID
	for _, p := range pods {
		uids = append(uids, p.UID)
	}
	c.expectations.expectDeletions(key, uids)
	var ready, removed int32
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, p := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if release {
				err = c.removeFinalizer(ctx, p)
			}
			deleting := err == nil
			if deleting {
				err = c.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil && !apierrors.IsNotFound(err) {
				c.expectations.deletionObserved(key, p.UID)
				errs = append(errs, err)
				if deleting {
					// As upstream's pod control: a refused DELETE is an
					// event, a refused release (deleteJobPods' patch) is
					// not (explore-11-2, the apiserver refusing both).
					c.recorder.Eventf(job, corev1.EventTypeWarning, "FailedDelete", "Error deleting: %v", err)
				}
				return
			}
			if apierrors.IsNotFound(err) {
				c.expectations.deletionObserved(key, p.UID)
			}
			removed++
			if podReady(p) {
				ready++
			}
			c.recorder.Eventf(job, corev1.EventTypeNormal, "SuccessfulDelete", "Deleted pod: %v", p.Name)
		}()
	}
	wg.Wait()
	return ready, removed, errors.Join(errs...)
}

func (c *Controller) recordFinished(job *batchv1.Job, cond *batchv1.JobCondition) {
	if cond.Type == batchv1.JobComplete {
		if job.Spec.Completions != nil && job.Status.Succeeded > *job.Spec.Completions {
			c.recorder.Event(job, corev1.EventTypeWarning, "TooManySucceededPods", "Too many succeeded pods running after completion count reached")
		}
		c.recorder.Event(job, corev1.EventTypeNormal, "Completed", "Job completed")
		return
	}
	c.recorder.Event(job, corev1.EventTypeWarning, cond.Reason, cond.Message)
}

// writeStatus writes job.Status; a rejection is counted by reason, and an
// Invalid one (a status the apiserver's validation refuses) is logged loudly:
// it is a bug in this controller.
// writeStatus writes st.job's status, then records the events of the
// transitions it carries: an event recorded before a write that fails (a
// conflict with a newer Job than the informer's) would be recorded again by
// the sync that retries it.
func (c *Controller) writeStatus(ctx context.Context, st *syncState) error {
	job := st.job
	key := jobKey(job)
	base := job.ResourceVersion
	out, err := c.client.BatchV1().Jobs(job.Namespace).UpdateStatus(ctx, job, metav1.UpdateOptions{})
	if err == nil || apierrors.IsConflict(err) {
		// Either way the versions this write built on are gone: a sync
		// that finds one in the cache reads the Job live (jobToSync).
		c.stale.add(key, st.readVersion)
		c.stale.add(key, base)
	}
	if err != nil {
		reason := string(apierrors.ReasonForError(err))
		if reason == "" {
			reason = "Other"
		}
		c.metrics.StatusWriteErrors.WithLabelValues(reason).Inc()
		if apierrors.IsInvalid(err) {
			klog.FromContext(ctx).Error(err, "BUG: the apiserver rejected a Job status write", "job", jobKey(job))
		}
		return err
	}
	job.ResourceVersion = out.ResourceVersion
	c.recordPodsFinished(st)
	for _, e := range st.events {
		c.recorder.Event(job, e.eventType, e.reason, e.message)
	}
	st.events = nil
	return nil
}

// event is one to record once the status that says it is written.
type event struct{ eventType, reason, message string }

func (c *Controller) newCondition(t batchv1.JobConditionType, reason, message string) *batchv1.JobCondition {
	now := metav1.NewTime(c.clock.Now())
	return &batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: message, LastProbeTime: now, LastTransitionTime: now}
}

func (c *Controller) pastActiveDeadline(job *batchv1.Job) bool {
	if job.Spec.ActiveDeadlineSeconds == nil || job.Status.StartTime == nil || suspended(job) {
		return false
	}
	return c.clock.Since(job.Status.StartTime.Time) >= time.Duration(*job.Spec.ActiveDeadlineSeconds)*time.Second
}

// pastBackoffLimitOnFailure: with restartPolicy OnFailure, failures show as
// container restarts; the Job fails once they add up to backoffLimit.
func pastBackoffLimitOnFailure(job *batchv1.Job, pods []*corev1.Pod) bool {
	if job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyOnFailure {
		return false
	}
	var restarts int32
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodPending {
			continue
		}
		for _, cs := range p.Status.InitContainerStatuses {
			restarts += cs.RestartCount
		}
		for _, cs := range p.Status.ContainerStatuses {
			restarts += cs.RestartCount
		}
	}
	if *job.Spec.BackoffLimit == 0 {
		return restarts > 0
	}
	return restarts >= *job.Spec.BackoffLimit
}

// succeededIndexes: the indexes counted before (status.completedIndexes) and
// those plus the newly succeeded pods that still carry the finalizer.
func (c *Controller) succeededIndexes(job *batchv1.Job, pods []*corev1.Pod) (prev, all indexSet) {
	completions := int(*job.Spec.Completions)
	prev = parseIndexes(job.Status.CompletedIndexes, completions)
	var more []int
	for _, p := range pods {
		ix := completionIndex(p)
		if p.Status.Phase == corev1.PodSucceeded && ix >= 0 && ix < completions && c.tracked(p) {
			more = append(more, ix)
		}
	}
	return prev, prev.with(more...)
}

func suspended(job *batchv1.Job) bool { return ptr.Deref(job.Spec.Suspend, false) }

func jobFinished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// condition returns the True condition of type t, or nil.
func condition(job *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		if job.Status.Conditions[i].Type == t && job.Status.Conditions[i].Status == corev1.ConditionTrue {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

// setCondition sets a condition's status, reporting whether anything changed;
// an absent condition with status False is not added (a Job that was never
// suspended has no Suspended condition).
func setCondition(job *batchv1.Job, t batchv1.JobConditionType, s corev1.ConditionStatus, reason, message string, now time.Time) bool {
	for i := range job.Status.Conditions {
		c := &job.Status.Conditions[i]
		if c.Type != t {
			continue
		}
		if c.Status == s && c.Reason == reason && c.Message == message {
			return false
		}
		if c.Status != s {
			c.LastTransitionTime = metav1.NewTime(now)
		}
		c.Status, c.Reason, c.Message, c.LastProbeTime = s, reason, message, metav1.NewTime(now)
		return true
	}
	if s == corev1.ConditionFalse {
		return false
	}
	t0 := metav1.NewTime(now)
	job.Status.Conditions = append(job.Status.Conditions, batchv1.JobCondition{Type: t, Status: s, Reason: reason, Message: message, LastProbeTime: t0, LastTransitionTime: t0})
	return true
}
