package oracle

import (
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobconform/jobconform/internal/timeline"
)

// finish appends to a recording a later version of each of its pods, as
// edit leaves it (the tracking finalizer gone, unless edit puts it back),
// at the given offset from the recording's start.
func finish(t timeline.Timeline, after time.Duration, edit func(i int, p *corev1.Pod)) timeline.Timeline {
	var pods []*corev1.Pod
	for _, e := range t {
		if p := e.Pod(); p != nil && !slices.ContainsFunc(pods, func(q *corev1.Pod) bool { return q.UID == p.UID }) {
			pods = append(pods, p)
		}
	}
	for i, p := range pods {
		q := p.DeepCopy()
		q.Finalizers = nil
		if edit != nil {
			edit(i, q)
		}
		t = append(t, timeline.Entry{Seq: len(t), Time: t[0].Time.Add(after), Type: timeline.Modified, Kind: "Pod", Name: q.Name, Object: q})
	}
	return t
}

// deleteJob appends the Job's deletion being asked for.
func deleteJob(t timeline.Timeline, after time.Duration) timeline.Timeline {
	var job *batchv1.Job
	for _, e := range t {
		if j := e.Job(); j != nil {
			job = j.DeepCopy()
		}
	}
	job.DeletionTimestamp = &metav1.Time{Time: t[0].Time.Add(after)}
	return append(t, timeline.Entry{Seq: len(t), Time: t[0].Time.Add(after), Type: timeline.Modified, Kind: "Job", Name: job.Name, Object: job})
}

// Pods as last seen (issue #56): a controller that keeps its finalizer on
// a finished pod, or annotates its pods after creating them, differs in
// pods.later where their shape as created is the same; what becomes of the
// pods after the Job's deletion was asked for is not compared.
func TestPodsAsLastSeen(t *testing.T) {
	builtin := Observe(finish(run("11111111", "f", nil), time.Second, nil), "job", "f")
	if got := firstKey(builtin.Later); builtin.Later[got] != 2 || !strings.Contains(got, `"metadata.finalizers.0":"<tracking-finalizer> → <none>"`) {
		t.Fatalf("later: %v", builtin.Later)
	}
	same := Observe(finish(run("22222222", "g", nil), 2*time.Second, nil), "job", "g")
	if ds := Compare(builtin, same, nil); len(ds) != 0 {
		t.Fatalf("a correct run differs: %v", ds)
	}
	cases := map[string]func(i int, p *corev1.Pod){
		"pods.later metadata.finalizers.0": func(i int, p *corev1.Pod) {
			if i == 0 {
				p.Finalizers = []string{"g"}
			}
		},
		"pods.later metadata.annotations.counted": func(_ int, p *corev1.Pod) { p.Annotations = map[string]string{"counted": "yes"} },
		"pods.later deleted": func(i int, p *corev1.Pod) {
			if i == 1 {
				p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			}
		},
	}
	for field, edit := range cases {
		other := Observe(finish(run("22222222", "g", nil), time.Second, edit), "job", "g")
		ds := Failing(Compare(builtin, other, nil))
		if !slices.ContainsFunc(ds, func(d Difference) bool { return d.Field == field }) {
			t.Errorf("%s: want it among the differences, got %v", field, ds)
		}
	}
	// After the Job's deletion was asked for: the garbage collector's and
	// the orphans' business, past the recording's end on a large Job.
	cut := deleteJob(run("33333333", "g", nil), time.Second)
	late := Observe(finish(finish(cut, 0, nil), 2*time.Second, func(_ int, p *corev1.Pod) { p.Finalizers = []string{"g"} }), "job", "g")
	ref := Observe(finish(deleteJob(run("44444444", "f", nil), time.Second), 0, nil), "job", "f")
	if ds := Failing(Compare(ref, late, nil)); len(ds) != 0 {
		t.Fatalf("a pod's version after the Job's deletion was asked for was compared: %v", ds)
	}
	// A gap excuses it: a pod's versions inside it were never seen.
	kept := Observe(finish(run("55555555", "g", nil), time.Second, func(_ int, p *corev1.Pod) { p.Finalizers = []string{"g"} }), "job", "g")
	kept.Gap = true
	ds := Compare(builtin, kept, nil)
	if len(Failing(ds)) != 0 || !slices.ContainsFunc(ds, func(d Difference) bool { return strings.HasPrefix(d.Field, "pods.later") && d.Allowed == gapLater }) {
		t.Fatalf("with a gap: %v", ds)
	}
}

