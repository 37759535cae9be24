package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// fixture drives syncJob by hand: objects go into the fake clientset and
// straight into the informer indexers (no watch races), and what the
// controller wrote is read back from the fake clientset.
type fixture struct {
	t       *testing.T
	client  *fake.Clientset
	factory informers.SharedInformerFactory
	c       *Controller
	clock   *clocktesting.FakeClock
	now     time.Time
}

func newFixture(t *testing.T, gates ...string) *fixture {
	t.Helper()
	client := fake.NewClientset()
	// The fake clientset neither expands generateName nor assigns UIDs.
	seq := 0
	client.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		pod := action.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		seq++
		if pod.Name == "" {
			pod.Name = fmt.Sprintf("%s%d", pod.GenerateName, seq)
		}
		pod.UID = types.UID(fmt.Sprintf("pod-uid-%d", seq))
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(now)
	g := NewGates()
	for _, s := range gates {
		if err := g.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	c, err := New(client, factory, nil, Options{Gates: g, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, client: client, factory: factory, c: c, clock: clk, now: now}
}

var uidSeq int

func newJob(name string, n int32, mutate ...func(*batchv1.Job)) *batchv1.Job {
	uidSeq++
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(fmt.Sprintf("job-uid-%d", uidSeq))},
		Spec: batchv1.JobSpec{
			Parallelism:          ptr.To(n),
			Completions:          ptr.To(n),
			BackoffLimit:         ptr.To[int32](6),
			ManagedBy:            ptr.To(DefaultName),
			PodReplacementPolicy: ptr.To(batchv1.TerminatingOrFailed),
			CompletionMode:       ptr.To(batchv1.NonIndexedCompletion),
			Selector:             &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": "x-" + name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"batch.kubernetes.io/controller-uid": "x-" + name}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "main", Image: "busybox"}},
				},
			},
		},
	}
	for _, m := range mutate {
		m(j)
	}
	return j
}

// putJob stores the Job in the clientset and the cache.
func (f *fixture) putJob(j *batchv1.Job) {
	f.t.Helper()
	if _, err := f.client.BatchV1().Jobs(j.Namespace).Create(context.Background(), j, metav1.CreateOptions{}); err != nil {
		if _, err := f.client.BatchV1().Jobs(j.Namespace).Update(context.Background(), j, metav1.UpdateOptions{}); err != nil {
			f.t.Fatal(err)
		}
	}
	if err := f.factory.Batch().V1().Jobs().Informer().GetIndexer().Update(j); err != nil {
		f.t.Fatal(err)
	}
}

// refreshJob loads what the controller wrote into the cache (as the watch would).
func (f *fixture) refreshJob(j *batchv1.Job) *batchv1.Job {
	f.t.Helper()
	got, err := f.client.BatchV1().Jobs(j.Namespace).Get(context.Background(), j.Name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	_ = f.factory.Batch().V1().Jobs().Informer().GetIndexer().Update(got)
	return got
}

// pods lists the Job's pods as the clientset has them, and loads them into the cache.
func (f *fixture) pods(j *batchv1.Job) []*corev1.Pod {
	f.t.Helper()
	list, err := f.client.CoreV1().Pods(j.Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	idx := f.factory.Core().V1().Pods().Informer().GetIndexer()
	for _, o := range idx.List() {
		_ = idx.Delete(o)
	}
	var out []*corev1.Pod
	for i := range list.Items {
		p := &list.Items[i]
		if p.CreationTimestamp.IsZero() {
			p.CreationTimestamp = metav1.NewTime(f.clock.Now())
		}
		_ = idx.Add(p)
		out = append(out, p)
	}
	return out
}

// setPod replaces a pod in the clientset and cache.
func (f *fixture) setPod(p *corev1.Pod) {
	f.t.Helper()
	if err := f.client.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), p, p.Namespace); err != nil {
		f.t.Fatal(err)
	}
	_ = f.factory.Core().V1().Pods().Informer().GetIndexer().Update(p)
}

// sync runs one sync of j after loading its latest state into the cache.
func (f *fixture) sync(j *batchv1.Job) *batchv1.Job {
	f.t.Helper()
	j = f.refreshJob(j)
	f.pods(j)
	// Expectations are for the cache: here the cache is always current.
	f.c.expectations.delete(jobKey(j))
	if err := f.c.syncJob(context.Background(), jobKey(j)); err != nil {
		f.t.Fatalf("sync: %v", err)
	}
	return f.refreshJob(j)
}

