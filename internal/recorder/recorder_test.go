package recorder

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jobconform/jobconform/internal/timeline"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

func pod(ns, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// The recorder keeps every change of its namespace's Jobs and Pods (and the
// cluster's Nodes) in arrival order, each as it was then, and nothing of
// other namespaces.
func TestRecordsChangesInOrder(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := fake.NewClientset(pod("ns", "before"))
	r, err := Start(ctx, client, "ns")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	if _, err := r.WaitFor(ctx, time.Second, "the pod listed at start", func(e Entry) bool { return e.Name == "before" && e.Type == Added }); err != nil {
		t.Fatal(err)
	}

	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"}}
	if _, err := client.BatchV1().Jobs("ns").Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := client.CoreV1().Pods("ns").Create(ctx, pod("ns", "p"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Pods("elsewhere").Create(ctx, pod("elsewhere", "other"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	if _, err := client.CoreV1().Pods("ns").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.CoreV1().Pods("ns").Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.WaitFor(ctx, 10*time.Second, "the deletion", func(e Entry) bool { return e.Name == "p" && e.Type == Deleted }); err != nil {
		t.Fatal(err)
	}
	if _, err := r.WaitFor(ctx, 10*time.Second, "the node", func(e Entry) bool { return e.Kind == "Node" }); err != nil {
		t.Fatal(err)
	}

	var pods []string
	for _, e := range r.Of("Pod") {
		pods = append(pods, string(e.Type)+" "+e.Name)
		if e.Name == "other" {
			t.Errorf("recorded a pod of another namespace")
		}
	}
	if got, want := strings.Join(pods, ","), "ADDED before,ADDED p,MODIFIED p,DELETED p"; got != want {
		t.Fatalf("pod changes %s, want %s", got, want)
	}
	if len(r.Of("Job")) != 1 {
		t.Fatalf("job entries %d", len(r.Of("Job")))
	}
	es := r.Entries()
	for i, e := range es {
		if e.Seq != i {
			t.Fatalf("entry %d has seq %d: seq must be the arrival order", i, e.Seq)
		}
		if i > 0 && e.Time.Before(es[i-1].Time) {
			t.Fatalf("entry %d arrived before entry %d", i, i-1)
		}
	}
	// Each entry is a copy: the Running update is kept as it was.
	running := r.Of("Pod")[2].Pod()
	p.Status.Phase = corev1.PodFailed
	if running.Status.Phase != corev1.PodRunning {
		t.Fatalf("an entry changed with the object it was copied from")
	}
	if names := r.PodNames(); strings.Join(names, ",") != "before,p" {
		t.Fatalf("pod names %v", names)
	}
	if d := r.Dump("Pod"); strings.Count(d, "\n") != 4 || !strings.Contains(d, "phase=Running") {
		t.Fatalf("dump:\n%s", d)
	}
}

// A deletion learnt on a relist comes as a tombstone: the last known state
// is recorded as the deletion, not dropped.
func TestTombstoneRecordedAsDeletion(t *testing.T) {
	r := &Recorder{notify: make(chan struct{})}
	last := pod("ns", "gone")
	last.ResourceVersion = "42"
	last.Status.Phase = corev1.PodRunning
	r.handler("Pod").OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/gone", Obj: last})
	r.handler("Pod").OnDelete("not an object")
	es := r.Entries()
	if len(es) != 1 || es[0].Type != Deleted || es[0].Name != "gone" || es[0].Revision() != 42 || es[0].Pod().Status.Phase != corev1.PodRunning {
		t.Fatalf("entries %+v", es)
	}
}

// WaitFor sees entries recorded before the call, and says what it waited for
// when the time is up.
func TestWaitFor(t *testing.T) {
	r := &Recorder{notify: make(chan struct{})}
	r.add(Added, "Pod", pod("ns", "early"))
	e, err := r.WaitFor(context.Background(), time.Second, "early", func(e Entry) bool { return e.Name == "early" })
	if err != nil || e.Name != "early" {
		t.Fatalf("an entry recorded before the wait: %v %v", e, err)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		r.add(Modified, "Pod", pod("ns", "late"))
	}()
	if _, err := r.WaitFor(context.Background(), 10*time.Second, "late", func(e Entry) bool { return e.Name == "late" }); err != nil {
		t.Fatal(err)
	}
	_, err = r.WaitFor(context.Background(), 100*time.Millisecond, "a pod named never", func(e Entry) bool { return e.Name == "never" })
	if err == nil || !strings.Contains(err.Error(), "a pod named never") {
		t.Fatalf("timeout: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.WaitFor(ctx, time.Minute, "x", func(Entry) bool { return false }); err == nil || !strings.Contains(err.Error(), "canceled") {
		t.Fatalf("cancelled wait: %v", err)
	}
}

// The gaps follow the informers' calls: a failed call opens one, a resumed
// watch closes it, a relist closes it after its burst; the initial list and
// Events' or Nodes' gaps do not count.
func TestGaps(t *testing.T) {
	r := &Recorder{gaps: map[string][]timeline.Span{}, listed: map[string]bool{}}
	down := errors.New("connection refused")
	r.connection("Pod", nil, true) // initial list
	if g := r.Gaps(); len(g) != 0 {
		t.Fatalf("gaps after the initial list: %v", g)
	}
	r.connection("Pod", down, false)
	r.connection("Pod", down, false)
	if g := r.Gaps(); len(g) != 1 || g[0].To.IsZero() {
		t.Fatalf("an open gap must end now when asked: %v", g)
	}
	r.connection("Pod", nil, true) // relist
	g := r.Gaps()
	if len(g) != 1 || !g[0].To.After(time.Now()) {
		t.Fatalf("a relist ends its gap after the burst: %v", g)
	}
	r.connection("Job", down, false)
	r.connection("Job", nil, false) // watch resumed: nothing lost
	r.connection("Node", down, false)
	if g := r.Gaps(); len(g) != 2 {
		t.Fatalf("want the Pod and the Job gap, not the Node one: %v", g)
	}
}

// A watch that resumes and at once reports an error (410 Gone from a rebuilt
// watch cache) resumed nothing: the gap it closed is open again until the
// relist. Seen in a drill: the Pod informer's relist came after the run was
// judged, and a Complete written after the pods had succeeded was judged
// against their state from before the apiserver restart.
func TestResumedWatchThatFailsReopensTheGap(t *testing.T) {
	r := &Recorder{gaps: map[string][]timeline.Span{}, listed: map[string]bool{}}
	var w *watch.FakeWatcher
	lw := r.listWatch("Pod",
		func(context.Context, metav1.ListOptions) (runtime.Object, error) { return &corev1.PodList{}, nil },
		func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			w = watch.NewFake()
			return w, nil
		})
	ctx := context.Background()
	if _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); err != nil { // initial list
		t.Fatal(err)
	}
	r.connection("Pod", errors.New("connection refused"), false)
	closedAt := time.Now()
	out, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "430"})
	if err != nil {
		t.Fatal(err)
	}
	if g := r.Gaps(); len(g) != 1 || g[0].To.After(time.Now()) || g[0].To.Before(closedAt) {
		t.Fatalf("a resumed watch closes the gap: %v", g)
	}
	go w.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired})
	if e := <-out.ResultChan(); e.Type != watch.Error {
		t.Fatalf("the error event must reach the informer: %v", e)
	}
	r.mu.Lock()
	reopened := r.gaps["Pod"][0].To.IsZero()
	r.mu.Unlock()
	if !reopened {
		t.Fatalf("the gap must be open again after the watch failed at once: %v", r.Gaps())
	}
	if _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); err != nil { // the relist
		t.Fatal(err)
	}
	if g := r.Gaps(); len(g) != 1 || !g[0].To.After(time.Now()) {
		t.Fatalf("the relist ends the gap after its burst: %v", g)
	}

	// A resumed watch that delivers first and fails later leaves the gap closed.
	r.connection("Pod", errors.New("connection refused"), false)
	out, _ = lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "700"})
	go w.Modify(pod("ns", "p"))
	<-out.ResultChan()
	go w.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired})
	<-out.ResultChan()
	r.mu.Lock()
	last := r.gaps["Pod"][len(r.gaps["Pod"])-1]
	r.mu.Unlock()
	if last.To.IsZero() {
		t.Fatalf("a watch that delivered changes resumed: its gap stays closed: %v", r.Gaps())
	}
}

