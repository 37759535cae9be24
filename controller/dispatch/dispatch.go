// Package dispatch is a reference dispatcher: what Kueue's MultiKueue does
// for batch/v1 Jobs, reduced to its core. A Job on the manager cluster whose
// spec.managedBy names the dispatcher is run as a copy on a worker cluster
// (by the worker's own Job controller), and the copy's status is copied
// back to the manager's Job; deleting the manager's Job deletes the copy.
// It lets the multi-cluster runs of issue #31 be built and checked without
// Kueue, and, broken on purpose (Faults), shows that the mirroring checks
// (invariants.CheckMirror) catch a dispatcher that drops part of a status.
package dispatch

import (
	"context"
	"fmt"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// DefaultName is the spec.managedBy value the dispatcher answers to.
const DefaultName = "jobconform.io/dispatcher"

// OriginAnnotation marks a worker's copy with the manager Job's UID.
const OriginAnnotation = "jobconform.io/dispatched-from"

// Fault is a deliberate bug of the dispatcher (a negative control).
type Fault string

// Faults: what a dispatcher gets wrong.
const (
	// FaultNoTerminating copies every status field but status.terminating.
	FaultNoTerminating Fault = "no-terminating"
	// FaultLateStatus copies the copy's status only once it has differed
	// from the manager's for LateBy: faithful, in order, and late.
	FaultLateStatus Fault = "late-status"
	// FaultTTLToWorker gives the copy ttlSecondsAfterFinished 0 and makes a
	// missing copy again whatever the Job's state: the worker removes the
	// copy as soon as it finishes and the finished Job runs again, as with
	// MultiKueue, which copied the Job's own TTL (kubernetes-sigs/kueue#14734;
	// 0 here, so that the worker's clean-up always comes first).
	FaultTTLToWorker Fault = "ttl-to-worker"
)

// LateBy is how late FaultLateStatus copies a status.
const LateBy = 15 * time.Second

// Options shape a Dispatcher.
type Options struct {
	// Name is the spec.managedBy value it answers to (default DefaultName).
	Name   string
	Faults map[Fault]bool
}

// Dispatcher runs the manager's Jobs on a worker.
type Dispatcher struct {
	manager, worker kubernetes.Interface
	opts            Options
	managerJobs     batchlisters.JobLister
	workerJobs      batchlisters.JobLister
	synced          []cache.InformerSynced
	queue           workqueue.TypedRateLimitingInterface[string]

	mu      sync.Mutex
	pending map[string]time.Time // FaultLateStatus: since when a Job's status differs
}

// New wires a Dispatcher to informers of the manager (mf) and the worker
// (wf); start both factories after.
func New(manager, worker kubernetes.Interface, mf, wf informers.SharedInformerFactory, opts Options) (*Dispatcher, error) {
	if opts.Name == "" {
		opts.Name = DefaultName
	}
	mj, wj := mf.Batch().V1().Jobs(), wf.Batch().V1().Jobs()
	d := &Dispatcher{manager: manager, worker: worker, opts: opts,
		managerJobs: mj.Lister(), workerJobs: wj.Lister(),
		synced: []cache.InformerSynced{mj.Informer().HasSynced, wj.Informer().HasSynced},
		queue:  workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())}
	enqueue := func(obj any) {
		if j, ok := obj.(*batchv1.Job); ok {
			d.queue.Add(j.Namespace + "/" + j.Name)
		} else if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			d.queue.Add(t.Key)
		}
	}
	handler := cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, n any) { enqueue(n) }, DeleteFunc: enqueue}
	if _, err := mj.Informer().AddEventHandler(handler); err != nil {
		return nil, err
	}
	if _, err := wj.Informer().AddEventHandler(handler); err != nil {
		return nil, err
	}
	return d, nil
}

// HasSynced tells whether both clusters' Jobs are known: the dispatcher
// is ready.
func (d *Dispatcher) HasSynced() bool {
	for _, s := range d.synced {
		if !s() {
			return false
		}
	}
	return true
}

// Run dispatches until ctx ends.
func (d *Dispatcher) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrash()
	defer d.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), d.synced...) {
		return fmt.Errorf("informer caches did not sync")
	}
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wait.UntilWithContext(ctx, func(ctx context.Context) {
				for d.next(ctx) {
				}
			}, time.Second)
		}()
	}
	<-ctx.Done()
	d.queue.ShutDown()
	wg.Wait()
	return nil
}

