package scale

import (
	"bytes"
	"context"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/jobconform/jobconform/scenarios/oracle"
	"github.com/jobconform/jobconform/suites/internal/runner"
	"k8s.io/utils/ptr"
)

func TestJobsStatus(t *testing.T) {
	ctx := context.Background()
	if got := jobsStatus(ctx, fake.NewClientset()); got != "no Job on the cluster" {
		t.Errorf("no Job: %q", got)
	}
	now := metav1.Now()
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "ns", DeletionTimestamp: &now},
		Status: batchv1.JobStatus{Active: 500, Ready: ptr.To[int32](480), Terminating: ptr.To[int32](3), Succeeded: 4200, Failed: 2,
			Conditions: []batchv1.JobCondition{
				{Type: batchv1.JobSuspended, Status: corev1.ConditionFalse},
				{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue},
			}},
	}
	want := "active=500 ready=480 terminating=3 succeeded=4200 failed=2 FailureTarget (being deleted)"
	if got := jobsStatus(ctx, fake.NewClientset(j)); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestShowProgressSaysStartAndEnd(t *testing.T) {
	var buf bytes.Buffer
	stop := showProgress(context.Background(), &buf, fake.NewClientset(), "[builtin] scale-1k-x")
	stop("passed, judged in 1s (0.5s CPU)")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || lines[0] != "[builtin] scale-1k-x: started" || !strings.HasPrefix(lines[1], "[builtin] scale-1k-x: passed, judged in 1s (0.5s CPU) after ") {
		t.Errorf("progress lines: %q", lines)
	}
}

// The progress says how a run fared against the built-in's once judged.
func TestComparedLine(t *testing.T) {
	for _, tc := range []struct {
		r    runner.Result
		want string
	}{
		{runner.Result{OracleNote: "not compared with the built-in: x"}, "not compared with the built-in: x"},
		{runner.Result{Compared: true}, "no difference (0 allowed)"},
		{runner.Result{Compared: true, Differences: []oracle.Difference{{Field: "status.failed", BuiltIn: "1", Other: "2"}}}, "1 differences (status.failed: built-in 1, this controller 2)"},
	} {
		if got := compared(&tc.r); !strings.Contains(got, tc.want) {
			t.Errorf("got %q, want %q in it", got, tc.want)
		}
	}
}