// startAndTerminateFirstPod creates j's pods, starts deleting the first one
// (it keeps running its SIGTERM trap) and syncs again.
func (f *fixture) startAndTerminateFirstPod(j *batchv1.Job) (*batchv1.Job, *corev1.Pod) {
	f.t.Helper()
	f.putJob(j)
	j = f.sync(j)
	p := f.pods(j)[0]
	terminate(p, f.now)
	f.setPod(p)
	return f.sync(j), p
}

func finish(p *corev1.Pod, phase corev1.PodPhase, at time.Time) {
	p.Status.Phase = phase
	code := int32(0)
	if phase == corev1.PodFailed {
		code = 1
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, FinishedAt: metav1.NewTime(at)}}}}
}

func terminate(p *corev1.Pod, at time.Time) {
	p.DeletionTimestamp = ptr.To(metav1.NewTime(at.Add(30 * time.Second)))
	p.DeletionGracePeriodSeconds = ptr.To[int64](30)
	p.Status.Phase = corev1.PodRunning
}

func conds(j *batchv1.Job) string {
	var s []string
	for _, c := range j.Status.Conditions {
		if c.Status == corev1.ConditionTrue {
			s = append(s, string(c.Type)+"("+c.Reason+")")
		}
	}
	return strings.Join(s, ",")
}

type counts struct{ active, ready, terminating, succeeded, failed int32 }

func statusCounts(j *batchv1.Job) counts {
	return counts{j.Status.Active, ptr.Deref(j.Status.Ready, -1), ptr.Deref(j.Status.Terminating, -1), j.Status.Succeeded, j.Status.Failed}
}

func TestCreatesPodsWithFinalizerAndOwner(t *testing.T) {
	f := newFixture(t)
	j := newJob("a", 3)
	f.putJob(j)
	j = f.sync(j)
	pods := f.pods(j)
	if len(pods) != 3 {
		t.Fatalf("%d pods, want 3", len(pods))
	}
	for _, p := range pods {
		if !hasTrackingFinalizer(p) || metav1.GetControllerOf(p) == nil || metav1.GetControllerOf(p).UID != j.UID {
			t.Fatalf("pod %s lacks the finalizer or owner: %+v", p.Name, p.ObjectMeta)
		}
		for _, fin := range p.Finalizers {
			if fin == batchv1.JobTrackingFinalizer {
				t.Fatalf("pod carries the built-in controller's finalizer")
			}
		}
	}
	if got := statusCounts(j); got != (counts{3, 0, 0, 0, 0}) || j.Status.StartTime == nil {
		t.Fatalf("status %+v startTime %v", got, j.Status.StartTime)
	}
}

func TestIndexedPods(t *testing.T) {
	f := newFixture(t)
	j := newJob("idx", 3, func(j *batchv1.Job) { j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion) })
	f.putJob(j)
	j = f.sync(j)
	seen := map[string]bool{}
	for _, p := range f.pods(j) {
		ix := p.Annotations[batchv1.JobCompletionIndexAnnotation]
		seen[ix] = true
		if p.Labels[batchv1.JobCompletionIndexAnnotation] != ix || p.Spec.Hostname != "idx-"+ix || !strings.HasPrefix(p.GenerateName, "idx-"+ix+"-") {
			t.Errorf("pod of index %s: labels %v hostname %q generateName %q", ix, p.Labels, p.Spec.Hostname, p.GenerateName)
		}
		if !hasEnv(p.Spec.Containers[0].Env, "JOB_COMPLETION_INDEX") {
			t.Errorf("pod of index %s lacks JOB_COMPLETION_INDEX", ix)
		}
	}
	if len(seen) != 3 || !seen["0"] || !seen["1"] || !seen["2"] {
		t.Fatalf("indexes %v, want 0,1,2", seen)
	}
	// Index 1 succeeds: completedIndexes "1", no new pod for it.
	for _, p := range f.pods(j) {
		if p.Annotations[batchv1.JobCompletionIndexAnnotation] == "1" {
			finish(p, corev1.PodSucceeded, f.now)
			f.setPod(p)
		}
	}
	j = f.sync(j)
	if j.Status.CompletedIndexes != "1" || j.Status.Succeeded != 1 || j.Status.Active != 2 {
		t.Fatalf("after index 1 succeeded: completedIndexes %q succeeded %d active %d", j.Status.CompletedIndexes, j.Status.Succeeded, j.Status.Active)
	}
}

