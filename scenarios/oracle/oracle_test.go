package oracle

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
)

// run is a recording of a Job named "job" with the given UID, tracked by
// finalizer: two pods created, both succeed, the Job completes.
func run(uid, finalizer string, mutate func(*batchv1.Job, []*corev1.Pod)) timeline.Timeline {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "job", UID: types.UID(uid)}}
	var pods []*corev1.Pod
	for i, name := range []string{"job-" + uid[:3] + "a", "job-" + uid[:3] + "b"} {
		pods = append(pods, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, GenerateName: "job-", UID: types.UID(uid + string(rune('a'+i))),
				Labels:          map[string]string{"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "job"},
				Finalizers:      []string{finalizer},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "job", UID: types.UID(uid), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: corev1.PodSpec{NodeName: "node-" + name, RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "c", Image: "busybox",
				VolumeMounts: []corev1.VolumeMount{{Name: "kube-api-access-" + uid[:5]}}}},
				Volumes: []corev1.Volume{{Name: "kube-api-access-" + uid[:5]}}},
		})
	}
	job.Status = batchv1.JobStatus{Succeeded: 2, Ready: ptr.To[int32](0), Terminating: ptr.To[int32](0), StartTime: ptr.To(metav1.Now()), CompletionTime: ptr.To(metav1.Now()),
		UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{},
		Conditions:              []batchv1.JobCondition{{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached"}, {Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached"}}}
	if mutate != nil {
		mutate(job, pods)
	}
	var t timeline.Timeline
	now := time.Now()
	for _, p := range pods {
		t = append(t, timeline.Entry{Seq: len(t), Time: now, Type: timeline.Added, Kind: "Pod", Name: p.Name, Object: p})
	}
	for i := range pods {
		ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "ev" + uid + string(rune('a'+i))}, InvolvedObject: corev1.ObjectReference{Kind: "Job", Name: "job"}, Type: "Normal", Reason: "SuccessfulCreate", Count: 1}
		t = append(t, timeline.Entry{Seq: len(t), Time: now, Type: timeline.Added, Kind: "Event", Name: ev.Name, Object: ev})
	}
	t = append(t, timeline.Entry{Seq: len(t), Time: now, Type: timeline.Modified, Kind: "Job", Name: "job", Object: job})
	return t
}

// Two correct runs differ in names, UIDs, nodes and their tracking
// finalizers, and in nothing the oracle compares.
func TestSameRunsAgree(t *testing.T) {
	builtin := Observe(run("11111111", batchv1.JobTrackingFinalizer, nil), "job", batchv1.JobTrackingFinalizer)
	other := Observe(run("22222222", "jobconform.io/job-tracking", nil), "job", "jobconform.io/job-tracking")
	if ds := Compare(builtin, other, nil); len(ds) != 0 {
		t.Fatalf("want no difference, got %v", ds)
	}
	if len(builtin.Pods) != 1 || builtin.Pods[firstKey(builtin.Pods)] != 2 {
		t.Fatalf("two pods of one shape: %v", builtin.Pods)
	}
	if got := strings.Join(builtin.Conditions, ","); got != "SuccessCriteriaMet=True/CompletionsReached,Complete=True/CompletionsReached" {
		t.Fatalf("conditions: %s", got)
	}
}

// A Job being deleted owes no status: its last status before the deletion
// is compared, not whatever the controller wrote while its pods went (seen
// on kubelet nodes: the built-in's last write said terminating=2, the
// reference's 0, both correct).
func TestDeletedJobComparedAsItWasBeforeTheDeletion(t *testing.T) {
	deleting := func(uid string, terminating int32) timeline.Timeline {
		tl := run(uid, "f", nil)
		j := tl[len(tl)-1].Job().DeepCopy()
		j.DeletionTimestamp = ptr.To(metav1.Now())
		j.Status.Terminating = ptr.To(terminating)
		return append(tl, timeline.Entry{Kind: "Job", Type: timeline.Modified, Name: "job", Object: j}, timeline.Entry{Kind: "Job", Type: timeline.Deleted, Name: "job", Object: j})
	}
	a, b := Observe(deleting("11111111", 2), "job", "f"), Observe(deleting("22222222", 0), "job", "f")
	if ds := Compare(a, b, nil); len(ds) != 0 {
		t.Fatalf("want no difference, got %v", ds)
	}
	if a.Final["deleted"] != "yes" || a.Final["terminating"] != "0" {
		t.Fatalf("final: %v", a.Final)
	}
	if ds := Compare(a, Observe(run("33333333", "f", nil), "job", "f"), nil); len(ds) != 1 || ds[0].Field != "status.deleted" {
		t.Fatalf("a Job deleted against one that was not: %v", ds)
	}
}

// A dispatched Job is compared on what its user sees: the manager's status
// and conditions; a queue's own suspension is not the Job controller's, and
// a Job deleted mid-run compares on its deletion alone.
func TestDispatched(t *testing.T) {
	builtin := &Observation{Final: map[string]string{"succeeded": "1", "conditions": "Complete=True/CompletionsReached"},
		Conditions: []string{"Complete=True/CompletionsReached"}, Events: map[string]int{"Normal/Completed": 1}, Pods: map[string]int{"shape": 1}}
	queued := &Observation{Final: map[string]string{"succeeded": "1", "conditions": "Suspended=False/JobResumed, Complete=True/CompletionsReached"},
		Conditions: []string{"Suspended=True/JobSuspended", "Suspended=False/JobResumed", "Complete=True/CompletionsReached"}}
	if ds := Compare(builtin, queued.Dispatched(true), nil); len(ds) != 0 {
		t.Fatalf("a queued, dispatched run: %v", ds)
	}
	wrong := &Observation{Final: map[string]string{"succeeded": "0", "conditions": ""}}
	if ds := Compare(builtin, wrong.Dispatched(false), nil); len(Failing(ds)) != 3 {
		t.Fatalf("a dispatched run with the wrong status: %v", ds)
	}
	deleted := &Observation{Final: map[string]string{"succeeded": "0", "deleted": "yes"}}
	if ds := Compare(&Observation{Final: map[string]string{"succeeded": "1", "deleted": "yes"}}, deleted.Dispatched(false), nil); len(ds) != 0 {
		t.Fatalf("a dispatched Job deleted mid-run: %v", ds)
	}
}

// Counters are compared where both runs read them: a rise one controller
// made and the other did not is a difference; a run that read none (a
// parallel scenario, a controller without /metrics) compares nothing, and
// "read, none rose" survives being kept on disk.
func TestCounters(t *testing.T) {
	series := `job_controller_jobs_finished_total{completion_mode="NonIndexed",reason="",result="succeeded"}`
	builtin := &Observation{Counters: map[string]float64{series: 1}}
	none := &Observation{Counters: map[string]float64{}}
	ds := Compare(builtin, none, nil)
	if len(Failing(ds)) != 1 || ds[0].Field != "counters."+series || ds[0].BuiltIn != "1" || ds[0].Other != "0" {
		t.Fatalf("a counter that did not rise: %v", ds)
	}
	if ds := Compare(builtin, &Observation{}, nil); len(ds) != 0 {
		t.Fatalf("a run that read no counters: %v", ds)
	}
	data, _ := json.Marshal(none)
	var back Observation
	if err := json.Unmarshal(data, &back); err != nil || back.Counters == nil {
		t.Fatalf("read, none rose, kept as %s: %v", data, back.Counters)
	}
}

func firstKey(m map[string]int) string {
	for k := range m {
		return k
	}
	return ""
}
