package dispatch

import (
	"context"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func start(t *testing.T, faults map[Fault]bool, objs ...*batchv1.Job) (manager, worker kubernetes.Interface) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m := fake.NewClientset()
	for _, j := range objs {
		if _, err := m.BatchV1().Jobs(j.Namespace).Create(ctx, j, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w := fake.NewClientset()
	mf, wf := informers.NewSharedInformerFactory(m, 0), informers.NewSharedInformerFactory(w, 0)
	d, err := New(m, w, mf, wf, Options{Faults: faults})
	if err != nil {
		t.Fatal(err)
	}
	mf.Start(ctx.Done())
	wf.Start(ctx.Done())
	go func() { _ = d.Run(ctx, 2) }()
	return m, w
}

func waitFor(t *testing.T, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func dispatched(name string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: "uid-" + "m"},
		Spec: batchv1.JobSpec{ManagedBy: ptr.To(DefaultName), Parallelism: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: "uid-m"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{batchv1.ControllerUidLabel: "uid-m", "app": "x"}}}},
	}
}

func TestDispatchCopiesAndMirrors(t *testing.T) {
	ctx := context.Background()
	other := dispatched("other")
	other.Spec.ManagedBy = ptr.To("example.com/else")
	m, w := start(t, nil, dispatched("job"), other)
	var cp *batchv1.Job
	waitFor(t, "the worker's copy", func(ctx context.Context) (bool, error) {
		j, err := w.BatchV1().Jobs("ns").Get(ctx, "job", metav1.GetOptions{})
		cp = j
		return err == nil, nil
	})
	if cp.Spec.ManagedBy != nil || cp.Spec.Selector != nil || cp.Spec.Template.Labels[batchv1.ControllerUidLabel] != "" || cp.Spec.Template.Labels["app"] != "x" ||
		cp.Annotations[OriginAnnotation] != "uid-m" || *cp.Spec.Parallelism != 2 {
		t.Errorf("copy: %+v", cp)
	}
	if _, err := w.BatchV1().Jobs("ns").Get(ctx, "other", metav1.GetOptions{}); err == nil {
		t.Error("another manager's Job was copied")
	}
	cp.Status = batchv1.JobStatus{Active: 1, Terminating: ptr.To[int32](1), Ready: ptr.To[int32](1)}
	if _, err := w.BatchV1().Jobs("ns").UpdateStatus(ctx, cp, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the status mirrored", func(ctx context.Context) (bool, error) {
		j, err := m.BatchV1().Jobs("ns").Get(ctx, "job", metav1.GetOptions{})
		return err == nil && j.Status.Active == 1 && ptr.Deref(j.Status.Terminating, 0) == 1, nil
	})
	if err := m.BatchV1().Jobs("ns").Delete(ctx, "job", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the copy deleted", func(ctx context.Context) (bool, error) {
		_, err := w.BatchV1().Jobs("ns").Get(ctx, "job", metav1.GetOptions{})
		return err != nil, nil
	})
}

func TestFaultNoTerminating(t *testing.T) {
	ctx := context.Background()
	m, w := start(t, map[Fault]bool{FaultNoTerminating: true}, dispatched("job"))
	var cp *batchv1.Job
	waitFor(t, "the worker's copy", func(ctx context.Context) (bool, error) {
		j, err := w.BatchV1().Jobs("ns").Get(ctx, "job", metav1.GetOptions{})
		cp = j
		return err == nil, nil
	})
	cp.Status = batchv1.JobStatus{Active: 1, Terminating: ptr.To[int32](1)}
	if _, err := w.BatchV1().Jobs("ns").UpdateStatus(ctx, cp, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the status mirrored", func(ctx context.Context) (bool, error) {
		j, err := m.BatchV1().Jobs("ns").Get(ctx, "job", metav1.GetOptions{})
		return err == nil && j.Status.Active == 1, nil
	})
	if j, _ := m.BatchV1().Jobs("ns").Get(ctx, "job", metav1.GetOptions{}); j.Status.Terminating != nil {
		t.Errorf("the broken dispatcher copied terminating: %v", *j.Status.Terminating)
	}
}

// FaultLateStatus holds a status back until it has differed for LateBy,
// then lets it through and starts over.
func TestFaultLateStatusHoldsBack(t *testing.T) {
	d := &Dispatcher{}
	if w := d.late("ns/job"); w <= LateBy-time.Second || w > LateBy {
		t.Fatalf("first difference: wait %s, want about %s", w, LateBy)
	}
	d.pending["ns/job"] = time.Now().Add(-LateBy)
	if w := d.late("ns/job"); w != 0 {
		t.Fatalf("after %s: wait %s, want 0", LateBy, w)
	}
	if w := d.late("ns/job"); w <= LateBy-time.Second {
		t.Errorf("the next difference: wait %s, want about %s again", w, LateBy)
	}
}

// A Job's TTL stays on the manager: the copy has none, and a copy removed
// after its Job finished is not made again (kubernetes-sigs/kueue#14734).
// FaultTTLToWorker does both wrong.
func TestFinishedJobNotRunAgain(t *testing.T) {
	for _, fault := range []bool{false, true} {
		ctx := context.Background()
		job := dispatched("job")
		job.Spec.TTLSecondsAfterFinished = ptr.To[int32](3)
		m, w := start(t, map[Fault]bool{FaultTTLToWorker: fault}, job)
		var cp *batchv1.Job
		waitFor(t, "the worker's copy", func(ctx context.Context) (bool, error) {
			j, err := w.BatchV1().Jobs("ns").Get(ctx, "job", metav1.GetOptions{})
			cp = j
			return err == nil, nil
		})
		if got := cp.Spec.TTLSecondsAfterFinished; (got != nil) != fault || (fault && *got != 0) {
			t.Errorf("fault %v: the copy's TTL: %v", fault, got)
		}
		cp.Status = batchv1.JobStatus{Succeeded: 2, Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}
		if _, err := w.BatchV1().Jobs("ns").UpdateStatus(ctx, cp, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the end mirrored", func(ctx context.Context) (bool, error) {
			j, err := m.BatchV1().Jobs("ns").Get(ctx, "job", metav1.GetOptions{})
			return err == nil && j.Status.Succeeded == 2, nil
		})
		// The worker's clean-up removes the finished copy.
		if err := w.BatchV1().Jobs("ns").Delete(ctx, "job", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		made := func(ctx context.Context) (bool, error) {
			_, err := w.BatchV1().Jobs("ns").Get(ctx, "job", metav1.GetOptions{})
			return err == nil, nil
		}
		if fault {
			waitFor(t, "the broken dispatcher making the copy again", made)
			continue
		}
		// Nothing to wait on but time: the copy must stay gone.
		if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 500*time.Millisecond, true, made); err == nil {
			t.Error("the copy of a finished Job was made again")
		}
	}
}
