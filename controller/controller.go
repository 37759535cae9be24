package controller

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	batchlisters "k8s.io/client-go/listers/batch/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/lru"
)

// DefaultName is the spec.managedBy value the reference controller answers to.
const DefaultName = "jobconform.io/reference-controller"

// BuiltInName is the built-in controller's own managedBy value.
const BuiltInName = "kubernetes.io/job-controller"

// TrackingFinalizer marks the pods whose outcome is not yet counted in their
// Job's status. It is the reference controller's own: external controllers
// must not use batch.kubernetes.io/job-tracking (KEP-4368).
const TrackingFinalizer = "jobconform.io/job-tracking"

// The built-in controller's timing, kept so that both controllers produce the
// same sequence of statuses.
var (
	// podUpdateBatchPeriod coalesces the pod events of one Job into one sync.
	podUpdateBatchPeriod = time.Second
	// DefaultPodFailureBackoff and MaxPodFailureBackoff bound the delay before a
	// failed pod is replaced: 10s·2^(n−1), n failures since the last success.
	DefaultPodFailureBackoff = 10 * time.Second
	MaxPodFailureBackoff     = 10 * time.Minute
)

// maxPodCreateDeletePerSync caps the pods one sync creates or deletes.
const maxPodCreateDeletePerSync = 500

// maxUncountedPods caps status.uncountedTerminatedPods, as upstream does, to
// keep the status object small.
const maxUncountedPods = 500

// Options configure a Controller.
type Options struct {
	// Name is the spec.managedBy value to reconcile; default DefaultName.
	Name string
	// Unmanaged also takes Jobs with no spec.managedBy (or the built-in's name),
	// for clusters whose built-in Job controller is disabled.
	Unmanaged bool
	// Gates are the controller's own feature gates (nil: defaults).
	Gates *Gates
	// Workers is the number of Jobs synced in parallel; default 5.
	Workers int
	// MaxPodsPerSync caps the pods one sync creates or deletes; default
	// upstream's 500. A small cap slows the controller on purpose without
	// breaking a promise: the scale suite's control that its table shows a
	// slower controller as slower.
	MaxPodsPerSync int
	// Clock is for tests; default the real clock.
	Clock clock.WithTicker
}

// A Job whose sync failed (an API error: a refused pod creation, a
// conflict) is synced again after apiBackoff, doubling up to maxAPIBackoff
// while it keeps failing, as upstream's DefaultJobApiBackOff and
// MaxJobApiBackOff: client-go's default controller limiter starts at 5ms and
// retried a refused creation ten times where the built-in tries three.
const (
	apiBackoff    = time.Second
	maxAPIBackoff = time.Minute
)

// Controller reconciles Jobs.
type Controller struct {
	opts    Options
	client  kubernetes.Interface
	clock   clock.WithTicker
	metrics *Metrics

	jobLister batchlisters.JobLister
	podLister corelisters.PodLister
	podIndex  cache.Indexer
	synced    []cache.InformerSynced

	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder
	events   record.EventBroadcaster

	expectations          *expectations
	finalizerExpectations *uidExpectations
	// finalizer tracks this controller's pods (TrackingFinalizer).
	finalizer string
	backoff   *backoffStore

	// running is set once the caches synced and workers started.
	running atomic.Bool

	// notRunning remembers the UIDs of owners a live read found gone or
	// finished (they never run again), and ownerReads makes the pods of one
	// owner share one read: a 500-pod Job deleted cost a read per pod, and
	// more (906 reads in the scale suite, issue #32).
	notRunning *lru.Cache
	ownerReads singleflight.Group

	// finishedJobs remembers Jobs this process wrote a terminal condition for,
	// so a sync on a stale cache does not act on them again.
	finishedJobs sync.Map
	// stale: versions of Jobs the cache may hold that the apiserver has
	// replaced (jobToSync reads those Jobs live).
	stale *staleVersions
}

