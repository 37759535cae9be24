package controller

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

func TestSucceededUncounted(t *testing.T) {
	tracked := func(p *corev1.Pod) bool { return len(p.Finalizers) > 0 }
	pod := func(uid string, ix string, phase corev1.PodPhase, finalized bool) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Annotations: map[string]string{batchv1.JobCompletionIndexAnnotation: ix}}}
		p.Status.Phase = phase
		if finalized {
			p.Finalizers = []string{"f"}
		}
		return p
	}
	indexed := &batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr.To[int32](3), CompletionMode: ptr.To(batchv1.IndexedCompletion)}}
	indexed.Status.CompletedIndexes = "0"
	type tc struct {
		name string
		job  *batchv1.Job
		pods []*corev1.Pod
		want bool
	}
	cases := []tc{
		{"index 0 released and counted", indexed, []*corev1.Pod{pod("a", "0", corev1.PodSucceeded, false)}, false},
		// The drill's case: index 1 released, the cached status not yet counting it.
		{"index 1 released, not counted", indexed, []*corev1.Pod{pod("b", "1", corev1.PodSucceeded, false)}, true},
		{"index 1 succeeded, still tracked", indexed, []*corev1.Pod{pod("b", "1", corev1.PodSucceeded, true)}, false},
		{"failed pods do not count", indexed, []*corev1.Pod{pod("b", "1", corev1.PodFailed, false)}, false},
	}
	nonIndexed := &batchv1.Job{Spec: batchv1.JobSpec{Completions: ptr.To[int32](3)}}
	nonIndexed.Status.Succeeded = 1
	nonIndexed.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{Succeeded: []types.UID{"c"}}
	cases = append(cases,
		tc{"one released, one counted", nonIndexed, []*corev1.Pod{pod("a", "", corev1.PodSucceeded, false)}, false},
		tc{"uncounted is recorded", nonIndexed, []*corev1.Pod{pod("a", "", corev1.PodSucceeded, false), pod("c", "", corev1.PodSucceeded, false)}, false},
		tc{"two released, one counted", nonIndexed, []*corev1.Pod{pod("a", "", corev1.PodSucceeded, false), pod("b", "", corev1.PodSucceeded, false)}, true},
	)
	for _, c := range cases {
		if got := succeededUncounted(c.job, c.pods, tracked); got != c.want {
			t.Errorf("%s: behind = %v, want %v", c.name, got, c.want)
		}
	}
}

// versionJobs makes the fake clientset version Jobs as the apiserver does:
// every write bumps resourceVersion, and a write built on an older one is
// refused with a conflict.
func versionJobs(f *fixture) {
	rv := 100
	gvr := batchv1.SchemeGroupVersion.WithResource("jobs")
	f.client.PrependReactor("*", "jobs", func(action k8stesting.Action) (bool, runtime.Object, error) {
		switch action.GetVerb() {
		case "create":
			j := action.(k8stesting.CreateAction).GetObject().(*batchv1.Job)
			rv++
			j.ResourceVersion = strconv.Itoa(rv)
			return false, nil, nil
		case "update":
			j := action.(k8stesting.UpdateAction).GetObject().(*batchv1.Job).DeepCopy()
			cur, err := f.client.Tracker().Get(gvr, j.Namespace, j.Name)
			if err != nil {
				return true, nil, err
			}
			if j.ResourceVersion != "" && j.ResourceVersion != cur.(*batchv1.Job).ResourceVersion {
				return true, nil, apierrors.NewConflict(gvr.GroupResource(), j.Name, fmt.Errorf("the object has been modified"))
			}
			rv++
			j.ResourceVersion = strconv.Itoa(rv)
			if err := f.client.Tracker().Update(gvr, j, j.Namespace); err != nil {
				return true, nil, err
			}
			return true, j, nil
		}
		return false, nil, nil
	})
}

