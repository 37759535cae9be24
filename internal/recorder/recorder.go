// Package recorder watches the objects of one namespace — Jobs, Pods, Events —
// and the cluster's Nodes, and keeps every change with the time it arrived, as
// one timeline. Checks read the timeline afterwards, so a state that lasted
// 50 ms is seen as surely as one that lasted a minute.
package recorder

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/jobconform/jobconform/internal/timeline"
)

// Entry and the event types are the timeline's; aliases keep callers short.
type (
	Entry     = timeline.Entry
	EventType = timeline.EventType
)

// Changes an entry records.
const (
	Added    = timeline.Added
	Modified = timeline.Modified
	Deleted  = timeline.Deleted
)

// Recorder records one namespace (plus Nodes) from Start until Stop; or,
// from StartMirrored, a Job run on a worker cluster and its manager's Job.
type Recorder struct {
	mu      sync.Mutex
	entries []Entry
	// gaps are, per kind, the stretches in which its watch was broken (an
	// apiserver restart): from the error to just after the relist's first
	// news of that kind. Each informer relists on its own schedule.
	gaps   map[string][]timeline.Span
	listed map[string]bool // kinds whose initial list is done
	notify chan struct{}   // closed and replaced on every new entry
	cancel context.CancelFunc
	done   chan struct{}
	// copies and managers, in a mirrored recording (StartMirrored), are the
	// worker's copies and the manager's Jobs as last seen, by name; maxRV is
	// the highest revision recorded of the worker.
	copies, managers map[string]*batchv1.Job
	maxRV            uint64
}

// Start begins recording namespace ns and returns once the initial lists are
// in the timeline.
func Start(ctx context.Context, client kubernetes.Interface, ns string) (*Recorder, error) {
	r := newRecorder()
	return r, r.start(ctx, ns, r.sources(client, ns, false))
}

// WorkerSuffix ends the name under which a mirrored recording keeps the
// worker's copy of a Job ("job@worker").
const WorkerSuffix = "@worker"

// StartMirrored records a Job that a dispatcher runs as a copy on another
// cluster (issue #31): the worker's namespace ns (its Pods, Events and
// Nodes as Start records them, the copy as "<name>@worker") and the
// manager's Jobs of the same namespace, on one clock. A manager's Job is
// recorded as the worker's copy, as last seen, carrying the manager's status,
// spec.managedBy, managedFields and deletion: the Job the user sees, judged
// against the pods that run it. It has no revision of its own in the worker's
// etcd; it gets the highest revision recorded before it, so that replays in
// revision order place it after everything the recording had seen.
func StartMirrored(ctx context.Context, manager, worker kubernetes.Interface, ns string) (*Recorder, error) {
	r := newRecorder()
	r.copies, r.managers = map[string]*batchv1.Job{}, map[string]*batchv1.Job{}
	src := r.sources(worker, ns, true)
	jobs := manager.BatchV1().Jobs(ns)
	src[managerJob] = r.informer(manager, managerJob, &batchv1.Job{},
		func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return jobs.List(ctx, o) }, jobs.Watch)
	return r, r.start(ctx, ns, src)
}

// managerJob is the informer kind of a mirrored recording's manager Jobs.
const managerJob = "ManagerJob"

func newRecorder() *Recorder {
	return &Recorder{notify: make(chan struct{}), done: make(chan struct{}), gaps: map[string][]timeline.Span{}, listed: map[string]bool{}}
}

// sources are the informers of namespace ns's Jobs, Pods and Events and of
// the cluster's Nodes.
func (r *Recorder) sources(client kubernetes.Interface, ns string, mirrored bool) map[string]cache.SharedIndexInformer {
	// Informers of their own rather than a factory's: their ListWatches are
	// wrapped to see the recording's gaps (connection lost, relist).
	jobs, pods, events, nodes := client.BatchV1().Jobs(ns), client.CoreV1().Pods(ns), client.CoreV1().Events(ns), client.CoreV1().Nodes()
	return map[string]cache.SharedIndexInformer{
		"Job": r.informer(client, "Job", &batchv1.Job{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return jobs.List(ctx, o) }, jobs.Watch),
		"Pod": r.informer(client, "Pod", &corev1.Pod{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return pods.List(ctx, o) }, pods.Watch),
		"Event": r.informer(client, "Event", &corev1.Event{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return events.List(ctx, o) }, events.Watch),
		"Node": r.informer(client, "Node", &corev1.Node{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return nodes.List(ctx, o) }, nodes.Watch),
	}
}

