package scale

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobconform/jobconform/internal/timeline"
	"github.com/jobconform/jobconform/reports"
)

func TestPeakWithin(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms ...int) []time.Time {
		var out []time.Time
		for _, m := range ms {
			out = append(out, t0.Add(time.Duration(m)*time.Millisecond))
		}
		return out
	}
	for _, c := range []struct {
		ts   []time.Time
		want int
	}{
		{nil, 0},
		{at(0), 1},
		{at(0, 999, 1000, 1500, 1999), 3}, // 999..1500 or 1000..1999
		{at(2000, 0, 100, 200), 3},        // unsorted
	} {
		if got := peakWithin(c.ts, time.Second); got != c.want {
			t.Errorf("peakWithin(%v) = %d, want %d", c.ts, got, c.want)
		}
	}
}

func TestFromTimeline(t *testing.T) {
	t0 := time.Unix(1000, 0)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "job"}}
	done := job.DeepCopy()
	done.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
	pod := func(n string) *corev1.Pod { return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: n}} }
	tl := timeline.Timeline{
		{Time: t0, Type: timeline.Added, Kind: "Job", Name: "job", Object: job},
		{Time: t0.Add(100 * time.Millisecond), Type: timeline.Added, Kind: "Pod", Name: "a", Object: pod("a")},
		{Time: t0.Add(200 * time.Millisecond), Type: timeline.Added, Kind: "Pod", Name: "b", Object: pod("b")},
		{Time: t0.Add(3 * time.Second), Type: timeline.Added, Kind: "Pod", Name: "c", Object: pod("c")},
		{Time: t0.Add(9 * time.Second), Type: timeline.Modified, Kind: "Job", Name: "job", Object: done},
		{Time: t0.Add(12 * time.Second), Type: timeline.Deleted, Kind: "Job", Name: "job", Object: done},
	}
	var f reports.Figures
	fromTimeline(tl, &f)
	if f.Created != 3 || f.PeakCreates != 2 || f.ToFinish != 9 {
		t.Errorf("figures: %+v", f)
	}
	// A deleted Job finishes when it is gone.
	f = reports.Figures{}
	fromTimeline(append(tl[:4:4], tl[5]), &f)
	if f.ToFinish != 12 {
		t.Errorf("to finish of a deleted Job: %v", f.ToFinish)
	}
}

func TestFromAuditReadsFromTheOffset(t *testing.T) {
	line := func(user, verb, res, sub string, code int) string {
		return `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","verb":"` + verb +
			`","user":{"username":"` + user + `"},"objectRef":{"resource":"` + res + `","subresource":"` + sub + `"},"responseStatus":{"code":` + map[int]string{200: "200", 409: "409", 201: "201"}[code] + `}}` + "\n"
	}
	before := line("u", "create", "pods", "", 201)
	log := filepath.Join(t.TempDir(), "audit.log")
	body := before + line("u", "create", "pods", "", 201) + line("u", "update", "jobs", "status", 200) +
		line("u", "update", "jobs", "status", 409) + line("other", "create", "pods", "", 201) + line("u", "watch", "pods", "", 200)
	if err := os.WriteFile(log, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var f reports.Figures
	if err := fromAudit(log, int64(len(before)), "u", &f); err != nil {
		t.Fatal(err)
	}
	// The watch is in ByVerb, not in Requests (fromAudit says why).
	if f.Requests != 3 || f.StatusWrites != 2 || f.Conflicts != 1 || f.ByVerb["create pods"] != 1 || f.ByVerb["watch pods"] != 1 {
		t.Errorf("figures: %+v", f)
	}
	// A log rotated during the run (shorter than at its start) is an
	// error, not a run with no requests.
	if err := fromAudit(log, int64(len(body))+1, "u", &reports.Figures{}); err == nil {
		t.Error("a rotated audit log read as a run with no requests")
	}
}