// New wires a Controller to informers from factory; call factory.Start after.
func New(client kubernetes.Interface, factory informers.SharedInformerFactory, metrics *Metrics, opts Options) (*Controller, error) {
	if opts.Name == "" {
		opts.Name = DefaultName
	}
	if opts.Gates == nil {
		opts.Gates = NewGates()
	}
	if opts.MaxPodsPerSync <= 0 {
		opts.MaxPodsPerSync = maxPodCreateDeletePerSync
	}
	if opts.Workers <= 0 {
		opts.Workers = 5
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if metrics == nil {
		metrics = NewMetrics(nil)
	}
	jobInformer := factory.Batch().V1().Jobs()
	podInformer := factory.Core().V1().Pods()
	broadcaster := record.NewBroadcaster()
	c := &Controller{
		opts:                  opts,
		client:                client,
		clock:                 opts.Clock,
		metrics:               metrics,
		jobLister:             jobInformer.Lister(),
		podLister:             podInformer.Lister(),
		podIndex:              podInformer.Informer().GetIndexer(),
		synced:                []cache.InformerSynced{jobInformer.Informer().HasSynced, podInformer.Informer().HasSynced},
		queue:                 workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.NewTypedItemExponentialFailureRateLimiter[string](apiBackoff, maxAPIBackoff), workqueue.TypedRateLimitingQueueConfig[string]{Name: "job", Clock: opts.Clock}),
		events:                broadcaster,
		recorder:              broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "jobconform-reference-controller"}),
		expectations:          newExpectations(),
		finalizerExpectations: newUIDExpectations(),
		backoff:               newBackoffStore(),
		stale:                 newStaleVersions(),
		notRunning:            lru.New(4096),
	}
	c.finalizer = TrackingFinalizer
	if err := podInformer.Informer().AddIndexers(cache.Indexers{ownerIndex: indexByOwnerUID}); err != nil {
		return nil, err
	}
	if _, err := jobInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addJob,
		UpdateFunc: c.updateJob,
		DeleteFunc: c.deleteJob,
	}); err != nil {
		return nil, err
	}
	if _, err := podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.addPod,
		UpdateFunc: c.updatePod,
		DeleteFunc: c.deletePod,
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// Run processes Jobs until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	defer utilruntime.HandleCrash()
	c.events.StartStructuredLogging(3)
	c.events.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: c.client.CoreV1().Events("")})
	defer c.events.Shutdown()
	defer c.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), c.synced...) {
		return fmt.Errorf("informer caches did not sync")
	}
	c.running.Store(true)
	defer c.running.Store(false)
	klog.FromContext(ctx).Info("reference Job controller running", "name", c.opts.Name, "unmanaged", c.opts.Unmanaged, string(JobPodReplacementPolicy), c.opts.Gates.Enabled(JobPodReplacementPolicy))
	var wg sync.WaitGroup
	for i := 0; i < c.opts.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wait.UntilWithContext(ctx, c.worker, time.Second)
		}()
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
	return nil
}

func (c *Controller) worker(ctx context.Context) {
	for c.processNext(ctx) {
	}
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	err := c.syncJob(ctx, key)
	c.metrics.observeSync(err)
	if err == nil {
		c.queue.Forget(key)
		return true
	}
	utilruntime.HandleErrorWithContext(ctx, err, "syncing Job", "key", key)
	c.queue.AddRateLimited(key)
	return true
}

// Running tells whether the controller has synced its caches and is working.
func (c *Controller) Running() bool { return c.running.Load() }

// Manages tells whether this controller owns a Job (spec.managedBy).
func (c *Controller) Manages(job *batchv1.Job) bool {
	if job.Spec.ManagedBy == nil {
		return c.opts.Unmanaged
	}
	if *job.Spec.ManagedBy == BuiltInName {
		return c.opts.Unmanaged
	}
	return *job.Spec.ManagedBy == c.opts.Name
}

func jobKey(job *batchv1.Job) string { return job.Namespace + "/" + job.Name }

func (c *Controller) enqueue(job *batchv1.Job, after time.Duration) {
	if !c.Manages(job) {
		return
	}
	if after > 0 {
		c.queue.AddAfter(jobKey(job), after)
	} else {
		c.queue.Add(jobKey(job))
	}
}

