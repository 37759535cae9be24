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
