package oracle

import (
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
)

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
	// Ready and terminating above the built-in's runs: said, not held.
	ready := func(n int) *Observation {
		return &Observation{Final: map[string]string{}, Peaks: map[string]int{"active": 2, "ready": n}}
	}
	ds = CompareWith(Learn(ready(1), ready(1)), ready(2), nil, nil)
	if len(ds) != 1 || ds[0].Field != "peak.ready" || ds[0].Allowed != peakSaid || len(Failing(ds)) != 0 {
		t.Fatalf("a ready peak above the built-in's: want it said, not held, got %v", ds)
	}
	if ds := CompareWith(Learn(ready(1), ready(2)), ready(2), nil, nil); len(ds) != 1 || !strings.HasPrefix(ds[0].Allowed, "noise:") {
		t.Fatalf("a ready peak within the built-in's spread: want it excused as noise, got %v", ds)
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