func TestCompletionIsDeferredAndAccountedOnce(t *testing.T) {
	f := newFixture(t)
	j := newJob("done", 2)
	f.putJob(j)
	j = f.sync(j)
	pods := f.pods(j)
	finish(pods[0], corev1.PodSucceeded, f.now)
	f.setPod(pods[0])
	finish(pods[1], corev1.PodSucceeded, f.now)
	f.setPod(pods[1])
	j = f.sync(j)
	if j.Status.Succeeded != 2 || len(j.Status.UncountedTerminatedPods.Succeeded) != 0 {
		t.Fatalf("succeeded %d uncounted %v", j.Status.Succeeded, j.Status.UncountedTerminatedPods)
	}
	if conds(j) != "SuccessCriteriaMet(CompletionsReached),Complete(CompletionsReached)" {
		t.Fatalf("conditions %s", conds(j))
	}
	if !j.Status.CompletionTime.Equal(&condition(j, batchv1.JobComplete).LastTransitionTime) {
		t.Fatalf("completionTime %v differs from Complete's transition", j.Status.CompletionTime)
	}
	for _, p := range f.pods(j) {
		if hasTrackingFinalizer(p) {
			t.Fatalf("pod %s of a finished Job keeps the finalizer", p.Name)
		}
	}
	// A later sync of the finished Job changes nothing.
	before := j.ResourceVersion
	if j = f.sync(j); j.ResourceVersion != before || j.Status.Succeeded != 2 {
		t.Fatalf("finished Job changed: rv %s→%s succeeded %d", before, j.ResourceVersion, j.Status.Succeeded)
	}
}

func TestReplacementPolicyFailedWaitsForTerminatingPod(t *testing.T) {
	f := newFixture(t)
	j := newJob("prp", 1, func(j *batchv1.Job) { j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed) })
	j, p := f.startAndTerminateFirstPod(j)
	if got := statusCounts(j); got != (counts{0, 0, 1, 0, 0}) {
		t.Fatalf("while terminating: %+v, want active=0 terminating=1 failed=0", got)
	}
	if n := len(f.pods(j)); n != 1 {
		t.Fatalf("%d pods while the first terminates, want no replacement", n)
	}
	// It reaches Failed: counted, and replaced after the 10s backoff.
	finish(p, corev1.PodFailed, f.now)
	f.setPod(p)
	j = f.sync(j)
	if got := statusCounts(j); got.failed != 1 || got.terminating != 0 {
		t.Fatalf("after Failed: %+v", got)
	}
	if n := len(f.pods(j)); n != 1 {
		t.Fatalf("replacement created inside the backoff")
	}
	f.clock.Step(DefaultPodFailureBackoff)
	j = f.sync(j)
	if got := statusCounts(j); got.active != 1 || len(f.pods(j)) != 2 {
		t.Fatalf("after the backoff: %+v with %d pods, want a replacement", got, len(f.pods(j)))
	}
}

func TestTerminatingOrFailedCountsTheTerminatingPod(t *testing.T) {
	f := newFixture(t)
	j, _ := f.startAndTerminateFirstPod(newJob("tof", 1))
	if got := statusCounts(j); got != (counts{0, 0, 1, 0, 1}) {
		t.Fatalf("while terminating: %+v, want terminating=1 failed=1", got)
	}
	if hasTrackingFinalizer(f.pods(j)[0]) {
		t.Fatal("a pod counted as failed keeps its finalizer")
	}
	f.clock.Step(DefaultPodFailureBackoff)
	j = f.sync(j)
	if got := statusCounts(j); got != (counts{1, 0, 1, 0, 1}) {
		t.Fatalf("after the backoff: %+v, want the replacement beside the terminating pod", got)
	}
}

func TestGateOffRestoresPreKEPBehaviour(t *testing.T) {
	f := newFixture(t, "JobPodReplacementPolicy=false")
	j := newJob("nogate", 1, func(j *batchv1.Job) { j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed) })
	j, _ = f.startAndTerminateFirstPod(j)
	if j.Status.Terminating != nil {
		t.Fatalf("status.terminating = %d with the gate off, want unset", *j.Status.Terminating)
	}
	if j.Status.Failed != 1 {
		t.Fatalf("failed %d: with the gate off a deleted pod counts as failed at once", j.Status.Failed)
	}
}

