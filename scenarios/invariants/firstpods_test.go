package invariants

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// A Job's first pod at once: a controller that writes the new Job's
// status and waits out a deleted predecessor's backoff (mutant
// keep-backoff-on-recreate) is late by cause; one that writes nothing, by
// the clock (FirstPodsWithin).
func TestFirstPodsOnTime(t *testing.T) {
	created := func(j *batchv1.Job) {
		j.CreationTimestamp = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	}

	ok := newBuilder(created)
	ok.wait(2 * time.Second)
	ok.pod("a", nil)
	expectOK(t, FirstPodsOnTime, Context{}, ok)

	waited := newBuilder(created)
	waited.status(func(s *batchv1.JobStatus) { s.StartTime = ptr.To(metav1.NewTime(waited.now)) })
	waited.wait(18 * time.Second)
	waited.pod("a", nil)
	expectViolation(t, FirstPodsOnTime, Context{}, waited, "wrote the Job's status with no pod, and made its first pod 18.1s later")
	// Not by cause on a starved machine: then the clock (30 s).
	starved := Context{Starved: func(from, to time.Time) string { return "run queue 20 per CPU" }}
	expectOK(t, FirstPodsOnTime, starved, waited)
	// Its pod seen a second after the status write of the sync that made it.
	prompt := newBuilder(created)
	prompt.status(func(s *batchv1.JobStatus) { s.Active = 1 })
	prompt.wait(time.Second)
	prompt.pod("a", nil)
	expectOK(t, FirstPodsOnTime, Context{}, prompt)
	late := newBuilder(created)
	late.wait(39 * time.Second)
	late.pod("a", nil)
	expectViolation(t, FirstPodsOnTime, starved, late, "first pod came 39.1s after the Job was created (bound 30s)")

	// Not owed: created suspended, or a pod creation refused first.
	suspended := newBuilder(created, func(j *batchv1.Job) { j.Spec.Suspend = ptr.To(true) })
	suspended.wait(39 * time.Second)
	suspended.pod("a", nil)
	expectOK(t, FirstPodsOnTime, Context{}, suspended)
	refused := newBuilder(created)
	refused.wait(time.Second)
	refused.add("Event", "ADDED", &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e1"}, Type: corev1.EventTypeWarning, Reason: "FailedCreate",
		InvolvedObject: corev1.ObjectReference{Kind: "Job", Name: "j"}, LastTimestamp: metav1.NewTime(refused.now)})
	refused.wait(39 * time.Second)
	refused.pod("a", nil)
	expectOK(t, FirstPodsOnTime, Context{}, refused)
	// Nor across a restart of the controller, nor when the recording began
	// after the Job was made.
	restarted := newBuilder(created)
	restarted.wait(39 * time.Second)
	restarted.pod("a", nil)
	expectOK(t, FirstPodsOnTime, Context{Restarts: []time.Time{restarted.now.Add(-30 * time.Second)}}, restarted)
	listed := newBuilder(func(j *batchv1.Job) { created(j); j.CreationTimestamp.Time = j.CreationTimestamp.Add(-time.Minute) })
	listed.wait(39 * time.Second)
	listed.pod("a", nil)
	expectOK(t, FirstPodsOnTime, Context{}, listed)
}
