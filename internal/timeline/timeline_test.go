package timeline

import (
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLinesRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 22, 6, 0, 0, 123e6, time.UTC)
	tl := Timeline{
		{Seq: 0, Time: at, Type: Added, Kind: "Job", Name: "job", Object: &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "job", ResourceVersion: "7"}, Status: batchv1.JobStatus{Active: 2}}},
		{Seq: 1, Time: at.Add(time.Second), Type: Deleted, Kind: "Pod", Name: "p", Object: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{Phase: corev1.PodFailed}}},
	}
	s, err := tl.Lines()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(s, "\n") != 2 {
		t.Fatalf("want one line per entry:\n%s", s)
	}
	lines, err := ParseLines(s + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || !lines[0].Time.Equal(at) || lines[1].Type != Deleted || lines[1].Kind != "Pod" || !strings.Contains(string(lines[0].Object), `"active":2`) {
		t.Fatalf("lines %+v", lines)
	}
	back, err := ReadTimeline(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 2 || back[0].Job() == nil || back[0].Job().Status.Active != 2 || back[1].Pod() == nil ||
		back[1].Pod().Status.Phase != corev1.PodFailed || back[1].Seq != 1 || !back[1].Time.Equal(at.Add(time.Second)) {
		t.Fatalf("read back %+v", back)
	}
	if _, err := ReadTimeline(strings.NewReader(`{"kind":"Secret","object":{}}` + "\n")); err == nil || !strings.Contains(err.Error(), "unknown kind") {
		t.Fatalf("an unknown kind: %v", err)
	}
	if _, err := ParseLines("{\"time\":1}\n"); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("a bad line: %v", err)
	}
	if tl[0].Revision() != 7 || tl[1].Revision() != 0 {
		t.Fatalf("revisions %d %d", tl[0].Revision(), tl[1].Revision())
	}
	if len(tl.Of("Pod")) != 1 || tl[0].Job() == nil || tl[0].Pod() != nil {
		t.Fatal("accessors")
	}
}

// TestLinesKeepWritersNotFieldSets: a written-out object keeps who wrote it
// (what delegation-respected reads back) without the field sets, and the
// recorded object itself is left whole.
func TestLinesKeepWritersNotFieldSets(t *testing.T) {
	fields := []metav1.ManagedFieldsEntry{{
		Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:active":{}}}`)},
	}}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "job", ManagedFields: fields}}
	s, err := Timeline{{Kind: "Job", Name: "job", Object: job}}.Lines()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(s, "f:active") || !strings.Contains(s, `"manager":"kube-controller-manager"`) || !strings.Contains(s, `"subresource":"status"`) {
		t.Fatalf("written: %s", s)
	}
	if job.ManagedFields[0].FieldsV1 == nil {
		t.Fatal("the recorded object lost its field sets")
	}
}

func TestSpanContains(t *testing.T) {
	t0 := time.Unix(100, 0)
	closed, open := Span{From: t0, To: t0.Add(time.Second)}, Span{From: t0}
	for _, c := range []struct {
		s    Span
		at   time.Time
		want bool
	}{
		{closed, t0, true}, {closed, t0.Add(time.Second), true}, {closed, t0.Add(-time.Nanosecond), false},
		{closed, t0.Add(time.Second + time.Nanosecond), false}, {open, t0.Add(time.Hour), true}, {open, t0.Add(-time.Second), false},
	} {
		if got := c.s.Contains(c.at); got != c.want {
			t.Errorf("%v contains %v: %v, want %v", c.s, c.at, got, c.want)
		}
	}
}
