package oracle

import (
	"encoding/json"
	"slices"
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

// What a broken controller gets wrong that no invariant names: each shows
// as a difference naming the field and both values.
func TestDifferencesFound(t *testing.T) {
	builtin := Observe(run("11111111", batchv1.JobTrackingFinalizer, nil), "job", batchv1.JobTrackingFinalizer)
	cases := map[string]func(*batchv1.Job, []*corev1.Pod){
		"status.failed":                  func(j *batchv1.Job, _ []*corev1.Pod) { j.Status.Failed = 1 },
		"status.completionTime":          func(j *batchv1.Job, _ []*corev1.Pod) { j.Status.CompletionTime = nil },
		"conditions":                     func(j *batchv1.Job, _ []*corev1.Pod) { j.Status.Conditions[1].Reason = "Done" },
		"pods.shape":                     func(_ *batchv1.Job, ps []*corev1.Pod) { ps[1].Spec.Containers[0].Image = "other" },
		"events.Normal/SuccessfulCreate": nil,
		"status.uncountedTerminatedPods": func(j *batchv1.Job, _ []*corev1.Pod) { j.Status.UncountedTerminatedPods.Failed = []types.UID{"x"} },
		"status.ready":                   func(j *batchv1.Job, _ []*corev1.Pod) { j.Status.Ready = nil },
	}
	for field, mutate := range cases {
		tl := run("22222222", "f", mutate)
		if mutate == nil { // one event more
			ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "extra"}, InvolvedObject: corev1.ObjectReference{Kind: "Job", Name: "job"}, Type: "Normal", Reason: "SuccessfulCreate", Count: 2}
			tl = append(tl, timeline.Entry{Kind: "Event", Type: timeline.Added, Object: ev})
		}
		ds := Compare(builtin, Observe(tl, "job", "f"), nil)
		found := false
		for _, d := range ds {
			if d.Field == field || strings.HasPrefix(d.Field, field) {
				found = true
			}
		}
		if !found || len(Failing(ds)) == 0 {
			t.Errorf("%s: not found in %v", field, ds)
		}
	}
}

// A scenario's allowed difference is listed, marked, and fails nothing.
func TestAllowed(t *testing.T) {
	builtin := Observe(run("11111111", "f", nil), "job", "f")
	other := Observe(run("22222222", "f", func(j *batchv1.Job, _ []*corev1.Pod) { j.Status.Failed = 3 }), "job", "f")
	ds := Compare(builtin, other, map[string]string{"status.": "which pods fail depends on timing"})
	if len(ds) != 1 || ds[0].Allowed == "" || len(Failing(ds)) != 0 {
		t.Fatalf("got %v", ds)
	}
	if !strings.Contains(ds[0].String(), "built-in 0, this controller 3") {
		t.Fatalf("%s", ds[0])
	}
}

