package scale

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// progressEvery is how often a running scale spec shows its Job's status:
// a 10,000-pod Job takes 10–15 minutes, and nothing else is shown meanwhile.
const progressEvery = time.Minute

// showProgress writes, every progressEvery until stop is called, the status
// of the Jobs on the cluster (the scale suite runs one at a time) with the
// time since start. Its one list a minute is the harness's, not counted for
// any controller. stop writes how the spec ended.
func showProgress(ctx context.Context, w io.Writer, client kubernetes.Interface, spec string) (stop func(outcome string)) {
	start := time.Now()
	fmt.Fprintf(w, "%s: started\n", spec)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				fmt.Fprintf(w, "%s: %s in: %s\n", spec, time.Since(start).Round(time.Second), jobsStatus(ctx, client))
			}
		}
	}()
	return func(outcome string) {
		cancel()
		<-done
		fmt.Fprintf(w, "%s: %s after %s\n", spec, outcome, time.Since(start).Round(time.Second))
	}
}

// jobsStatus is one line of the Jobs' counts and True conditions.
func jobsStatus(ctx context.Context, client kubernetes.Interface) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	jobs, err := client.BatchV1().Jobs(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "the Jobs could not be listed: " + err.Error()
	}
	if len(jobs.Items) == 0 {
		return "no Job on the cluster"
	}
	var out []string
	for i := range jobs.Items {
		out = append(out, describeStatus(&jobs.Items[i]))
	}
	return strings.Join(out, "; ")
}

func describeStatus(j *batchv1.Job) string {
	st := j.Status
	s := fmt.Sprintf("active=%d ready=%d terminating=%d succeeded=%d failed=%d",
		st.Active, ptr.Deref(st.Ready, 0), ptr.Deref(st.Terminating, 0), st.Succeeded, st.Failed)
	for _, c := range st.Conditions {
		if c.Status == corev1.ConditionTrue {
			s += " " + string(c.Type)
		}
	}
	if j.DeletionTimestamp != nil {
		s += " (being deleted)"
	}
	return s
}