func (r *Recorder) start(ctx context.Context, ns string, infs map[string]cache.SharedIndexInformer) error {
	ctx, cancel := context.WithCancel(ctx)
	r.cancel = cancel
	var synced []cache.InformerSynced
	for kind, inf := range infs {
		if _, err := inf.AddEventHandler(r.handler(kind)); err != nil {
			cancel()
			return err
		}
		synced = append(synced, inf.HasSynced)
	}
	var wg sync.WaitGroup
	for _, inf := range infs {
		wg.Add(1)
		go func() { defer wg.Done(); inf.RunWithContext(ctx) }()
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		cancel()
		wg.Wait()
		return fmt.Errorf("recorder: the informers of %s did not sync", ns)
	}
	go func() {
		<-ctx.Done()
		wg.Wait()
		close(r.done)
	}()
	return nil
}

// informer makes an informer for kind whose list and watch calls report the
// connection's state to the recorder.
func (r *Recorder) informer(client kubernetes.Interface, kind string, obj runtime.Object,
	list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) cache.SharedIndexInformer {
	// As client-go's informer factory does: watch-list where the client has it.
	inf := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(r.listWatch(kind, list, watchFn), client), obj, 0, cache.Indexers{})
	_ = inf.SetTransform(compactor()) // fails only on a started informer
	return inf
}

// listWatch wraps kind's list and watch calls to report the connection's state.
func (r *Recorder) listWatch(kind string, list func(context.Context, metav1.ListOptions) (runtime.Object, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			out, err := list(ctx, o)
			r.connection(kind, err, true)
			return out, err
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			out, err := watchFn(ctx, o)
			// A watch that starts with the initial events is a list (WatchList).
			list := o.SendInitialEvents != nil && *o.SendInitialEvents
			if resumed := r.connection(kind, err, list); !resumed {
				return out, err
			}
			// A resumed watch can fail at once: an apiserver whose watch
			// cache was rebuilt answers a watch from before it with an error
			// event (410 Gone), and the informer relists only after its
			// back-off — seconds in which nothing of this kind is seen.
			delivered := false
			return watch.Filter(out, func(e watch.Event) (watch.Event, bool) {
				if e.Type == watch.Error && !delivered {
					r.reopen(kind)
				}
				delivered = true
				return e, true
			}), nil
		},
	}
}

// handler records every notification of one kind's informer. A deletion the
// informer only learnt of on a relist arrives as a tombstone holding the
// object's last known state: that state is what is recorded.
func (r *Recorder) handler(kind string) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.add(Added, kind, obj) },
		UpdateFunc: func(_, obj any) { r.add(Modified, kind, obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			r.add(Deleted, kind, obj)
		},
	}
}

func (r *Recorder) add(t EventType, kind string, obj any) {
	// The informer's object itself: nobody writes what an informer hands
	// out, and a copy of each would double what a 10,000-pod Job's
	// recording holds while its pods live.
	ro, ok := obj.(runtime.Object)
	if !ok {
		return
	}
	name := ""
	if m, ok := ro.(interface{ GetName() string }); ok {
		name = m.GetName()
	}
	r.mu.Lock()
	if r.copies != nil {
		r.mirror(t, kind, name, ro)
	} else {
		r.append(t, kind, name, ro)
	}
	close(r.notify)
	r.notify = make(chan struct{})
	r.mu.Unlock()
}

// append adds an entry; r.mu is held.
func (r *Recorder) append(t EventType, kind, name string, ro runtime.Object) {
	r.entries = append(r.entries, Entry{Seq: len(r.entries), Time: time.Now(), Type: t, Kind: kind, Name: name, Object: ro})
}