func (c *Controller) addJob(obj any) {
	job := obj.(*batchv1.Job)
	if mb := job.Spec.ManagedBy; mb != nil && *mb != BuiltInName && !c.Manages(job) {
		// Counted on every add, a relist after a restart included, as upstream.
		c.metrics.ByExternalController.WithLabelValues(*mb).Inc()
	}
	c.enqueue(job, 0)
}

func (c *Controller) updateJob(old, cur any) {
	oldJob, curJob := old.(*batchv1.Job), cur.(*batchv1.Job)
	if oldJob.UID != curJob.UID { // recreated under the same name: forget the old one
		c.forgetJob(jobKey(oldJob))
	}
	// A spec change syncs at once; a status-only change (often our own write)
	// is batched like pod events, as the built-in controller does — syncing on
	// our own write at once would act on a cache that lags behind our creations.
	if curJob.Generation == oldJob.Generation {
		c.enqueue(curJob, podUpdateBatchPeriod)
	} else {
		c.enqueue(curJob, 0)
	}
	// A new activeDeadlineSeconds, or a resume, restarts the deadline clock.
	if curJob.Spec.ActiveDeadlineSeconds != nil && curJob.Status.StartTime != nil && !ptrEqual(oldJob.Spec.ActiveDeadlineSeconds, curJob.Spec.ActiveDeadlineSeconds) {
		left := time.Duration(*curJob.Spec.ActiveDeadlineSeconds)*time.Second - c.clock.Since(curJob.Status.StartTime.Time)
		c.enqueue(curJob, left)
	}
}

func (c *Controller) deleteJob(obj any) {
	job, ok := obj.(*batchv1.Job)
	if !ok {
		tomb, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			return
		}
		if job, ok = tomb.Obj.(*batchv1.Job); !ok {
			return
		}
	}
	// What is kept per Job name goes with the Job, now: a Job created again
	// at once under its name is found by the next sync, which so never sees
	// the name free, and must not wait out its predecessor's pod-failure
	// backoff (as upstream's deleteJob handler, kubernetes/kubernetes#132042).
	c.backoff.remove(jobKey(job))
	c.stale.forget(jobKey(job))
	c.enqueue(job, 0)
}

func (c *Controller) forgetJob(key string) {
	c.expectations.delete(key)
	c.finalizerExpectations.delete(key)
	c.backoff.remove(key)
	c.stale.forget(key)
}

// jobOfPod resolves a pod's controller reference to a Job this controller manages.
func (c *Controller) jobOfPod(pod *corev1.Pod) *batchv1.Job {
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != "Job" || ref.APIVersion != batchv1.SchemeGroupVersion.String() {
		return nil
	}
	job, err := c.jobLister.Jobs(pod.Namespace).Get(ref.Name)
	if err != nil || job.UID != ref.UID || !c.Manages(job) {
		return nil
	}
	return job
}

// jobsSelecting lists the managed Jobs whose selector matches an orphan pod.
func (c *Controller) jobsSelecting(pod *corev1.Pod) []*batchv1.Job {
	jobs, err := c.jobLister.Jobs(pod.Namespace).List(labels.Everything())
	if err != nil {
		return nil
	}
	var out []*batchv1.Job
	for _, j := range jobs {
		if !c.Manages(j) || j.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
		if err == nil && !sel.Empty() && sel.Matches(labels.Set(pod.Labels)) {
			out = append(out, j)
		}
	}
	return out
}

func (c *Controller) addPod(obj any) {
	pod := obj.(*corev1.Pod)
	if job := c.jobOfPod(pod); job != nil {
		c.expectations.creationObserved(jobKey(job))
		c.enqueue(job, podUpdateBatchPeriod)
		return
	}
	if metav1.GetControllerOf(pod) == nil {
		for _, j := range c.jobsSelecting(pod) {
			c.enqueue(j, podUpdateBatchPeriod)
		}
	}
	c.releaseOrphan(pod)
}