func (d *Dispatcher) next(ctx context.Context) bool {
	key, quit := d.queue.Get()
	if quit {
		return false
	}
	defer d.queue.Done(key)
	if err := d.sync(ctx, key); err != nil {
		klog.FromContext(ctx).Error(err, "dispatch", "job", key)
		d.queue.AddRateLimited(key)
		return true
	}
	d.queue.Forget(key)
	return true
}

// sync brings the worker's copy of the manager's Job key, and the manager's
// Job's status, up to date.
func (d *Dispatcher) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	job, err := d.managerJobs.Jobs(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return d.deleteCopy(ctx, ns, name)
	}
	if err != nil {
		return err
	}
	if ptr.Deref(job.Spec.ManagedBy, "") != d.opts.Name {
		return nil
	}
	if job.DeletionTimestamp != nil {
		return d.deleteCopy(ctx, ns, name)
	}
	cp, err := d.workerJobs.Jobs(ns).Get(name)
	if apierrors.IsNotFound(err) {
		if finished(job) && !d.opts.Faults[FaultTTLToWorker] {
			return nil // its copy ran and was removed: the Job is not run again
		}
		return d.createCopy(ctx, job)
	}
	if err != nil {
		return err
	}
	if cp.Annotations[OriginAnnotation] != string(job.UID) {
		return fmt.Errorf("worker Job %s is not a copy of the manager's (UID %s)", key, job.UID)
	}
	status := *cp.Status.DeepCopy()
	if d.opts.Faults[FaultNoTerminating] {
		status.Terminating = job.Status.Terminating
	}
	if apiequality.Semantic.DeepEqual(job.Status, status) {
		return nil
	}
	if d.opts.Faults[FaultLateStatus] {
		if wait := d.late(key); wait > 0 {
			d.queue.AddAfter(key, wait)
			return nil
		}
	}
	up := job.DeepCopy()
	up.Status = status
	_, err = d.manager.BatchV1().Jobs(ns).UpdateStatus(ctx, up, metav1.UpdateOptions{})
	return err
}

// late is how long FaultLateStatus still holds back the status of Job key,
// which differs from its copy's now.
func (d *Dispatcher) late(key string) time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pending == nil {
		d.pending = map[string]time.Time{}
	}
	since, ok := d.pending[key]
	if !ok {
		since = time.Now()
		d.pending[key] = since
	}
	if wait := LateBy - time.Since(since); wait > 0 {
		return wait
	}
	delete(d.pending, key)
	return 0
}

// createCopy creates the worker's copy: the spec as the user wrote it, run
// by the worker's own Job controller (no managedBy, and the selector and the
// labels the manager's apiserver generated left for the worker's to make).
func (d *Dispatcher) createCopy(ctx context.Context, job *batchv1.Job) error {
	if _, err := d.worker.CoreV1().Namespaces().Get(ctx, job.Namespace, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		_, err = d.worker.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: job.Namespace}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	spec := *job.Spec.DeepCopy()
	spec.ManagedBy = nil
	// The manager's Job keeps its TTL: the worker's clean-up must not
	// remove the copy before its end reaches the manager (kueue#14734).
	spec.TTLSecondsAfterFinished = nil
	if d.opts.Faults[FaultTTLToWorker] {
		spec.TTLSecondsAfterFinished = ptr.To[int32](0)
	}
	if !ptr.Deref(spec.ManualSelector, false) {
		spec.Selector = nil
		for _, l := range []string{batchv1.ControllerUidLabel, batchv1.JobNameLabel, "controller-uid", "job-name"} {
			delete(spec.Template.Labels, l)
		}
	}
	cp := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: job.Namespace, Name: job.Name, Labels: job.Labels,
			Annotations: map[string]string{OriginAnnotation: string(job.UID)}},
		Spec: spec,
	}
	_, err := d.worker.BatchV1().Jobs(job.Namespace).Create(ctx, cp, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// finished tells whether the Job shows Complete or Failed.
func finished(job *batchv1.Job) bool {
	for _, c := range job.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func (d *Dispatcher) deleteCopy(ctx context.Context, ns, name string) error {
	err := d.worker.BatchV1().Jobs(ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
