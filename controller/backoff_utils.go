package controller

import (
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// backoffRecord is what the pod-failure backoff needs of a Job: failures since
// its last success and when the last one happened. Like the built-in
// controller's, it lives in memory only: a restarted controller forgets it.
type backoffRecord struct {
	failuresAfterLastSuccess int32
	lastFailureTime          *time.Time
}

type backoffStore struct {
	mu sync.Mutex
	m  map[string]backoffRecord
}

func newBackoffStore() *backoffStore { return &backoffStore{m: map[string]backoffRecord{}} }

func (s *backoffStore) remove(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
}

func (s *backoffStore) update(key string, r backoffRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = r
}

// next folds pods that finished since the last count into the record.
func (s *backoffStore) next(key string, succeeded, failed []*corev1.Pod) backoffRecord {
	s.mu.Lock()
	r := s.m[key]
	s.mu.Unlock()
	byFinish := func(ps []*corev1.Pod) {
		sort.SliceStable(ps, func(i, j int) bool { return finishTime(ps[i]).Before(finishTime(ps[j])) })
	}
	byFinish(succeeded)
	byFinish(failed)
	if len(succeeded) == 0 {
		if len(failed) > 0 {
			r.failuresAfterLastSuccess += int32(len(failed))
			t := finishTime(failed[len(failed)-1])
			r.lastFailureTime = &t
		}
		return r
	}
	r = backoffRecord{}
	lastSuccess := finishTime(succeeded[len(succeeded)-1])
	for i := len(failed) - 1; i >= 0; i-- {
		t := finishTime(failed[i])
		if !t.After(lastSuccess) {
			break
		}
		if r.lastFailureTime == nil {
			r.lastFailureTime = &t
		}
		r.failuresAfterLastSuccess++
	}
	return r
}

// remaining is how long to wait before creating a replacement pod.
func (r backoffRecord) remaining(now time.Time) time.Duration {
	if r.failuresAfterLastSuccess == 0 || r.lastFailureTime == nil {
		return 0
	}
	d := DefaultPodFailureBackoff
	for i := int32(1); i < r.failuresAfterLastSuccess; i++ {
		d *= 2
		if d >= MaxPodFailureBackoff {
			d = MaxPodFailureBackoff
			break
		}
	}
	elapsed := now.Sub(*r.lastFailureTime)
	if d < elapsed {
		return 0
	}
	return d - elapsed
}

// finishTime is when a pod finished, as the kubelet and PodGC record it: the
// last container's finishedAt, else the Ready=False transition, else the
// deletion request (deletionTimestamp minus the grace period).
func finishTime(p *corev1.Pod) time.Time {
	var latest *time.Time
	complete := len(p.Status.ContainerStatuses) > 0
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Terminated == nil || cs.State.Terminated.FinishedAt.IsZero() {
			complete = false
			break
		}
		if t := cs.State.Terminated.FinishedAt.Time; latest == nil || t.After(*latest) {
			latest = &t
		}
	}
	if complete && latest != nil {
		return *latest
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionFalse && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	if p.DeletionTimestamp != nil {
		grace := int64(0)
		if p.DeletionGracePeriodSeconds != nil {
			grace = *p.DeletionGracePeriodSeconds
		}
		return p.DeletionTimestamp.Add(-time.Duration(grace) * time.Second)
	}
	return p.CreationTimestamp.Time
}