// Messages (issue #56): a condition's or an event's words compared, the
// pods' names and the namespace placeholders, client-go's "combined" prefix
// dropped; a message of another wording differs.
func TestMessagesCompared(t *testing.T) {
	worded := func(uid, ns, finished string, combine bool) *Observation {
		tl := run(uid, "f", func(j *batchv1.Job, _ []*corev1.Pod) {
			j.Namespace = ns
			j.Status.Conditions[1].Message = finished
		})
		for i, e := range tl {
			if ev, ok := e.Object.(*corev1.Event); ok {
				ev.Message = "Created pod: " + tl[i%2].Name
				if combine && i%2 == 1 {
					ev.Message = combined + ev.Message
				}
			}
		}
		return Observe(tl, "job", "f")
	}
	builtin := worded("11111111", "ns-a", "Reached expected number of succeeded pods", false)
	if got := builtin.Messages["event Normal/SuccessfulCreate"]; got != "Created pod: <pod>" {
		t.Fatalf("event messages: %q", got)
	}
	if ds := Compare(builtin, worded("22222222", "ns-b", "Reached expected number of succeeded pods", true), nil); len(ds) != 0 {
		t.Fatalf("the same words, other names: %v", ds)
	}
	// A refused creation names a pod that never existed.
	refused := func(name string) map[string]string {
		var p placeholders
		p.generatedFrom("job")
		m := messages{}
		m.event(&corev1.Event{Type: "Warning", Reason: "FailedCreate", Message: `Error creating: pods "` + name + `" is forbidden: exceeded quota`})
		return m.joined(&p)
	}
	if a, b := refused("job-7w5vl"), refused("job-0-dx6lc"); a["event Warning/FailedCreate"] != `Error creating: pods "<pod>" is forbidden: exceeded quota` || b["event Warning/FailedCreate"] != a["event Warning/FailedCreate"] {
		t.Fatalf("generated names: %v, %v", a, b)
	}
	if a := refused("jobs-7w5vl"); a["event Warning/FailedCreate"] != `Error creating: pods "jobs-7w5vl" is forbidden: exceeded quota` {
		t.Fatalf("another Job's name: %v", a)
	}
	ds := Failing(Compare(builtin, worded("22222222", "ns-b", "Job completed", false), nil))
	if len(ds) != 1 || ds[0].Field != "messages.condition Complete=True/CompletionsReached" || ds[0].Other != "Job completed" {
		t.Fatalf("another wording: %v", ds)
	}
}