func (c *Controller) updatePod(old, cur any) {
	oldPod, curPod := old.(*corev1.Pod), cur.(*corev1.Pod)
	if oldPod.ResourceVersion == curPod.ResourceVersion {
		return
	}
	if curPod.DeletionTimestamp != nil && oldPod.DeletionTimestamp == nil {
		if job := c.jobOfPod(curPod); job != nil {
			c.expectations.deletionObserved(jobKey(job), curPod.UID)
		}
	}
	oldRef, curRef := metav1.GetControllerOf(oldPod), metav1.GetControllerOf(curPod)
	finalizerGone := !c.tracked(curPod)
	if !reflect.DeepEqual(oldRef, curRef) && oldRef != nil {
		if job := c.jobOfPod(oldPod); job != nil {
			if finalizerGone {
				c.finalizerExpectations.observed(jobKey(job), curPod.UID)
			}
			c.enqueue(job, podUpdateBatchPeriod)
		}
	}
	if job := c.jobOfPod(curPod); job != nil {
		if finalizerGone {
			c.finalizerExpectations.observed(jobKey(job), curPod.UID)
		}
		// Finishing, starting to terminate and readiness changes are batched
		// like any other change: the built-in controller does the same.
		c.enqueue(job, podUpdateBatchPeriod)
		return
	}
	if curRef == nil {
		for _, j := range c.jobsSelecting(curPod) {
			c.enqueue(j, podUpdateBatchPeriod)
		}
	}
	c.releaseOrphan(curPod)
}

func (c *Controller) deletePod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		tomb, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			return
		}
		if pod, ok = tomb.Obj.(*corev1.Pod); !ok {
			return
		}
	}
	if job := c.jobOfPod(pod); job != nil {
		key := jobKey(job)
		c.expectations.deletionObserved(key, pod.UID)
		c.finalizerExpectations.observed(key, pod.UID)
		c.enqueue(job, podUpdateBatchPeriod)
	}
}

// releaseOrphan removes the tracking finalizer from a pod that no running Job
// of this controller owns any more (its Job was deleted or has finished, or it
// released the pod), so the pod can go. The owner is checked with a live
// read, not the cache.
func (c *Controller) releaseOrphan(pod *corev1.Pod) {
	if !c.tracked(pod) {
		return
	}
	if job := c.jobOfPod(pod); job != nil && !jobFinished(job) {
		return
	}
	if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "Job" {
		// A running Job of another controller (another instance of this
		// one, under another name, shares the finalizer): its pods are not
		// ours to release, nor worth a read of their Job on every change
		// (seen at 1,000 pods: five reads per pod).
		if job, err := c.jobLister.Jobs(pod.Namespace).Get(ref.Name); err == nil && job.UID == ref.UID && !c.Manages(job) {
			return
		}
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if ref := metav1.GetControllerOf(pod); ref != nil && ref.Kind == "Job" {
			running, err := c.ownerRuns(ctx, pod.Namespace, ref)
			if err != nil {
				utilruntime.HandleError(fmt.Errorf("checking the owner of pod %s/%s: %w", pod.Namespace, pod.Name, err))
				return
			}
			if running {
				return // the owner still runs: the cache was behind
			}
		}
		err := c.removeFinalizer(ctx, pod)
		if err != nil && !apierrors.IsNotFound(err) {
			utilruntime.HandleError(fmt.Errorf("releasing orphan pod %s/%s: %w", pod.Namespace, pod.Name, err))
		}
	}()
}

// ownerRuns reads a pod's owning Job live: whether it exists under that
// UID and has not finished. An owner found gone or finished is not read
// again, and concurrent reads of one owner are one.
func (c *Controller) ownerRuns(ctx context.Context, ns string, ref *metav1.OwnerReference) (bool, error) {
	if _, ok := c.notRunning.Get(ref.UID); ok {
		return false, nil
	}
	v, err, _ := c.ownerReads.Do(string(ref.UID), func() (any, error) {
		job, err := c.client.BatchV1().Jobs(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err) || (err == nil && (job.UID != ref.UID || jobFinished(job))):
			c.notRunning.Add(ref.UID, true)
			return false, nil
		case err != nil:
			return false, err
		}
		return true, nil
	})
	return v.(bool), err
}

func ptrEqual[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