// An allowed event may differ in its count, not in being recorded at all.
func TestAllowedEventCountsOnly(t *testing.T) {
	allowed := map[string]string{"events.Warning/FailedCreate": "the refused retries depend on timing"}
	builtin := &Observation{Events: map[string]int{"Warning/FailedCreate": 4}}
	more := &Observation{Events: map[string]int{"Warning/FailedCreate": 9}}
	if ds := Compare(builtin, more, allowed); len(ds) != 1 || len(Failing(ds)) != 0 {
		t.Fatalf("a count: %v", ds)
	}
	none := &Observation{Events: map[string]int{}}
	if ds := Compare(builtin, none, allowed); len(Failing(ds)) != 1 {
		t.Fatalf("no FailedCreate event at all passed: %v", ds)
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

func TestStore(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	if _, ok, err := s.Get("x"); ok || err != nil {
		t.Fatal(ok, err)
	}
	if ok, _ := s.Claim("x"); !ok {
		t.Fatal("claim")
	}
	if at, ok := s.ClaimedAt("x"); !ok || time.Since(at) > time.Minute {
		t.Fatal("claim")
	}
	if ok, _ := s.Claim("x"); ok {
		t.Fatal("claimed twice")
	}
	o := Observe(run("11111111", "f", nil), "job", "f")
	if err := s.Put("x", o); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.Get("x")
	if !ok || err != nil || len(Compare(o, got, nil)) != 0 {
		t.Fatal(ok, err)
	}
}

func firstKey(m map[string]int) string {
	for k := range m {
		return k
	}
	return ""
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

// Learn: what the built-in's own two runs differ in is noise, excused for
// another controller on that field alone; runs that end apart are racy.
func TestLearnNoise(t *testing.T) {
	obs := func(uid string, mutate func(*batchv1.Job, []*corev1.Pod)) *Observation {
		return Observe(run(uid, batchv1.JobTrackingFinalizer, mutate), "job", batchv1.JobTrackingFinalizer)
	}
	twoEvents := func(j *batchv1.Job, _ []*corev1.Pod) { j.Status.Failed = 1 }
	learned := Learn(obs("11111111", nil), obs("33333333", twoEvents))
	if learned.Racy != "" || learned.Runs != 2 {
		t.Fatalf("runs that end alike: want not racy and 2 runs, got %q, %d", learned.Racy, learned.Runs)
	}
	if _, ok := learned.Noise["status.failed"]; !ok || len(learned.Noise) != 1 {
		t.Fatalf("want status.failed as the only noise, got %v", learned.Noise)
	}
	if v := learned.NoiseValues["status.failed"]; !slices.Equal(v, []string{"0", "1"}) {
		t.Fatalf("status.failed's values: want the runs' 0 and 1, got %v", v)
	}
	// Another controller is excused on the noisy field only for a value
	// the built-in's runs showed (for a number, within their range); on any
	// other field, and above the range, it is not.
	for _, tc := range []struct {
		failed  int32
		excused bool
	}{{1, true}, {0, true}, {2, false}} {
		other := obs("22222222", func(j *batchv1.Job, _ []*corev1.Pod) { j.Status.Failed = tc.failed; j.Status.Succeeded = 3 })
		ds := Compare(learned, other, nil)
		var fields []string
		for _, d := range Failing(ds) {
			fields = append(fields, d.Field)
		}
		want := []string{"status.succeeded"}
		if !tc.excused {
			want = []string{"status.failed", "status.succeeded"}
		}
		if !slices.Equal(fields, want) {
			t.Errorf("status.failed %d against the built-in's 0 and 1: failing %v, want %v (%v)", tc.failed, fields, want, ds)
		}
		for _, d := range ds {
			if d.Field == "status.failed" && !tc.excused && !strings.Contains(d.BuiltIn, "its runs: 0, 1") {
				t.Errorf("the verdict does not name the built-in's values: %v", d)
			}
		}
	}
	// A third run widens the values by what it showed, no more.
	third := Learn(learned, obs("44444444", func(j *batchv1.Job, _ []*corev1.Pod) { j.Status.Failed = 3 }))
	if v := third.NoiseValues["status.failed"]; !slices.Equal(v, []string{"0", "1", "3"}) {
		t.Errorf("three runs' values: got %v, want 0, 1, 3", v)
	}

	failed := func(j *batchv1.Job, _ []*corev1.Pod) {
		j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}, {Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"}}
	}
	if r := Learn(obs("11111111", nil), obs("33333333", failed)).Racy; !strings.Contains(r, "ended apart") {
		t.Errorf("a Complete and a Failed run: want racy, got %q", r)
	}
	broke := obs("33333333", nil)
	broke.Failed = []string{"invariant x"}
	if r := Learn(obs("11111111", nil), broke).Racy; !strings.Contains(r, "broke a promise") {
		t.Errorf("one run broke a promise: want racy, got %q", r)
	}
}

// An event a scenario says may be lost may be missing from either run; an
// allowance of its count alone (differ) does not excuse that.
func TestMayLose(t *testing.T) {
	builtin := Observe(run("11111111", "f", nil), "job", "f")
	other := Observe(run("22222222", "f", nil), "job", "f")
	other.Events = map[string]int{}
	differ := map[string]string{"events.Normal/SuccessfulCreate": "counts vary"}
	if f := Failing(Compare(builtin, other, differ)); len(f) != 1 {
		t.Fatalf("a missing event excused by a count allowance: %v", f)
	}
	ds := CompareWith(builtin, other, nil, map[string]string{"events.Normal/SuccessfulCreate": "killed right after"})
	if len(ds) != 1 || len(Failing(ds)) != 0 || !strings.HasPrefix(ds[0].Allowed, "may be lost: ") {
		t.Fatalf("want the missing event allowed as lost, got %v", ds)
	}
	// A prefix covers every event under it; the field's own key is the
	// reason named when both are there.
	wide := map[string]string{"events.": "killed", "events.Normal/SuccessfulCreate": "narrow"}
	ds = CompareWith(builtin, other, nil, wide)
	if len(ds) != 1 || ds[0].Allowed != "may be lost: narrow" {
		t.Fatalf("want the narrow reason, got %v", ds)
	}
	delete(wide, "events.Normal/SuccessfulCreate")
	if ds = CompareWith(builtin, other, nil, wide); len(ds) != 1 || ds[0].Allowed != "may be lost: killed" {
		t.Fatalf("want the prefix's reason, got %v", ds)
	}
	// Only what the prefix names: the status is still compared.
	other.Final = map[string]string{"succeeded": "7"}
	if f := Failing(CompareWith(builtin, other, nil, wide)); len(f) == 0 {
		t.Fatalf("events. excused a status field")
	}
}

// An allowance names a field, a prefix ending in ".", or a family of
// fields ("pods.shape" covers "pods.shape (a pod)"); nothing else.
func TestAllowanceFamilies(t *testing.T) {
	builtin := Observe(run("11111111", "f", nil), "job", "f")
	other := Observe(run("22222222", "f", func(_ *batchv1.Job, ps []*corev1.Pod) { ps[1].Spec.Containers[0].Image = "other" }), "job", "f")
	ds := Compare(builtin, other, map[string]string{"pods.shape": "scheduling"})
	if len(ds) == 0 || len(Failing(ds)) != 0 {
		t.Fatalf("pods.shape family: %v", ds)
	}
	if f := Failing(Compare(builtin, other, map[string]string{"pods.sh": "a prefix without a dot"})); len(f) == 0 {
		t.Fatal("a bare prefix allowed a difference")
	}
}

// The Job's metadata and spec are compared, its UID and managedBy aside: a
// controller that labels (or edits) the Job differs.
func TestJobShapeCompared(t *testing.T) {
	shape := func(uid, managedBy string) func(*batchv1.Job, []*corev1.Pod) {
		return func(j *batchv1.Job, _ []*corev1.Pod) {
			j.Labels = map[string]string{"batch.kubernetes.io/controller-uid": uid}
			j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": uid}}
			if managedBy != "" {
				j.Spec.ManagedBy = ptr.To(managedBy)
			}
		}
	}
	builtin := Observe(run("11111111", "f", shape("11111111", "")), "job", "f")
	other := Observe(run("22222222", "f", shape("22222222", "jobconform.io/reference")), "job", "f")
	if ds := Compare(builtin, other, nil); len(ds) != 0 {
		t.Fatalf("same Jobs but their UIDs and managedBy: %v", ds)
	}
	labelled := Observe(run("22222222", "f", func(j *batchv1.Job, ps []*corev1.Pod) {
		shape("22222222", "x")(j, ps)
		j.Labels["mine"] = "yes"
		j.Spec.Parallelism = ptr.To[int32](3)
	}), "job", "f")
	ds := Compare(builtin, labelled, nil)
	var fields []string
	for _, d := range ds {
		fields = append(fields, d.Field)
	}
	if !slices.Equal(fields, []string{"job.labels.mine", "job.spec.parallelism"}) {
		t.Fatalf("want job.labels.mine and job.spec.parallelism, got %v", ds)
	}
}

// The active peak is compared against a built-in that ran twice, whose
// spread is known (its runs' own difference learned as noise), never
// against a single run, and one way: above the built-in's differs, below
// does not (a slower controller breaks no promise).
func TestPeaks(t *testing.T) {
	obs := func(active int) *Observation {
		return &Observation{Final: map[string]string{}, Peaks: map[string]int{"active": active, "terminating": active}}
	}
	once, other := obs(2), obs(3)
	if ds := CompareWith(once, other, nil, nil); len(ds) != 0 {
		t.Fatalf("peaks compared against one run: %v", ds)
	}
	twice := Learn(obs(2), obs(2))
	ds := CompareWith(twice, other, nil, nil)
	if len(Failing(ds)) != 1 || ds[0].Field != "peak.active" || ds[0].BuiltIn != "2" || ds[0].Other != "3" {
		t.Fatalf("want peak.active 2 against 3, got %v", ds)
	}
	if ds := CompareWith(twice, obs(1), nil, nil); len(ds) != 0 {
		t.Fatalf("a lower peak differs: %v", ds)
	}
	spread := Learn(obs(3), obs(2))
	if spread.Noise["peak.active"] == "" {
		t.Fatalf("the built-in's own spread not learned: %v", spread.Noise)
	}
	if ds := CompareWith(spread, obs(3), nil, nil); len(Failing(ds)) != 0 {
		t.Fatalf("a peak within the built-in's own spread differs: %v", ds)
	}
	// Above the built-in's whole spread is a difference (issue #70).
	if ds := CompareWith(spread, obs(4), nil, nil); len(Failing(ds)) != 1 || ds[0].Field != "peak.active" {
		t.Fatalf("a peak above the built-in's whole spread: want peak.active failing, got %v", ds)
	}
	// Read from a recording: the highest value the status showed.
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "job", UID: "u"}}
	var tl timeline.Timeline
	for _, a := range []int32{1, 3, 2, 0} {
		v := j.DeepCopy()
		v.Status.Active, v.Status.Terminating = a, ptr.To(a/2)
		tl = append(tl, timeline.Entry{Kind: "Job", Name: "job", Type: timeline.Modified, Object: v})
	}
	if p := Observe(tl, "job", "").Peaks; p["active"] != 3 || p["terminating"] != 1 || p["ready"] != 0 {
		t.Fatalf("peaks %v", p)
	}
	if _, ok := Observe(tl, "job", "").Peaks["ready"]; ok {
		t.Fatalf("ready was never written, yet has a peak")
	}
}

// A pod first seen in a gap of the recording (created and finished while
// the watch was down, its finalizer already gone) is counted, not shaped:
// its difference from the other run's pod as created is said, allowed;
// outside a gap the same difference fails.
func TestPodsSeenLate(t *testing.T) {
	builtin := Observe(run("11111111", "f", nil), "job", "f")
	lateRun := run("22222222", "f", func(_ *batchv1.Job, ps []*corev1.Pod) { ps[1].Finalizers = nil })
	if f := Failing(Compare(builtin, Observe(lateRun, "job", "f"), nil)); len(f) == 0 {
		t.Fatalf("a pod without its finalizer, seen in no gap, passed")
	}
	gap := []timeline.Span{{From: lateRun[1].Time.Add(-time.Second), To: lateRun[1].Time.Add(time.Second)}}
	late := ObserveWith(lateRun, "job", "f", gap)
	if late.Late != 2 || total(late.Pods) != 0 {
		t.Fatalf("late %d, shaped %d", late.Late, total(late.Pods))
	}
	ds := Compare(builtin, late, nil)
	if len(Failing(ds)) != 0 || !slices.ContainsFunc(ds, func(d Difference) bool { return d.Field == "pods.shape (seen late or not at all)" && d.Allowed != "" }) {
		t.Fatalf("want the late pods said and allowed, got %v", ds)
	}
	// More pods than the late ones can stand for still differ.
	extra := Observe(run("33333333", "f", nil), "job", "f")
	extra.Late, extra.Pods = 1, map[string]int{}
	if f := Failing(Compare(builtin, extra, nil)); len(f) == 0 {
		t.Fatalf("two pods seen as created against one seen late passed")
	}
	// A run whose recording had a gap may have seen fewer pods (one
	// created and gone inside it, seen in a CI rehearsal's drill), never
	// more; one without a gap may not.
	short := Observe(run("44444444", "f", nil), "job", "f")
	for k := range short.Pods {
		short.Pods[k]--
	}
	short.PerIndex = nil
	if f := Failing(Compare(builtin, short, nil)); len(f) == 0 {
		t.Fatalf("a pod short without a gap passed")
	}
	short.Gap = true
	if f := Failing(Compare(builtin, short, nil)); len(f) != 0 {
		t.Fatalf("a pod short with a gap: %v", f)
	}
	if f := Failing(Compare(short, builtin, nil)); len(f) != 0 {
		t.Fatalf("the built-in short with a gap: %v", f)
	}
	long := Observe(run("55555555", "f", nil), "job", "f")
	for k := range long.Pods {
		long.Pods[k]++
	}
	long.Gap = true
	if f := Failing(Compare(builtin, long, nil)); len(f) == 0 {
		t.Fatalf("a gap excused a pod too many")
	}
}

// Requests compare as a set of kinds: one sent by one run only differs,
// a run that read none is not compared, and what the built-in's own two
// runs differ in is noise.
func TestRequests(t *testing.T) {
	del, delBg, update := `delete pods {}`, `delete pods {"propagationPolicy":"Background"}`, `update jobs.batch/status`
	builtin := &Observation{Requests: []string{del, update}}
	other := &Observation{Requests: []string{delBg, update}}
	ds := Compare(builtin, other, nil)
	if len(Failing(ds)) != 2 || ds[0].Field != "requests "+delBg || ds[0].BuiltIn != "not sent" || ds[0].Other != "sent" ||
		ds[1].Field != "requests "+del || ds[1].BuiltIn != "sent" || ds[1].Other != "not sent" {
		t.Fatalf("other delete options: %v", ds)
	}
	if ds := Compare(builtin, &Observation{}, nil); len(ds) != 0 {
		t.Fatalf("a run whose requests were not read: %v", ds)
	}
	if ds := Compare(builtin, &Observation{Requests: []string{update, del, del}}, nil); len(ds) != 0 {
		t.Fatalf("the same kinds, in another order and more often: %v", ds)
	}
	if ds := Compare(builtin, other, map[string]string{"requests": "why"}); len(Failing(ds)) != 0 {
		t.Fatalf("allowed as a family: %v", ds)
	}
	learned := Learn(builtin, &Observation{Requests: []string{update}})
	if ds := Compare(learned, &Observation{Requests: []string{update}}, nil); len(Failing(ds)) != 0 || len(ds) != 1 {
		t.Fatalf("noise: %v", ds)
	}
	data, _ := json.Marshal(&Observation{Requests: []string{}})
	var back Observation
	if err := json.Unmarshal(data, &back); err != nil || back.Requests == nil {
		t.Fatalf("read, none sent, kept as %s: %v", data, back.Requests)
	}
	events := &Observation{Requests: []string{"create events", update}}
	if ds := CompareWith(events, &Observation{Requests: []string{update}}, nil, map[string]string{"events.": "a stop"}); len(ds) != 1 || len(Failing(ds)) != 0 {
		t.Fatalf("no event created where every event may be lost: %v", ds)
	}
	if ds := CompareWith(events, &Observation{Requests: []string{update}}, nil, map[string]string{"events.Normal/Suspended": "why"}); len(Failing(ds)) != 1 {
		t.Fatalf("no event created where only some may be lost: %v", ds)
	}
	ds = Compare(builtin, &Observation{Unread: "requests: 1 line(s) … were not JSON"}, nil)
	if len(ds) != 1 || len(Failing(ds)) != 0 || ds[0].Field != "requests (not read)" {
		t.Fatalf("a run whose requests could not all be read: said, allowed: %v", ds)
	}
	if (&Observation{Requests: []string{update}}).Dispatched(false).Requests != nil {
		t.Fatal("a dispatched Job's requests are the worker's built-in's")
	}
}

// Where the built-in's own runs created different numbers of pods, the
// pods deleted at the end follow the same race: their events, delete
// requests and later states are noise; where they created as many, they
// are not. A third run adds to two runs' noise.
func TestNoiseFollowsThePods(t *testing.T) {
	base := func(created int, deletes int) *Observation {
		o := &Observation{Final: map[string]string{}, Pods: map[string]int{"p": created}, Events: map[string]int{}, Format: Format, Requests: []string{}}
		if deletes > 0 {
			o.Events["Normal/SuccessfulDelete"] = deletes
			o.Requests = []string{"delete pods {}"}
		}
		return o
	}
	other := base(6, 2)
	for _, tc := range []struct {
		name    string
		learned *Observation
		noise   bool
	}{
		{"pods apart", Learn(base(5, 0), base(6, 0)), true},
		{"pods alike", Learn(base(5, 0), base(5, 0)), false},
		{"apart in a third run", Learn(Learn(base(5, 0), base(5, 0)), base(6, 0)), true},
	} {
		checked := 0
		for _, d := range Compare(tc.learned, other, nil) {
			if !followsPods(d.Field, tc.learned, other) {
				continue
			}
			checked++
			if got := strings.HasPrefix(d.Allowed, "noise: "); got != tc.noise {
				t.Errorf("%s: %s allowed %q, want noise %v", tc.name, d.Field, d.Allowed, tc.noise)
			}
		}
		if checked != 2 {
			t.Errorf("%s: %d differences in the deleted pods, want 2 (their events, the delete requests)", tc.name, checked)
		}
	}
	if l := Learn(Learn(base(5, 0), base(6, 0)), base(5, 0)); l.Runs != 3 || l.Noise["pods.created"] == "" {
		t.Errorf("a third run lost the noise of the first two: runs %d, noise %v", l.Runs, l.Noise)
	}
}

// One of two built-in runs broken by a known bug that did not cut it
// short is the bug's nondeterminism, not a race; a run cut short, or a
// failure no bug explains, makes the pair racy.
func TestLearnKnownBugInOneRun(t *testing.T) {
	ok := &Observation{Final: map[string]string{"active": "1"}}
	bug := &Observation{Final: map[string]string{"active": "2"}, Failed: []string{"invariant active-settles … known upstream bug"}, Bugs: []string{"kubernetes/kubernetes#139428"}}
	if l := Learn(ok, bug); l.Racy != "" || len(l.Bugs) != 1 || l.Noise["status.active"] == "" {
		t.Fatalf("a bug in one run of two: racy %q, bugs %v, noise %v", l.Racy, l.Bugs, l.Noise)
	}
	cut := *bug
	cut.Cut = "it stopped at step 4 (await)"
	if l := Learn(ok, &cut); l.Racy == "" || l.Cut == "" {
		t.Fatalf("a run cut short: racy %q, cut %q", l.Racy, l.Cut)
	}
	unexplained := *bug
	unexplained.Bugs = nil
	if l := Learn(ok, &unexplained); l.Racy == "" || l.Bugs != nil {
		t.Fatalf("an unexplained failure: racy %q, bugs %v", l.Racy, l.Bugs)
	}
}