func TestFailureIsDeferredUntilPodsTerminate(t *testing.T) {
	f := newFixture(t)
	j := newJob("fail", 2, func(j *batchv1.Job) { j.Spec.BackoffLimit = ptr.To[int32](0) })
	f.putJob(j)
	j = f.sync(j)
	pods := f.pods(j)
	finish(pods[0], corev1.PodFailed, f.now)
	f.setPod(pods[0])
	j = f.sync(j)
	if conds(j) != "FailureTarget(BackoffLimitExceeded)" {
		t.Fatalf("conditions %q, want only FailureTarget while a pod remains", conds(j))
	}
	// The fake clientset deletes at once; put the other pod back as terminating.
	other := pods[1]
	terminate(other, f.now)
	_ = f.client.Tracker().Add(other)
	_ = f.factory.Core().V1().Pods().Informer().GetIndexer().Add(other)
	j = f.sync(j)
	if conds(j) != "FailureTarget(BackoffLimitExceeded)" || ptr.Deref(j.Status.Terminating, -1) != 1 {
		t.Fatalf("with a pod terminating: conditions %q terminating %v", conds(j), j.Status.Terminating)
	}
	finish(other, corev1.PodFailed, f.now)
	f.setPod(other)
	j = f.sync(j)
	if conds(j) != "FailureTarget(BackoffLimitExceeded),Failed(BackoffLimitExceeded)" {
		t.Fatalf("conditions %q after every pod ended", conds(j))
	}
	if got := statusCounts(j); got.active != 0 || got.terminating != 0 || got.failed != 2 {
		t.Fatalf("final status %+v", got)
	}
}

func TestIgnoresJobsOfOtherManagers(t *testing.T) {
	f := newFixture(t)
	for _, mb := range []*string{nil, ptr.To(BuiltInName), ptr.To("example.com/other")} {
		j := newJob("other", 1, func(j *batchv1.Job) { j.Spec.ManagedBy = mb })
		f.putJob(j)
		j = f.sync(j)
		if len(f.pods(j)) != 0 || j.Status.StartTime != nil {
			t.Fatalf("managedBy %v: the reference controller acted", ptr.Deref(mb, "<nil>"))
		}
		_ = f.client.BatchV1().Jobs("ns").Delete(context.Background(), "other", metav1.DeleteOptions{})
	}
	f.c.opts.Unmanaged = true
	j := newJob("mine", 1, func(j *batchv1.Job) { j.Spec.ManagedBy = nil })
	f.putJob(j)
	if j = f.sync(j); len(f.pods(j)) != 1 {
		t.Fatal("unmanaged mode did not take a Job without managedBy")
	}
}

func TestSuspendAndResume(t *testing.T) {
	f := newFixture(t)
	j := newJob("susp", 2)
	f.putJob(j)
	j = f.sync(j)
	j.Spec.Suspend = ptr.To(true)
	f.putJob(j)
	f.client.ClearActions()
	j = f.sync(j)
	if len(f.pods(j)) != 0 || conds(j) != "Suspended(JobSuspended)" || j.Status.StartTime != nil || j.Status.Failed != 0 {
		t.Fatalf("suspended: %d pods, conditions %q, startTime %v, failed %d", len(f.pods(j)), conds(j), j.Status.StartTime, j.Status.Failed)
	}
	// The pods a suspension deletes are released first (finalizer removed,
	// then deleted), so they are never counted as failures (upstream deleteJobPods).
	patched := map[string]bool{}
	for _, a := range f.client.Actions() {
		switch a := a.(type) {
		case k8stesting.PatchAction:
			if a.GetResource().Resource == "pods" {
				patched[a.GetName()] = true
			}
		case k8stesting.DeleteAction:
			if a.GetResource().Resource == "pods" && !patched[a.GetName()] {
				t.Fatalf("pod %s deleted before its tracking finalizer was removed", a.GetName())
			}
		}
	}
	if len(patched) != 2 {
		t.Fatalf("%d pods released before deletion, want 2", len(patched))
	}
	j.Spec.Suspend = ptr.To(false)
	f.putJob(j)
	j = f.sync(j)
	if len(f.pods(j)) != 2 || conds(j) != "" || j.Status.StartTime == nil {
		t.Fatalf("resumed: %d pods, conditions %q", len(f.pods(j)), conds(j))
	}
	if c := j.Status.Conditions[0]; c.Type != batchv1.JobSuspended || c.Status != corev1.ConditionFalse || c.Reason != "JobResumed" {
		t.Fatalf("Suspended condition after resume: %+v", c)
	}
}

