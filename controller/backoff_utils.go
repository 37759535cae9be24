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

// finishTime is when a pod finished, as the kubelet and PodGC record it:
// the last container's finishedAt (its sidecars' included, which end after
// its main containers), else the Ready=False transition, else the deletion
// request (deletionTimestamp minus the grace period) — upstream's
// getFinishedTime (v1.37.1; v1.36.3 the same behind the SidecarContainers
// gate, GA and on).
func finishTime(p *corev1.Pod) time.Time {
	if t := containersFinish(p); t != nil {
		return *t
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

// containersFinish is upstream's getFinishTimeFromContainers: the latest
// finishedAt of the main containers, then of the sidecars (restartable
// init containers), nil when one of a list has not finished — so, as
// upstream, the sidecars' alone when a main container has no end.
func containersFinish(p *corev1.Pod) *time.Time {
	t := latestFinish(nil, p.Status.ContainerStatuses, nil)
	if len(p.Spec.InitContainers) == 0 {
		return t // no sidecar: no map (finishTime runs inside sorts)
	}
	sidecars := map[string]bool{}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
		}
	}
	return latestFinish(t, p.Status.InitContainerStatuses, sidecars)
}

// latestFinish is the latest finishedAt of cs (of the names in only, when
// only is not nil) and prev, nil when one of them has not finished.
func latestFinish(prev *time.Time, cs []corev1.ContainerStatus, only map[string]bool) *time.Time {
	out := prev
	for _, c := range cs {
		if only != nil && !only[c.Name] {
			continue
		}
		t := c.State.Terminated
		if t == nil || t.FinishedAt.IsZero() {
			return nil
		}
		if out == nil || out.Before(t.FinishedAt.Time) {
			out = &t.FinishedAt.Time
		}
	}
	return out
}
