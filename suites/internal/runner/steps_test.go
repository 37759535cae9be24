package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/recorder"
	"github.com/jobconform/jobconform/scenarios"
)

// An await after an act is met only by the Job's status from when the act
// began on: a status from before it must not satisfy it. Here the Job ran
// two pods, was suspended and never comes back, so "active 2" after the
// resume must time out; it was once met by the status from before the
// suspension, which let a controller that never resumes pass.
func TestAwaitAfterActIgnoresStatusFromBeforeIt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: JobName}}
	client := fake.NewClientset(job)
	rec, err := recorder.Start(ctx, client, "ns")
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop()
	setStatus := func(active int32, suspended bool) error {
		j, err := client.BatchV1().Jobs("ns").Get(ctx, JobName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		j.Status.Active = active
		j.Status.Conditions = nil
		if suspended {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: "True"}}
		}
		_, err = client.BatchV1().Jobs("ns").UpdateStatus(ctx, j, metav1.UpdateOptions{})
		return err
	}
	if err := setStatus(2, false); err != nil {
		t.Fatal(err)
	}
	await := func(p scenarios.StatusPattern) scenarios.Step {
		return scenarios.Step{Await: &p, Timeout: scenarios.Duration{Duration: 2 * time.Second}}
	}
	steps := []scenarios.Step{
		await(scenarios.StatusPattern{Active: ptr.To[int32](2)}),
		{Act: &scenarios.Action{Kind: scenarios.ActSuspend}},
		// two awaits in a row: one status may meet both
		await(scenarios.StatusPattern{Active: ptr.To[int32](0), Conditions: []string{"Suspended"}}),
		await(scenarios.StatusPattern{Conditions: []string{"Suspended"}}),
		{Act: &scenarios.Action{Kind: scenarios.ActResume}},
		await(scenarios.StatusPattern{Active: ptr.To[int32](2), NotConditions: []string{"Suspended"}}),
	}
	go func() {
		// the controller suspends the Job, then does nothing more
		time.Sleep(300 * time.Millisecond)
		if err := setStatus(0, true); err != nil {
			t.Error(err)
		}
	}()
	res := stepper{client: client, ns: "ns", rec: rec, version: "v1.37.1", builtIn: true}.runSteps(ctx, steps)
	var got []string
	for _, r := range res {
		got = append(got, r.What+": "+map[bool]string{true: "ok", false: "FAILED " + r.Message}[r.OK])
	}
	if len(res) != len(steps) || !res[0].OK || !res[2].OK || !res[3].OK || res[5].OK || !strings.Contains(res[5].Message, "active=0, want 2") {
		t.Fatalf("steps:\n%s", strings.Join(got, "\n"))
	}
}

// An await with holds must keep matching: a status that changes within the
// window fails it, one that stays passes it.
func TestAwaitHolds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: JobName}, Status: batchv1.JobStatus{Active: 0}}
	client := fake.NewClientset(job)
	rec, err := recorder.Start(ctx, client, "ns")
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop()
	hold := scenarios.Step{Await: &scenarios.StatusPattern{Active: ptr.To[int32](0)}, Holds: scenarios.Duration{Duration: time.Second}}
	sp := stepper{client: client, ns: "ns", rec: rec, version: "v1.37.1", builtIn: true}
	if res := sp.runSteps(ctx, []scenarios.Step{hold}); !res[0].OK || !strings.Contains(res[0].What, "holding 1s") {
		t.Fatalf("a status that stays: %+v", res[0])
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		j, err := client.BatchV1().Jobs("ns").Get(ctx, JobName, metav1.GetOptions{})
		if err == nil {
			j.Status.Active = 2
			_, err = client.BatchV1().Jobs("ns").UpdateStatus(ctx, j, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Error(err)
		}
	}()
	if res := sp.runSteps(ctx, []scenarios.Step{hold}); res[0].OK || !strings.Contains(res[0].Message, "held only") || !strings.Contains(res[0].Message, "active=2") {
		t.Fatalf("a status that changes: %+v", res[0])
	}
}

// TestFollows: after a recreation the steps follow the new Job alone; a
// dispatched Job's recording, which grafts the copy's UID onto the
// manager's Job, is followed whatever the UID (its awaitGone once waited
// forever for a deletion recorded under the copy's UID).
func TestFollows(t *testing.T) {
	current := types.UID("new")
	entry := func(name string, uid types.UID) recorder.Entry {
		return recorder.Entry{Kind: "Job", Name: name, Object: &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, UID: uid}}}
	}
	sp := stepper{current: &current}
	if !sp.follows(entry(JobName, "new")) || sp.follows(entry(JobName, "old")) {
		t.Error("a recreated Job: only the new one is followed")
	}
	sp.copy = JobName + recorder.WorkerSuffix
	if !sp.follows(entry(JobName, "copy-uid")) || !sp.follows(entry(sp.copy, "copy-uid")) {
		t.Error("a dispatched Job: its entries and its copy's are followed whatever their UID")
	}
}