// A suspension whose releases the apiserver refuses records no event, as
// upstream's deleteJobPods (its pod control records a refused DELETE,
// and a refused finalizer patch never reaches the DELETE); a refused
// DELETE does (FailedDelete).
func TestRefusedReleaseIsNoFailedDelete(t *testing.T) {
	for _, refuse := range []string{"patch", "delete"} {
		f := newFixture(t)
		rec := record.NewFakeRecorder(100)
		f.c.recorder = rec
		j := newJob("susp", 1)
		f.putJob(j)
		j = f.sync(j)
		f.client.PrependReactor(refuse, "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(corev1.Resource("pods"), "x", errors.New("refused"))
		})
		j.Spec.Suspend = ptr.To(true)
		f.putJob(j)
		f.pods(j) // into the cache, as f.sync does
		f.c.expectations.delete(jobKey(j))
		if err := f.c.syncJob(context.Background(), jobKey(j)); err == nil {
			t.Fatalf("%s refused: the sync did not fail", refuse)
		}
		failed := 0
		for len(rec.Events) > 0 {
			if strings.HasPrefix(<-rec.Events, "Warning FailedDelete") {
				failed++
			}
		}
		if want := map[string]int{"patch": 0, "delete": 1}[refuse]; failed != want {
			t.Errorf("%s refused: %d FailedDelete events, want %d", refuse, failed, want)
		}
	}
}

func TestActiveDeadline(t *testing.T) {
	f := newFixture(t)
	j := newJob("deadline", 1, func(j *batchv1.Job) { j.Spec.ActiveDeadlineSeconds = ptr.To[int64](5) })
	f.putJob(j)
	j = f.sync(j)
	f.clock.Step(6 * time.Second)
	j = f.sync(j)
	if !strings.HasPrefix(conds(j), "FailureTarget(DeadlineExceeded)") {
		t.Fatalf("conditions %q after the deadline", conds(j))
	}
}

func TestIndexSet(t *testing.T) {
	s := parseIndexes("1,3-5,9", 8)
	if got := s.String(); got != "1,3-5" {
		t.Errorf("parse with limit 8: %q", got)
	}
	if got := s.with(2, 0, 6).String(); got != "0-6" {
		t.Errorf("with: %q", got)
	}
	if !s.has(4) || s.has(2) {
		t.Error("has")
	}
	if got := parseIndexes("3,4,7", 10).String(); got != "3,4,7" {
		t.Errorf("a pair is written as two numbers, as the built-in controller does: %q", got)
	}
}

func TestBackoff(t *testing.T) {
	now := time.Now()
	r := backoffRecord{failuresAfterLastSuccess: 3, lastFailureTime: ptr.To(now.Add(-5 * time.Second))}
	if got := r.remaining(now); got != 35*time.Second {
		t.Errorf("3 failures, 5s ago: %s left, want 35s (40s backoff)", got)
	}
	r.failuresAfterLastSuccess = 20
	if got := r.remaining(now); got != MaxPodFailureBackoff-5*time.Second {
		t.Errorf("capped backoff: %s", got)
	}
}

func TestAdoptsOrphansAndReleasesMismatches(t *testing.T) {
	f := newFixture(t)
	j := newJob("adopt", 1)
	f.putJob(j)
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: "ns", UID: "orphan-uid", Labels: j.Spec.Template.Labels}}
	orphan.Status.Phase = corev1.PodRunning
	_ = f.client.Tracker().Add(orphan)
	j = f.sync(j)
	pods := f.pods(j)
	if len(pods) != 1 || metav1.GetControllerOf(pods[0]) == nil || metav1.GetControllerOf(pods[0]).UID != j.UID {
		t.Fatalf("orphan not adopted (and no extra pod expected): %d pods", len(pods))
	}
	if !hasTrackingFinalizer(pods[0]) {
		t.Fatalf("orphan adopted without the tracking finalizer: %v", pods[0].Finalizers)
	}
	// Its labels change: released.
	p := pods[0]
	p.Labels = map[string]string{"other": "x"}
	f.setPod(p)
	j = f.sync(j)
	for _, p := range f.pods(j) {
		if p.Name == "orphan" && metav1.GetControllerOf(p) != nil {
			t.Fatal("a pod that stopped matching the selector was not released")
		}
	}
}