// The drill's case (r7 of ten make runs): the Job informer blind after an
// apiserver restart, the pod informer current. The cached Job does not count
// two completions whose pods were already released; acting on it would
// create two pods too many (completions 4 ended with 6 succeeded).
func TestStaleJobCacheCreatesNoExtraPods(t *testing.T) {
	f := newFixture(t)
	versionJobs(f)
	j := newJob("stale", 4, func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](2) })
	f.putJob(j)
	j = f.sync(j)
	for _, p := range f.pods(j) {
		finish(p, corev1.PodSucceeded, f.now)
		f.setPod(p)
	}
	before := j.DeepCopy() // counts nothing yet
	j = f.sync(j)
	if j.Status.Succeeded != 2 || len(f.pods(j)) != 4 {
		t.Fatalf("after counting the first two: succeeded %d, %d pods (want 2, 4)", j.Status.Succeeded, len(f.pods(j)))
	}
	// The second pair succeeds; the cache still holds the Job from before.
	for _, p := range f.pods(j) {
		if hasTrackingFinalizer(p) {
			finish(p, corev1.PodSucceeded, f.now)
			f.setPod(p)
		}
	}
	f.pods(j)
	if err := f.factory.Batch().V1().Jobs().Informer().GetIndexer().Update(before); err != nil {
		t.Fatal(err)
	}
	f.c.expectations.delete(jobKey(j)) // the pod cache shows the creations
	for i := 0; i < 3; i++ {
		f.clock.Step(time.Minute) // past any wait for the cache
		err := f.c.syncJob(context.Background(), jobKey(j))
		if n := len(f.pods(j)); n != 4 {
			t.Fatalf("sync %d on the stale cache: %d pods, want 4 (sync error: %v)", i, n, err)
		}
		if err != nil {
			t.Fatalf("sync %d on the stale cache: %v", i, err)
		}
		_ = f.factory.Batch().V1().Jobs().Informer().GetIndexer().Update(before)
	}
	j = f.sync(j)
	if j.Status.Succeeded != 4 || conds(j) != "SuccessCriteriaMet(CompletionsReached),Complete(CompletionsReached)" {
		t.Fatalf("succeeded %d conditions %s, want 4 and complete", j.Status.Succeeded, conds(j))
	}
}

// A sync that finds in the cache the version of the Job its own last write
// replaced reads the Job from the apiserver: acting on the cached one would
// redo the write and conflict until the informer catches up.
func TestSyncOnReplacedVersionReadsLive(t *testing.T) {
	f := newFixture(t)
	versionJobs(f)
	j := newJob("replaced", 2)
	f.putJob(j)
	old := f.refreshJob(j)
	if err := f.c.syncJob(context.Background(), jobKey(j)); err != nil {
		t.Fatal(err)
	}
	f.pods(j)
	f.c.expectations.delete(jobKey(j))
	_ = f.factory.Batch().V1().Jobs().Informer().GetIndexer().Update(old) // our status write not in the cache yet
	reads := testutil.ToFloat64(f.c.metrics.LiveJobReads)
	if err := f.c.syncJob(context.Background(), jobKey(j)); err != nil {
		t.Fatalf("sync on the replaced version: %v", err)
	}
	if got := testutil.ToFloat64(f.c.metrics.LiveJobReads) - reads; got != 1 {
		t.Fatalf("%v live reads, want 1", got)
	}
}

// The pod informer blind (r2 of ten make runs: 87s after an apiserver
// restart): the sync after the one that created the pods must not report
// them gone.
func TestUnobservedCreationsCountAsActive(t *testing.T) {
	f := newFixture(t)
	j := newJob("blind", 2)
	f.putJob(j)
	j = f.refreshJob(j)
	if err := f.c.syncJob(context.Background(), jobKey(j)); err != nil {
		t.Fatal(err)
	}
	j = f.refreshJob(j) // the Job informer is current, the pod cache empty
	if j.Status.Active != 2 {
		t.Fatalf("active %d after creating 2 pods", j.Status.Active)
	}
	if err := f.c.syncJob(context.Background(), jobKey(j)); err != nil {
		t.Fatal(err)
	}
	if j = f.refreshJob(j); j.Status.Active != 2 {
		t.Fatalf("active %d with 2 creations the cache has not shown, want 2", j.Status.Active)
	}
}