// An await stopped by an interrupt says so, and is no timeout; one whose
// scenario timeout ran out first says that.
func TestNotReached(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, stop := context.WithTimeout(context.Background(), -time.Second)
	defer stop()
	for _, tc := range []struct {
		ctx      context.Context
		want     string
		timedOut bool
	}{
		{context.Background(), "not reached within 4m0s", true},
		{cancelled, "interrupted before it was reached", false},
		{expired, "not reached before the scenario's own timeout ran out", true},
	} {
		if msg, to := notReached(tc.ctx, 4*time.Minute); msg != tc.want || to != tc.timedOut {
			t.Errorf("got %q %v, want %q %v", msg, to, tc.want, tc.timedOut)
		}
	}
}

// A step's description names every part of its pattern: an await of the
// Job's end, and an empty index list, are not blank (a failure line read
// "step 4 (await )" and "completedIndexes=" before).
func TestDescribePattern(t *testing.T) {
	for _, tc := range []struct {
		p    scenarios.StatusPattern
		want string
	}{
		{scenarios.StatusPattern{Finished: true}, "finished"},
		{scenarios.StatusPattern{Active: ptr.To(int32(1)), CompletedIndexes: ptr.To("")}, `active=1 completedIndexes=""`},
		{scenarios.StatusPattern{FailedIndexes: ptr.To("0,2")}, "failedIndexes=0,2"},
	} {
		if got := describePattern(tc.p); got != tc.want {
			t.Errorf("describePattern(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
}

// A refusal of the controller's pod changes that cannot be made (its
// identity unknown to the harness) skips the rest of the run, which was
// written for the refusal, rather than fail it; made refusals and their
// ends are what the invariants treat as restarts.
func TestRefusalWithoutIdentitySkipsTheRest(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := fake.NewClientset(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: JobName}})
	rec, err := recorder.Start(ctx, client, "ns")
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop()
	steps := []scenarios.Step{
		{Act: &scenarios.Action{Kind: scenarios.ActRefusePodChanges}},
		{Await: &scenarios.StatusPattern{Succeeded: ptr.To[int32](2)}, Timeout: scenarios.Duration{Duration: time.Minute}},
		{Act: &scenarios.Action{Kind: scenarios.ActAllowPodChanges}},
	}
	external := Controller{Name: "mine", ManagedBy: ptr.To("example.com/mine")}
	res := stepper{client: client, pods: client, ns: "ns", rec: rec, version: "v1.37.1", controller: external}.runSteps(ctx, steps)
	if len(res) != 2 || !res[0].Skipped || !res[1].Skipped || res[1].What != "the rest" || !strings.Contains(res[0].Message, "identity") {
		t.Fatalf("steps: %+v", res)
	}
	if why := recreateSkipped(res); why == "" {
		t.Error("the run is not skipped")
	}
	at := time.Now()
	made := []StepResult{{What: "act " + scenarios.ActRefusePodChanges, OK: true, Time: at}, {What: "act " + scenarios.ActAllowPodChanges, OK: true, Time: at.Add(time.Second)},
		{What: "act " + scenarios.ActDeletePod, OK: true, Time: at}}
	if got := refusalTimes(made); len(got) != 2 {
		t.Errorf("refusal times: %v", got)
	}
	// The spans of refused status writes: a refusal of pods alone is none.
	sc := &scenarios.Scenario{Steps: []scenarios.Step{
		{Act: &scenarios.Action{Kind: scenarios.ActRefusePodChanges}},
		{Act: &scenarios.Action{Kind: scenarios.ActAllowPodChanges}},
		{Act: &scenarios.Action{Kind: scenarios.ActRefusePodChanges, Refuse: []string{scenarios.RefuseJobStatus}}},
		{Act: &scenarios.Action{Kind: scenarios.ActAllowPodChanges}},
		{Act: &scenarios.Action{Kind: scenarios.ActRefusePodChanges, Refuse: []string{scenarios.RefusePods, scenarios.RefuseJobStatus}}},
	}}
	var ran []StepResult
	for i := range sc.Steps {
		ran = append(ran, StepResult{Index: i, OK: true, Time: at.Add(time.Duration(i) * time.Second)})
	}
	spans := statusRefusals(sc, ran)
	if len(spans) != 2 || !spans[0].From.Equal(at.Add(2*time.Second)) || !spans[0].To.Equal(at.Add(3*time.Second)) || !spans[1].To.IsZero() {
		t.Errorf("status refusals: %+v", spans)
	}
}