// WaitFrom counts only the entries from a sequence number on; Latest is the
// last entry of one object.
func TestWaitFromAndLatest(t *testing.T) {
	r := &Recorder{notify: make(chan struct{})}
	if _, ok := r.Latest("Pod", "p"); ok {
		t.Fatal("Latest of an empty recording")
	}
	r.add(Added, "Pod", pod("ns", "p"))
	r.add(Added, "Pod", pod("ns", "q"))
	r.add(Modified, "Pod", pod("ns", "p"))
	if e, ok := r.Latest("Pod", "p"); !ok || e.Seq != 2 {
		t.Fatalf("Latest: %+v %v", e, ok)
	}
	isP := func(e Entry) bool { return e.Name == "p" }
	if e, err := r.WaitFrom(context.Background(), 1, time.Second, "p", isP); err != nil || e.Seq != 2 {
		t.Fatalf("from 1: %+v %v", e, err)
	}
	if e, err := r.WaitFrom(context.Background(), 0, time.Second, "p", isP); err != nil || e.Seq != 0 {
		t.Fatalf("from 0: %+v %v", e, err)
	}
	if _, err := r.WaitFrom(context.Background(), 3, 100*time.Millisecond, "p", isP); err == nil {
		t.Fatal("from past every entry: met")
	}
}