// mirror records an object of the informer kind in a mirrored recording
// (StartMirrored); r.mu is held.
func (r *Recorder) mirror(t EventType, kind, name string, ro runtime.Object) {
	if kind == managerJob {
		m := ro.(*batchv1.Job)
		r.managers[name] = m
		r.append(t, "Job", name, r.graft(m, r.copies[name], r.maxRV))
		return
	}
	rv := (Entry{Object: ro}).Revision()
	r.maxRV = max(r.maxRV, rv)
	if kind != "Job" {
		r.append(t, kind, name, ro)
		return
	}
	c := ro.(*batchv1.Job)
	prev, seen := r.copies[name]
	r.copies[name] = c
	r.append(t, kind, name+WorkerSuffix, ro)
	if m, ok := r.managers[name]; ok && t != Deleted && (!seen || prev.UID != c.UID) {
		// The copy's first sighting: from its own revision on (before its
		// pods'), the manager's Job is judged as this copy.
		r.append(Modified, "Job", name, r.graft(m, c, rv))
	}
}

// graft is the manager's Job m as the user sees it, on the worker's copy c
// (nil: not made yet), at revision rv.
func (r *Recorder) graft(m, c *batchv1.Job, rv uint64) *batchv1.Job {
	j := m.DeepCopy()
	if c != nil {
		j = c.DeepCopy()
		j.Spec.ManagedBy, j.ManagedFields, j.Status = m.Spec.ManagedBy, m.ManagedFields, *m.Status.DeepCopy()
		j.DeletionTimestamp, j.Finalizers = m.DeletionTimestamp, m.Finalizers
	}
	j.ResourceVersion = strconv.FormatUint(rv, 10)
	return j
}

// gapTail is how long after its first news a relist is taken to go on delivering.
const gapTail = 2 * time.Second

// relistReach is how far back a relist that follows no failed call (the
// watch resumed, then was found expired) may report changes from.
const relistReach = 45 * time.Second

// connection notes how a list or watch call of kind went. A failed call
// opens a gap: the apiserver is away, and what changes once it is back is
// not seen until the informer reconnects. A watch that resumes closes it (the
// apiserver replays what happened since); so does a relist, but what it
// reports may have happened any time in the gap, in no common order with the
// other kinds, so the gap lasts until its burst is delivered.
// It tells whether the call was a watch that closed a gap.
func (r *Recorder) connection(kind string, err error, list bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	first := !r.listed[kind]
	if list && err == nil {
		r.listed[kind] = true
	}
	gaps := r.gaps[kind]
	open := len(gaps) > 0 && gaps[len(gaps)-1].To.IsZero()
	switch {
	case err != nil:
		if !open {
			r.gaps[kind] = append(gaps, timeline.Span{From: now})
		}
	case list && first:
		// the initial list: nothing missed
	case list:
		if !open {
			gaps = append(gaps, timeline.Span{From: now.Add(-relistReach)})
		}
		gaps[len(gaps)-1].To = now.Add(gapTail)
		r.gaps[kind] = gaps
	case open:
		gaps[len(gaps)-1].To = now
		return true
	}
	return false
}

// reopen opens again the gap of kind that a resumed watch closed, when that
// watch fails before it delivers anything: it resumed nothing, and the gap
// lasts until the informer's relist ends it.
func (r *Recorder) reopen(kind string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if gaps := r.gaps[kind]; len(gaps) > 0 {
		gaps[len(gaps)-1].To = time.Time{}
	}
}

// Gaps lists the stretches in which the recording of Jobs or Pods may have
// missed changes.
func (r *Recorder) Gaps() []timeline.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []timeline.Span
	for _, kind := range []string{"Job", "Pod", managerJob} {
		for _, g := range r.gaps[kind] {
			if g.To.IsZero() { // still open
				g.To = time.Now()
			}
			out = append(out, g)
		}
	}
	return out
}

// Replay is a stopped recorder holding a recorded timeline (a kept run's):
// what waits on a live one (WaitFrom) runs over it as it ran then,
// finding nothing more.
func Replay(tl timeline.Timeline) *Recorder {
	r := newRecorder()
	r.entries = append(r.entries, tl...)
	r.cancel = func() {}
	close(r.done)
	return r
}

// Stop ends recording and waits for the informers to shut down.
func (r *Recorder) Stop() {
	r.cancel()
	<-r.done
}

// Entries returns a copy of the timeline so far.
func (r *Recorder) Entries() timeline.Timeline {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Entry(nil), r.entries...)
}

// Of returns the entries of one kind, in order.
func (r *Recorder) Of(kind string) []Entry {
	var out []Entry
	for _, e := range r.Entries() {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}