// Timestamps (issue #56): compared by what they equal, not by their values.
func TestTimestampsCompared(t *testing.T) {
	at := metav1.NewTime(time.Now().Add(-time.Minute).Truncate(time.Second))
	stamped := func(uid string, edit func(*batchv1.Job)) *Observation {
		return Observe(run(uid, "f", func(j *batchv1.Job, ps []*corev1.Pod) {
			for _, p := range ps {
				p.CreationTimestamp = metav1.NewTime(at.Add(time.Second))
			}
			j.Status.StartTime = &at
			for i := range j.Status.Conditions {
				j.Status.Conditions[i].LastTransitionTime = metav1.NewTime(at.Add(time.Duration(i+5) * time.Second))
				j.Status.Conditions[i].LastProbeTime = j.Status.Conditions[i].LastTransitionTime
			}
			j.Status.CompletionTime = &j.Status.Conditions[1].LastTransitionTime
			if edit != nil {
				edit(j)
			}
		}), "job", "f")
	}
	builtin := stamped("11111111", nil)
	want := map[string]string{"Complete.lastProbeTime": "its lastTransitionTime",
		"SuccessCriteriaMet.lastProbeTime": "its lastTransitionTime", "startTime": "not after the first pod's creation"}
	if _, ok := builtin.Times["completionTime"]; ok {
		t.Errorf("completionTime related to Complete's lastTransitionTime: upstream's differ by the enacting sync's work")
	}
	for k, v := range want {
		if builtin.Times[k] != v {
			t.Errorf("times %s: %q, want %q (all: %v)", k, builtin.Times[k], v, builtin.Times)
		}
	}
	// Other values, the same relations: no difference.
	if ds := Compare(builtin, stamped("22222222", func(j *batchv1.Job) {
		earlier := metav1.NewTime(j.Status.StartTime.Add(-time.Hour))
		j.Status.StartTime = &earlier
	}), nil); len(ds) != 0 {
		t.Fatalf("other moments, the same relations: %v", ds)
	}
	cases := map[string]func(*batchv1.Job){
		"times.Complete.lastProbeTime": func(j *batchv1.Job) { j.Status.Conditions[1].LastProbeTime = metav1.Time{} },
		"times.startTime": func(j *batchv1.Job) {
			late := metav1.NewTime(at.Add(time.Minute))
			j.Status.StartTime = &late
		},
	}
	for field, edit := range cases {
		ds := Failing(Compare(builtin, stamped("33333333", edit), nil))
		if !slices.ContainsFunc(ds, func(d Difference) bool { return d.Field == field }) {
			t.Errorf("%s: want it among the differences, got %v", field, ds)
		}
	}
	// A lastTransitionTime kept across a change of status is stale once the
	// two versions arrived staleAfter apart; within it, it proves nothing
	// (one-second timestamps, late arrivals).
	resumed := func(after time.Duration, moved bool) *Observation {
		tl := run("44444444", "f", func(j *batchv1.Job, _ []*corev1.Pod) {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue, LastTransitionTime: at}}
		})
		j := tl[len(tl)-1].Job().DeepCopy()
		j.Status.Conditions[0].Status = corev1.ConditionFalse
		if moved {
			j.Status.Conditions[0].LastTransitionTime = metav1.NewTime(at.Add(after))
		}
		tl = append(tl, timeline.Entry{Seq: len(tl), Time: tl[len(tl)-1].Time.Add(after), Type: timeline.Modified, Kind: "Job", Name: "job", Object: j})
		return Observe(tl, "job", "f")
	}
	const key = "Suspended.lastTransitionTime on a change of status"
	if o := resumed(time.Minute, false); o.Times[key] != "kept 1 time(s)" {
		t.Fatalf("a stale lastTransitionTime: %v", o.Times)
	}
	for _, o := range []*Observation{resumed(time.Minute, true), resumed(time.Second, false)} {
		if _, ok := o.Times[key]; ok {
			t.Fatalf("moved, or kept within %s: %v", staleAfter, o.Times)
		}
	}
}

// A pod gone holds no finalizer, whatever the watch's DELETED event
// carried (the pod as last stored: with the finalizer whose removal
// deleted it, if the node's deletion came first).
func TestPodGoneHoldsNoFinalizer(t *testing.T) {
	released := func(uid string, deletedWith []string) *Observation {
		tl := run(uid, "f", nil)
		var gone []timeline.Entry
		for _, e := range tl {
			if p := e.Pod(); p != nil {
				q := p.DeepCopy()
				q.DeletionTimestamp = &metav1.Time{Time: time.Now()}
				q.Finalizers = deletedWith
				gone = append(gone, timeline.Entry{Time: e.Time.Add(time.Second), Type: timeline.Deleted, Kind: "Pod", Name: q.Name, Object: q})
			}
		}
		return Observe(append(tl, gone...), "job", "f")
	}
	a, b := released("11111111", nil), released("22222222", []string{"f"})
	if ds := Compare(a, b, nil); len(ds) != 0 {
		t.Fatalf("the same pods gone differ by the DELETED event's finalizers: %v", ds)
	}
}

// A Job ever suspended says nothing of its startTime against its first
// pod: upstream writes it again at a resume after the resumed pods are
// created (a drill's flight-suspended: the reference's fell a second
// after its first pod).
func TestStartTimeOfASuspendedJobNotRelated(t *testing.T) {
	at := metav1.NewTime(time.Now().Truncate(time.Second))
	o := Observe(run("11111111", "f", func(j *batchv1.Job, ps []*corev1.Pod) {
		for _, p := range ps {
			p.CreationTimestamp = at
		}
		later := metav1.NewTime(at.Add(time.Second))
		j.Status.StartTime = &later
		j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: batchv1.JobSuspended, Status: corev1.ConditionFalse, Reason: "JobResumed"})
	}), "job", "f")
	if rel, ok := o.Times["startTime"]; ok {
		t.Fatalf("a resumed Job's startTime related to its first pod: %q", rel)
	}
}