// A mirrored recording keeps the worker's copy under its own name and the
// manager's Job as the user sees it: the copy (its UID, its selector), with
// the manager's status and managedBy, from the copy's first sighting on.
func TestMirroredGraftsTheManagersStatusOnTheCopy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	manager, worker := fake.NewClientset(), fake.NewClientset()
	r, err := StartMirrored(ctx, manager, worker, "ns")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	mb := "example.com/dispatcher"
	m, err := manager.BatchV1().Jobs("ns").Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: "manager-uid"},
		Spec: batchv1.JobSpec{ManagedBy: &mb}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	job := func(uid string, active int32) func(Entry) bool {
		return func(e Entry) bool {
			return e.Kind == "Job" && e.Name == "job" && string(e.Job().UID) == uid && e.Job().Status.Active == active
		}
	}
	if _, err := r.WaitFor(ctx, 5*time.Second, "the manager's Job", job("manager-uid", 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.BatchV1().Jobs("ns").Create(ctx, &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: "copy-uid"},
		Status: batchv1.JobStatus{Active: 3}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.WaitFor(ctx, 5*time.Second, "the copy under its own name", func(e Entry) bool {
		return e.Kind == "Job" && e.Name == "job"+WorkerSuffix && e.Job().Status.Active == 3
	}); err != nil {
		t.Fatal(err)
	}
	// The copy's first sighting: the manager's Job is the copy, with the manager's status (nothing yet).
	e, err := r.WaitFor(ctx, 5*time.Second, "the manager's Job on the copy", job("copy-uid", 0))
	if err != nil {
		t.Fatal(err)
	}
	if g := e.Job(); g.Spec.ManagedBy == nil || *g.Spec.ManagedBy != mb {
		t.Errorf("grafted Job's managedBy = %v, want the manager's %s", g.Spec.ManagedBy, mb)
	}
	m.Status.Active = 3
	if _, err := manager.BatchV1().Jobs("ns").UpdateStatus(ctx, m, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.WaitFor(ctx, 5*time.Second, "the manager's status on the copy", job("copy-uid", 3)); err != nil {
		t.Fatal(err)
	}
	for _, e := range r.Entries() {
		if e.Kind == "Job" && e.Name == "job" && e.Job().UID == "manager-uid" && e.Seq > 0 && e.Job().Status.Active != 0 {
			t.Errorf("entry %d: a status recorded on the manager's own Job after the copy existed", e.Seq)
		}
	}
}
