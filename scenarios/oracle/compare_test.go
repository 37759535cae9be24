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

	"github.com/jobconform/jobconform/internal/timeline"
)

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