func TestElasticScaleDownRemovesHighestIndexes(t *testing.T) {
	f := newFixture(t)
	j := newJob("elastic", 5, func(j *batchv1.Job) { j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion) })
	f.putJob(j)
	j = f.sync(j)
	j.Spec.Completions, j.Spec.Parallelism = ptr.To[int32](3), ptr.To[int32](3)
	f.putJob(j)
	j = f.sync(j)
	for _, p := range f.pods(j) {
		if ix := completionIndex(p); ix >= 3 {
			t.Fatalf("pod of index %d kept after scaling to 3", ix)
		}
	}
	if j.Status.Active != 3 {
		t.Fatalf("active %d, want 3", j.Status.Active)
	}
}

func TestEventsAtTerminalConditions(t *testing.T) {
	f := newFixture(t)
	rec := record.NewFakeRecorder(100)
	f.c.recorder = rec
	j := newJob("ev", 1, func(j *batchv1.Job) { j.Spec.BackoffLimit = ptr.To[int32](0) })
	f.putJob(j)
	j = f.sync(j)
	p := f.pods(j)[0]
	finish(p, corev1.PodFailed, f.now)
	f.setPod(p)
	f.sync(j)
	var got []string
	for len(rec.Events) > 0 {
		got = append(got, <-rec.Events)
	}
	want := "Warning BackoffLimitExceeded Job has reached the specified backoff limit"
	found := 0
	for _, e := range got {
		if e == want {
			found++
		}
	}
	if found != 1 {
		t.Fatalf("events %q: want %q exactly once, at Failed", got, want)
	}
}

func TestReleasesFinalizerOfPodsOfFinishedOrDeletedJobs(t *testing.T) {
	f := newFixture(t)
	j := newJob("gone", 1)
	f.putJob(j)
	j = f.sync(j)
	p := f.pods(j)[0]
	// The Job finishes (as another writer would have it) and a pod still carries the finalizer.
	j.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue}, {Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
	f.putJob(j)
	f.c.releaseOrphan(p)
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := f.client.CoreV1().Pods("ns").Get(ctx, p.Name, metav1.GetOptions{})
		return err == nil && !hasTrackingFinalizer(got), nil
	})
	if err != nil {
		t.Fatal("the pod of a finished Job kept the tracking finalizer")
	}
}

func hasTrackingFinalizer(p *corev1.Pod) bool {
	for _, f := range p.Finalizers {
		if f == TrackingFinalizer {
			return true
		}
	}
	return false
}

// A sync whose cache has not shown its own deletions yet deletes those pods
// no more and counts them neither active nor ready: it once deleted them
// again and wrote status.active negative and ready above active, writes the
// apiserver refuses (422), while a Job of 1,000 running pods failed.
func TestUnobservedDeletionsAreNotRepeated(t *testing.T) {
	f := newFixture(t)
	j := newJob("fail", 3, func(j *batchv1.Job) { j.Spec.BackoffLimit = ptr.To[int32](0) })
	f.putJob(j)
	j = f.sync(j)
	pods := f.pods(j)
	for _, p := range pods {
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		f.setPod(p)
	}
	finish(pods[0], corev1.PodFailed, f.now)
	f.setPod(pods[0])
	j = f.sync(j) // FailureTarget; pods 1 and 2 deleted
	deletes := func() int {
		n := 0
		for _, a := range f.client.Actions() {
			if a.GetVerb() == "delete" && a.GetResource().Resource == "pods" {
				n++
			}
		}
		return n
	}
	if got := deletes(); got != 2 {
		t.Fatalf("%d pod deletions, want 2", got)
	}
	// The cache still shows both running and ready; the deletions are expected.
	idx := f.factory.Core().V1().Pods().Informer().GetIndexer()
	for _, p := range pods[1:] {
		_ = idx.Update(p)
	}
	j = f.refreshJob(j)
	if err := f.c.syncJob(context.Background(), jobKey(j)); err != nil {
		t.Fatal(err)
	}
	j = f.refreshJob(j)
	if got := deletes(); got != 2 {
		t.Errorf("%d pod deletions after a sync with a stale cache, want still 2", got)
	}
	if c := statusCounts(j); c.active < 0 || c.ready > c.active {
		t.Errorf("status %+v: active negative or ready above active", c)
	}
}
