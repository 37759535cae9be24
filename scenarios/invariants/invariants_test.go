package invariants

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
)

const fin = "batch.kubernetes.io/job-tracking"

// builder constructs timelines: every change gets the next revision and a
// time 100ms after the previous one (or as set with wait).
type builder struct {
	tl   timeline.Timeline
	rv   uint64
	now  time.Time
	job  *batchv1.Job
	pods map[string]*corev1.Pod
}

func newBuilder(mutate ...func(*batchv1.Job)) *builder {
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "j", UID: "job-uid"},
		Spec:       batchv1.JobSpec{Parallelism: ptr.To[int32](1), Completions: ptr.To[int32](1)},
	}
	for _, m := range mutate {
		m(j)
	}
	b := &builder{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), job: j, pods: map[string]*corev1.Pod{}}
	b.add("Job", timeline.Added, j.DeepCopy())
	return b
}

func (b *builder) add(kind string, typ timeline.EventType, obj runtime.Object) {
	b.rv++
	b.now = b.now.Add(100 * time.Millisecond)
	m, _ := meta.Accessor(obj)
	m.SetResourceVersion(strconv.FormatUint(b.rv, 10))
	b.tl = append(b.tl, timeline.Entry{Seq: len(b.tl), Time: b.now, Type: typ, Kind: kind, Name: m.GetName(), Object: obj.DeepCopyObject()})
}

func (b *builder) wait(d time.Duration) { b.now = b.now.Add(d) }

func (b *builder) status(mut func(*batchv1.JobStatus)) *builder {
	mut(&b.job.Status)
	b.add("Job", timeline.Modified, b.job.DeepCopy())
	return b
}

func (b *builder) pod(name string, mut func(*corev1.Pod)) *builder {
	p, ok := b.pods[name]
	typ := timeline.Modified
	if !ok {
		typ = timeline.Added
		p = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name), Finalizers: []string{fin},
			OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: "j", UID: "job-uid", Controller: ptr.To(true)}}}}
		p.Status.Phase = corev1.PodPending
		b.pods[name] = p
	}
	if mut != nil {
		mut(p)
	}
	b.add("Pod", typ, p.DeepCopy())
	return b
}

func (b *builder) podGone(name string) *builder {
	b.add("Pod", timeline.Deleted, b.pods[name].DeepCopy())
	delete(b.pods, name)
	return b
}

func running(p *corev1.Pod)     { p.Status.Phase = corev1.PodRunning }
func failed(p *corev1.Pod)      { p.Status.Phase = corev1.PodFailed }
func deleting(p *corev1.Pod)    { p.DeletionTimestamp = ptr.To(metav1.Now()) }
func unfinalized(p *corev1.Pod) { p.Finalizers = nil }
func withIndex(ix string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Annotations = map[string]string{batchv1.JobCompletionIndexAnnotation: ix} }
}

func cond(t batchv1.JobConditionType, reason string) batchv1.JobCondition {
	return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason}
}

func check(t *testing.T, inv Invariant, ctx Context, b *builder) []Violation {
	t.Helper()
	if ctx.Job == "" {
		ctx.Job = "j"
	}
	return inv.Evaluate(ctx, b.tl).Violations
}

func expectOK(t *testing.T, inv Invariant, ctx Context, b *builder) {
	t.Helper()
	if v := check(t, inv, ctx, b); len(v) != 0 {
		t.Fatalf("%s: unexpected violations %v", inv.Name, v)
	}
}

func expectViolation(t *testing.T, inv Invariant, ctx Context, b *builder, substr string) {
	t.Helper()
	v := check(t, inv, ctx, b)
	if len(v) == 0 {
		t.Fatalf("%s: no violation, want one mentioning %q", inv.Name, substr)
	}
	if !strings.Contains(v[0].Message, substr) {
		t.Fatalf("%s: violation %q does not mention %q", inv.Name, v[0].Message, substr)
	}
}

func TestCountersMonotonic(t *testing.T) {
	ok := newBuilder().status(func(s *batchv1.JobStatus) { s.Failed = 1 }).status(func(s *batchv1.JobStatus) { s.Failed = 2; s.Succeeded = 1 })
	expectOK(t, CountersMonotonic, Context{}, ok)
	bad := newBuilder().status(func(s *batchv1.JobStatus) { s.Failed = 2 }).status(func(s *batchv1.JobStatus) { s.Failed = 1 })
	expectViolation(t, CountersMonotonic, Context{}, bad, "failed went from 2 to 1")
	// Elastic scale-down may lower succeeded, also when the spec change and
	// the status write that drops the removed indexes are separate writes.
	indexed := func(j *batchv1.Job) {
		j.Spec.Completions, j.Spec.CompletionMode = ptr.To[int32](5), ptr.To(batchv1.IndexedCompletion)
	}
	el := newBuilder(indexed).status(func(s *batchv1.JobStatus) { s.Succeeded = 4 })
	el.job.Spec.Completions = ptr.To[int32](3)
	el.status(func(s *batchv1.JobStatus) { s.Active = 1 })
	el.status(func(s *batchv1.JobStatus) { s.Succeeded = 3 })
	expectOK(t, CountersMonotonic, Context{}, el)
	// Not after the successes were counted at the smaller size.
	late := newBuilder(indexed)
	late.job.Spec.Completions = ptr.To[int32](3)
	late.status(func(s *batchv1.JobStatus) { s.Succeeded = 3 }).status(func(s *batchv1.JobStatus) { s.Succeeded = 2 })
	expectViolation(t, CountersMonotonic, Context{}, late, "succeeded went from 3 to 2")
	// Nor for a NonIndexed Job, whose completions cannot shrink below its successes.
	non := newBuilder(func(j *batchv1.Job) { j.Spec.Completions = ptr.To[int32](5) }).status(func(s *batchv1.JobStatus) { s.Succeeded = 4 })
	non.job.Spec.Completions = ptr.To[int32](3)
	non.status(func(s *batchv1.JobStatus) { s.Succeeded = 3 })
	expectViolation(t, CountersMonotonic, Context{}, non, "succeeded went from 4 to 3")
	// An index list only grows below completions: a controller that
	// rebuilds completedIndexes from the pods it still sees loses one.
	grows := newBuilder(indexed).status(func(s *batchv1.JobStatus) { s.CompletedIndexes = "1" }).
		status(func(s *batchv1.JobStatus) { s.CompletedIndexes = "0,1"; s.FailedIndexes = ptr.To("3") }).
		status(func(s *batchv1.JobStatus) { s.CompletedIndexes = "0-2"; s.FailedIndexes = ptr.To("3,4") })
	expectOK(t, CountersMonotonic, Context{}, grows)
	lost := newBuilder(indexed).status(func(s *batchv1.JobStatus) { s.CompletedIndexes = "0-2" }).
		status(func(s *batchv1.JobStatus) { s.CompletedIndexes = "0,2" })
	expectViolation(t, CountersMonotonic, Context{}, lost, `index 1 left completedIndexes ("0-2" → "0,2", completions 5)`)
	lostFailed := newBuilder(indexed).status(func(s *batchv1.JobStatus) { s.FailedIndexes = ptr.To("1,3") }).
		status(func(s *batchv1.JobStatus) { s.FailedIndexes = ptr.To("1") })
	expectViolation(t, CountersMonotonic, Context{}, lostFailed, `index 3 left failedIndexes ("1,3" → "1", completions 5)`)
	// Indexes at or above a shrunk completions may go.
	shrinks := newBuilder(indexed).status(func(s *batchv1.JobStatus) { s.CompletedIndexes = "0,3-4"; s.Succeeded = 3 })
	shrinks.job.Spec.Completions = ptr.To[int32](3)
	shrinks.status(func(s *batchv1.JobStatus) { s.CompletedIndexes = "0"; s.Succeeded = 1 })
	expectOK(t, CountersMonotonic, Context{}, shrinks)
}

func TestFirstLost(t *testing.T) {
	for _, c := range []struct {
		was, is string
		below   int
		want    int
		lost    bool
	}{
		{"", "", 9, 0, false},
		{"0-9", "0-9", 10, 0, false},
		{"0-4", "0-2,4", 10, 3, true},
		{"0-4", "0-9", 10, 0, false},
		{"0-4,7", "0-4", 10, 7, true},
		{"0-4,7", "0-4", 7, 0, false},
		{"2,5-6", "0-3,5", 10, 6, true},
		{"0-9999", "0-4998,5000-9999", 10000, 4999, true},
	} {
		n, lost := firstLost(c.was, c.is, c.below)
		if n != c.want || lost != c.lost {
			t.Errorf("firstLost(%q, %q, %d) = %d, %t; want %d, %t", c.was, c.is, c.below, n, lost, c.want, c.lost)
		}
	}
}

func TestReadyNotAboveActive(t *testing.T) {
	bad := newBuilder().status(func(s *batchv1.JobStatus) { s.Active = 1; s.Ready = ptr.To[int32](2) })
	expectViolation(t, ReadyNotAboveActive, Context{}, bad, "ready=2 > active=1")
	expectOK(t, ReadyNotAboveActive, Context{}, newBuilder().status(func(s *batchv1.JobStatus) { s.Active = 2; s.Ready = ptr.To[int32](2) }))
	// A release with a known upstream bug is not exempt: it fails, naming the bug.
	r := ReadyNotAboveActive.Evaluate(Context{Job: "j", Version: "v1.34.4", BuiltIn: true}, bad.tl)
	if len(r.Violations) != 1 || !strings.Contains(r.Violations[0].Message, "kubernetes/kubernetes#139428") {
		t.Fatalf("v1.34.4 must fail, naming its known bug: %+v", r)
	}
	// The bug is the built-in controller's: another controller on that
	// release fails without it named.
	r = ReadyNotAboveActive.Evaluate(Context{Job: "j", Version: "v1.34.4"}, bad.tl)
	if len(r.Violations) != 1 || r.KnownBug != "" || strings.Contains(r.Violations[0].Message, "known upstream bug") {
		t.Fatalf("an external controller on v1.34.4 must fail without the built-in's bug named: %+v", r)
	}
}

func TestTerminalAfterTarget(t *testing.T) {
	ok := newBuilder().
		status(func(s *batchv1.JobStatus) {
			s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded")}
		}).
		status(func(s *batchv1.JobStatus) {
			s.Conditions = append(s.Conditions, cond(batchv1.JobFailed, "BackoffLimitExceeded"))
		})
	expectOK(t, TerminalAfterTarget, Context{}, ok)
	noTarget := newBuilder().status(func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobComplete, "CompletionsReached")}
	})
	expectViolation(t, TerminalAfterTarget, Context{}, noTarget, "without SuccessCriteriaMet")
	reason := newBuilder().status(func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "DeadlineExceeded"), cond(batchv1.JobFailed, "BackoffLimitExceeded")}
	})
	expectViolation(t, TerminalAfterTarget, Context{}, reason, "differs")
	if r := TerminalAfterTarget.Evaluate(Context{Job: "j", Version: "v1.30.0"}, noTarget.tl); r.Applicable {
		t.Fatal("deferred terminal conditions are not a promise before v1.31")
	}
}

func TestTerminalOnlyWhenPodsTerminal(t *testing.T) {
	target := func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded")}
	}
	final := func(s *batchv1.JobStatus) {
		s.Conditions = append(s.Conditions, cond(batchv1.JobFailed, "BackoffLimitExceeded"))
	}
	ok := newBuilder().pod("a", running).status(target).pod("a", deleting).pod("a", failed).status(final)
	expectOK(t, TerminalOnlyWhenPodsTerminal, Context{}, ok)
	early := newBuilder().pod("a", running).status(target).pod("a", deleting).status(final).pod("a", failed)
	expectViolation(t, TerminalOnlyWhenPodsTerminal, Context{}, early, "pod a was terminating")
	// A pod that is gone does not hold the Job.
	gone := newBuilder().pod("a", running).status(target).pod("a", deleting).podGone("a").status(final)
	expectOK(t, TerminalOnlyWhenPodsTerminal, Context{}, gone)
}

func TestTerminalOrderUsesRevisionsNotArrival(t *testing.T) {
	// The pod's Failed change (rv 4) arrived after the Job's Failed (rv 5) from
	// its own watch: by revision the pod was terminal first, so no violation.
	b := newBuilder().pod("a", running).status(func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded")}
	})
	b.pod("a", failed)
	b.status(func(s *batchv1.JobStatus) {
		s.Conditions = append(s.Conditions, cond(batchv1.JobFailed, "BackoffLimitExceeded"))
	})
	n := len(b.tl)
	b.tl[n-1], b.tl[n-2] = b.tl[n-2], b.tl[n-1]
	b.tl[n-1].Seq, b.tl[n-2].Seq = n-1, n-2
	expectOK(t, TerminalOnlyWhenPodsTerminal, Context{}, b)
}

func TestReplacementWaitsUnderFailed(t *testing.T) {
	policy := func(j *batchv1.Job) { j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed) }
	ok := newBuilder(policy).pod("a", running).pod("a", deleting).pod("a", failed).pod("b", nil)
	expectOK(t, ReplacementWaitsUnderFailed, Context{}, ok)
	bad := newBuilder(policy).pod("a", running).pod("a", deleting).pod("b", nil)
	expectViolation(t, ReplacementWaitsUnderFailed, Context{}, bad, "pod b created while 1 pods were not terminal")
	// The same early replacement is fine under TerminatingOrFailed.
	tof := newBuilder(func(j *batchv1.Job) { j.Spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed) }).pod("a", running).pod("a", deleting).pod("b", nil)
	expectOK(t, ReplacementWaitsUnderFailed, Context{}, tof)
	// Indexed: a pod of index 1 while another of index 1 terminates.
	idx := newBuilder(policy, func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](3) }).
		pod("a", withIndex("1")).pod("a", deleting).pod("b", withIndex("1"))
	expectViolation(t, ReplacementWaitsUnderFailed, Context{}, idx, "of the same index")
}

func TestActiveWithinParallelism(t *testing.T) {
	tof := func(j *batchv1.Job) { j.Spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed) }
	// A terminating pod replaced at once: the new pod takes its place.
	ok := newBuilder(tof).pod("a", running).pod("a", deleting).pod("b", nil)
	expectOK(t, ActiveWithinParallelism, Context{}, ok)
	// One pod more than parallelism, deleted on the next sync: caught at
	// its creation.
	over := newBuilder(tof).pod("a", running).pod("b", nil).pod("b", deleting).pod("b", failed)
	expectViolation(t, ActiveWithinParallelism, Context{}, over, "pod b created while 1 pods were active (parallelism 1)")
	// Under Failed too, and with a wider Job.
	wide := newBuilder(func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](2) }).pod("a", running).pod("b", running).pod("c", nil)
	expectViolation(t, ActiveWithinParallelism, Context{}, wide, "pod c created while 2 pods were active (parallelism 2)")
	// A pod that ended frees its place.
	ended := newBuilder().pod("a", running).pod("a", failed).pod("b", nil)
	expectOK(t, ActiveWithinParallelism, Context{}, ended)
}

func TestTerminatingSettles(t *testing.T) {
	b := newBuilder().pod("a", running).pod("a", deleting).status(func(s *batchv1.JobStatus) { s.Terminating = ptr.To[int32](1) })
	b.wait(countSettleWindow)
	expectOK(t, TerminatingSettles, Context{End: b.now}, b)
	wrong := newBuilder().pod("a", running).pod("a", deleting).status(func(s *batchv1.JobStatus) { s.Terminating = ptr.To[int32](0) })
	wrong.wait(countSettleWindow)
	expectViolation(t, TerminatingSettles, Context{End: wrong.now}, wrong, "status.terminating=0 but 1 pods were terminating")
	// A pod gone and still counted, corrected 6s later (the CI's built-in on
	// a saturated machine): not settled yet, no verdict.
	slow := newBuilder().pod("a", running).pod("a", deleting).status(func(s *batchv1.JobStatus) { s.Terminating = ptr.To[int32](1) })
	slow.pod("a", failed)
	slow.wait(6 * time.Second)
	slow.status(func(s *batchv1.JobStatus) { s.Terminating = ptr.To[int32](0) })
	slow.wait(countSettleWindow)
	expectOK(t, TerminatingSettles, Context{End: slow.now}, slow)
	// A stale count in a quiet period fails even when it is corrected later,
	// on every release; on one with the stale-status bug the verdict names it.
	later := newBuilder().pod("a", running).pod("a", deleting).status(func(s *batchv1.JobStatus) { s.Terminating = ptr.To[int32](1) })
	later.pod("a", failed)
	later.wait(12 * time.Second)
	later.status(func(s *batchv1.JobStatus) { s.Terminating = ptr.To[int32](0) })
	later.wait(countSettleWindow)
	expectViolation(t, TerminatingSettles, Context{End: later.now, Version: "v1.37.1"}, later, "status.terminating=1 but 0 pods")
	r := TerminatingSettles.Evaluate(Context{End: later.now, Version: "v1.34.3", Job: "j", BuiltIn: true}, later.tl)
	if len(r.Violations) != 1 || !strings.Contains(r.Violations[0].Message, "kubernetes/kubernetes#139428") {
		t.Errorf("v1.34.3: want the stale count failed, naming kubernetes/kubernetes#139428: %+v", r)
	}
	r = TerminatingSettles.Evaluate(Context{End: later.now, Version: "v1.36.3", Job: "j", BuiltIn: true}, later.tl)
	if len(r.Violations) != 1 || r.KnownBug != "" {
		t.Errorf("v1.36.3 has the fix: want the stale count failed without a bug named: %+v", r)
	}
	// Not settled yet (the recording ended 1s later): no verdict.
	busy := newBuilder().pod("a", running).pod("a", deleting).status(func(s *batchv1.JobStatus) { s.Terminating = ptr.To[int32](0) })
	expectOK(t, TerminatingSettles, Context{End: busy.now.Add(time.Second)}, busy)
}

func TestActiveSettles(t *testing.T) {
	active := func(n int32) func(*batchv1.JobStatus) { return func(s *batchv1.JobStatus) { s.Active = n } }
	// Two running, one of them then deleted and one finished: 2, then 0.
	b := newBuilder().pod("a", running).pod("b", running).status(active(2))
	b.wait(countSettleWindow)
	b.pod("a", deleting).pod("b", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }).status(active(0))
	b.wait(countSettleWindow)
	expectOK(t, ActiveSettles, Context{End: b.now}, b)
	// A controller that counts the terminating pod, or never lowers the count.
	for _, n := range []int32{1, 2} {
		wrong := newBuilder().pod("a", running).pod("b", running).status(active(2))
		wrong.wait(countSettleWindow)
		wrong.pod("a", deleting).pod("b", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }).status(active(n))
		wrong.wait(countSettleWindow)
		expectViolation(t, ActiveSettles, Context{End: wrong.now}, wrong, fmt.Sprintf("status.active=%d but 0 pods were active", n))
		// Not settled, disturbed by a restart, or a Job nobody here manages: no verdict.
		expectOK(t, ActiveSettles, Context{End: wrong.now.Add(-time.Second)}, wrong)
		expectOK(t, ActiveSettles, Context{End: wrong.now, Restarts: []time.Time{wrong.now.Add(-countSettleWindow - time.Second)}}, wrong)
		expectOK(t, ActiveSettles, Context{End: wrong.now, ForeignManagedBy: true}, wrong)
	}
}

func TestFinalizerReleased(t *testing.T) {
	done := func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, "CompletionsReached"), cond(batchv1.JobComplete, "CompletionsReached")}
	}
	ok := newBuilder().pod("a", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }).pod("a", unfinalized).status(done)
	expectOK(t, FinalizerReleased, Context{Finalizer: fin}, ok)
	bad := newBuilder().pod("a", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }).status(done)
	expectViolation(t, FinalizerReleased, Context{Finalizer: fin}, bad, "keeps "+fin)

	// Finishing: a pod still running when the Job met its success criteria
	// loses its finalizer in the same sync, not when it ends 5s later.
	finishing := func(release time.Duration) *builder {
		b := newBuilder().pod("a", running)
		b.status(func(s *batchv1.JobStatus) {
			s.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, "SuccessPolicy")}
		})
		b.pod("a", deleting)
		b.wait(release)
		b.pod("a", unfinalized)
		b.wait(5 * time.Second)
		return b.pod("a", failed)
	}
	expectOK(t, FinalizerReleased, Context{Finalizer: fin}, finishing(100*time.Millisecond))
	expectOK(t, FinalizerReleased, Context{Finalizer: fin}, finishing(5*time.Second)) // a slow sync on a saturated machine
	expectViolation(t, FinalizerReleased, Context{Finalizer: fin}, finishing(12*time.Second), "pod a still keeps "+fin+" 12.1s after the controller last deleted or released one")

	// Many pods: releasing them takes a request each, so the bound runs from
	// the last release. Released one every 2s over 40s: no stall, no
	// violation; a stall of 12s after some releases is one.
	many := func(stallAfter int) *builder {
		b := newBuilder()
		for i := 0; i < 20; i++ {
			b.pod(fmt.Sprintf("p%02d", i), running)
		}
		b.status(func(s *batchv1.JobStatus) {
			s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded")}
		})
		for i := 0; i < 20; i++ {
			if i == stallAfter {
				b.wait(12 * time.Second)
			} else {
				b.wait(2 * time.Second)
			}
			b.pod(fmt.Sprintf("p%02d", i), unfinalized)
		}
		return b
	}
	expectOK(t, FinalizerReleased, Context{Finalizer: fin}, many(-1))
	expectViolation(t, FinalizerReleased, Context{Finalizer: fin}, many(5),
		"pods p05, p06, p07 and 12 more still keep "+fin+" 12.1s after the controller last deleted or released one")
	// Deleting the running pods first, one every 2s, then releasing them:
	// the deletions are the controller's work on them too.
	deleteFirst := newBuilder()
	for i := 0; i < 10; i++ {
		deleteFirst.pod(fmt.Sprintf("p%02d", i), running)
	}
	deleteFirst.status(func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded")}
	})
	for _, mut := range []func(*corev1.Pod){deleting, unfinalized} {
		for i := 0; i < 10; i++ {
			deleteFirst.wait(2 * time.Second)
			deleteFirst.pod(fmt.Sprintf("p%02d", i), mut)
		}
	}
	expectOK(t, FinalizerReleased, Context{Finalizer: fin}, deleteFirst)
	// The deletions written before the interim condition (revision order,
	// as a controller deletes first) but recorded up to 9 s after it, the
	// first release 11 s after it: no stall of 10 s.
	lagged := newBuilder()
	for i := 0; i < 10; i++ {
		lagged.pod(fmt.Sprintf("p%02d", i), running)
	}
	var deletions []int
	for i := 0; i < 10; i++ {
		lagged.pod(fmt.Sprintf("p%02d", i), deleting)
		deletions = append(deletions, len(lagged.tl)-1)
	}
	lagged.status(func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded")}
	})
	condAt := lagged.now
	for i, seq := range deletions {
		lagged.tl[seq].Time = condAt.Add(time.Duration(i+1) * 900 * time.Millisecond)
	}
	lagged.wait(11 * time.Second)
	for i := 0; i < 10; i++ {
		lagged.pod(fmt.Sprintf("p%02d", i), unfinalized)
	}
	expectOK(t, FinalizerReleased, Context{Finalizer: fin}, lagged)
	// Nothing released at first: the bound runs from the start of finishing.
	expectViolation(t, FinalizerReleased, Context{Finalizer: fin}, many(0),
		"pods p00, p01, p02 and 17 more still keep "+fin+" 12.1s after the Job started finishing")
	// After a restart of the controller or the apiserver it may resume late.
	expectOK(t, FinalizerReleased, Context{Finalizer: fin, Restarts: []time.Time{time.Now()}}, finishing(12*time.Second))
	// Nothing happens after the condition, yet the recording ran on: judged at its end.
	quiet := newBuilder().pod("a", running)
	quiet.status(func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded")}
	})
	expectViolation(t, FinalizerReleased, Context{Finalizer: fin, End: quiet.now.Add(15 * time.Second)}, quiet, "after the Job started finishing")
}

func TestManagedBySilence(t *testing.T) {
	quiet := newBuilder()
	expectOK(t, ManagedBySilence, Context{ForeignManagedBy: true}, quiet)
	written := newBuilder().status(func(s *batchv1.JobStatus) { s.StartTime = ptr.To(metav1.Now()) })
	expectViolation(t, ManagedBySilence, Context{ForeignManagedBy: true}, written, "status written")
	pods := newBuilder().pod("a", nil)
	expectViolation(t, ManagedBySilence, Context{ForeignManagedBy: true}, pods, "pod a created")
}

func TestDelegationRespected(t *testing.T) {
	delegated := func(j *batchv1.Job) { j.Spec.ManagedBy = ptr.To("example.com/other") }
	wroteBy := func(manager, sub string) []metav1.ManagedFieldsEntry {
		return []metav1.ManagedFieldsEntry{{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: sub}}
	}
	ok := newBuilder(delegated).status(func(s *batchv1.JobStatus) { s.Active = 1 })
	ok.job.ManagedFields = wroteBy("reference-controller", "status")
	ok.status(func(s *batchv1.JobStatus) { s.Active = 1 }).pod("a", func(p *corev1.Pod) { p.ManagedFields = wroteBy("reference-controller", "") })
	expectOK(t, DelegationRespected, Context{}, ok)

	status := newBuilder(delegated)
	status.job.ManagedFields = wroteBy(BuiltInManager, "status")
	status.status(func(s *batchv1.JobStatus) { s.Active = 1 })
	expectViolation(t, DelegationRespected, Context{}, status, "kube-controller-manager wrote the status")
	// On 1.31 a Job keeps spec.managedBy only where JobManagedBy is on, and
	// then the promise is made there too.
	expectViolation(t, DelegationRespected, Context{Version: "v1.31.4"}, status, "kube-controller-manager wrote the status")

	pod := newBuilder(delegated).pod("a", func(p *corev1.Pod) { p.ManagedFields = wroteBy(BuiltInManager, "") })
	expectViolation(t, DelegationRespected, Context{}, pod, "wrote pod a")

	// The built-in writing its own Jobs is no violation.
	own := newBuilder()
	own.job.ManagedFields = wroteBy(BuiltInManager, "status")
	own.status(func(s *batchv1.JobStatus) { s.Active = 1 })
	expectOK(t, DelegationRespected, Context{}, own)
}

func TestDelegationRespectedAllowsPodGC(t *testing.T) {
	// PodGC marking a pod of a lost node Failed writes its status as kube-controller-manager.
	b := newBuilder(func(j *batchv1.Job) { j.Spec.ManagedBy = ptr.To("example.com/other") }).
		pod("a", func(p *corev1.Pod) {
			p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: BuiltInManager, Operation: metav1.ManagedFieldsOperationApply, Subresource: "status"}}
		})
	expectOK(t, DelegationRespected, Context{}, b)
}

func TestReadyFollows(t *testing.T) {
	ready := func(v corev1.ConditionStatus) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: v}}
		}
	}
	ok := newBuilder().pod("a", ready(corev1.ConditionTrue))
	ok.wait(time.Second)
	ok.status(func(s *batchv1.JobStatus) { s.Active = 1; s.Ready = ptr.To[int32](1) })
	ok.wait(5 * time.Second)
	expectOK(t, ReadyFollows, Context{ReadyWithin: 2 * time.Second, End: ok.now}, ok)

	slow := newBuilder().pod("a", ready(corev1.ConditionTrue))
	slow.wait(4 * time.Second)
	slow.status(func(s *batchv1.JobStatus) { s.Active = 1; s.Ready = ptr.To[int32](1) })
	expectViolation(t, ReadyFollows, Context{ReadyWithin: 2 * time.Second, End: slow.now}, slow, "1 pods Ready")

	// A flip back within the window owes no update.
	flap := newBuilder().pod("a", ready(corev1.ConditionTrue))
	flap.wait(time.Second)
	flap.pod("a", ready(corev1.ConditionFalse))
	flap.wait(5 * time.Second)
	expectOK(t, ReadyFollows, Context{ReadyWithin: 2 * time.Second, End: flap.now}, flap)

	// Without readyWithin the promise is not checked.
	expectOK(t, ReadyFollows, Context{End: slow.now}, slow)
}

func TestStaleTombstoneGivesNoVerdict(t *testing.T) {
	// The pod terminates (rv 3..); the apiserver restarts, the pod is gone
	// meanwhile and the relist reports its deletion with its last known state
	// (rv 3), after the Job's write at rv 5. When it went is unknown: replay
	// removes it at rv 3, and terminating-settles gives no verdict meanwhile.
	b := newBuilder().pod("a", running).pod("a", deleting).status(func(s *batchv1.JobStatus) { s.Terminating = ptr.To[int32](1) })
	b.wait(5 * time.Second)
	stale := b.tl[2] // pod a, deleting, rv 3
	stale.Type = timeline.Deleted
	stale.Seq = len(b.tl)
	stale.Time = b.now
	b.tl = append(b.tl, stale)
	b.wait(500 * time.Millisecond)
	b.status(func(s *batchv1.JobStatus) { s.Terminating = ptr.To[int32](0) })
	b.wait(5 * time.Second)
	expectOK(t, TerminatingSettles, Context{End: b.now, Version: "v1.37.1"}, b)
}

func TestReplacementWaitsUnderFailedHonoursGateOff(t *testing.T) {
	policy := func(j *batchv1.Job) { j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed) }
	b := newBuilder(policy).pod("a", running).pod("a", deleting).pod("b", nil)
	expectViolation(t, ReplacementWaitsUnderFailed, Context{}, b, "pod b created")
	off := Context{PolicyOff: []timeline.Span{{From: b.tl[0].Time}}}
	expectOK(t, ReplacementWaitsUnderFailed, off, b)
}

func TestStaleTombstoneDoesNotHoldTheJob(t *testing.T) {
	// Same gap: the Job's Complete (rv 5) arrives before the late tombstone of
	// a pod last seen terminating (rv 3). The pod may well have been gone
	// before rv 5, so Complete is no violation.
	done := func(s *batchv1.JobStatus) {
		s.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, "CompletionsReached"), cond(batchv1.JobComplete, "CompletionsReached")}
	}
	b := newBuilder().pod("a", running).pod("a", deleting).status(done)
	stale := b.tl[2]
	stale.Type, stale.Seq = timeline.Deleted, len(b.tl)
	b.tl = append(b.tl, stale)
	expectOK(t, TerminalOnlyWhenPodsTerminal, Context{}, b)
}

// recreate deletes the builder's Job and adds a new one of its name (uid
// "job-uid-2", managedBy as given), as act recreateJob does.
func (b *builder) recreate(managedBy *string) *builder {
	b.add("Job", timeline.Deleted, b.job.DeepCopy())
	j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "j", UID: "job-uid-2"}, Spec: *b.job.Spec.DeepCopy()}
	j.Spec.ManagedBy = managedBy
	b.job = j
	b.add("Job", timeline.Added, j.DeepCopy())
	return b
}

// TestRecreatedJobJudgedOnItsOwn: a Job deleted and made again under its
// name is another Job — its empty status is no counter going back — while a
// broken promise of either Job is still caught, and a new Job delegated
// elsewhere must be left alone though the first was the controller's.
func TestRecreatedJobJudgedOnItsOwn(t *testing.T) {
	b := newBuilder().pod("a", running).pod("a", failed).status(func(s *batchv1.JobStatus) { s.Failed = 1 }).recreate(nil)
	expectOK(t, CountersMonotonic, Context{}, b)
	if got := len(incarnations(Context{Job: "j"}, b.tl)); got != 2 {
		t.Fatalf("incarnations: %d, want 2", got)
	}
	// A dispatched Job's recording carries two UIDs under its name (the
	// copy's grafted on the manager's Job): one Job.
	if got := len(incarnations(Context{Job: "j", Copy: "j@worker"}, b.tl)); got != 1 {
		t.Fatalf("incarnations of a dispatched Job: %d, want 1", got)
	}
	b.status(func(s *batchv1.JobStatus) { s.Failed = 2 }).status(func(s *batchv1.JobStatus) { s.Failed = 1 })
	expectViolation(t, CountersMonotonic, Context{}, b, "failed")

	delegated := newBuilder().pod("a", running).status(func(s *batchv1.JobStatus) { s.Active = 1 }).recreate(ptr.To("example.com/absent"))
	expectOK(t, ManagedBySilence, Context{}, delegated) // the old pod is the old Job's
	delegated.status(func(s *batchv1.JobStatus) { s.Active = 1 })
	expectViolation(t, ManagedBySilence, Context{}, delegated, "status written")
}

// A check that cannot judge part of a run says so, and why: a breach in a
// break of the recording, the ledger across one, the backoff after a
// restart.
func TestUnjudgedSaid(t *testing.T) {
	b := newBuilder().pod("a", running).pod("b", nil)
	gap := timeline.Span{From: b.tl[1].Time.Add(-time.Millisecond), To: b.now.Add(time.Second)}
	r := ActiveWithinParallelism.Evaluate(Context{Job: "j", Gaps: []timeline.Span{gap}}, b.tl)
	if len(r.Violations) != 0 || len(r.Unjudged) != 1 || !strings.Contains(r.Unjudged[0], "fell in a break of the recording") {
		t.Fatalf("a breach in a gap: %+v", r)
	}
	two := newBuilder().pod("a", running).pod("b", nil).pod("c", nil)
	many := timeline.Span{From: two.tl[1].Time.Add(-time.Millisecond), To: two.now.Add(time.Second)}
	r = ActiveWithinParallelism.Evaluate(Context{Job: "j", Gaps: []timeline.Span{many}}, two.tl)
	if len(r.Violations) != 0 || len(r.Unjudged) != 1 || !strings.Contains(r.Unjudged[0], "2 breaches fell in breaks") {
		t.Fatalf("two breaches in a gap, one note: %+v", r)
	}
	r = Ledger.Evaluate(Context{Job: "j", Finalizer: fin, Gaps: []timeline.Span{gap}}, b.tl)
	if len(r.Unjudged) != 1 || !strings.Contains(r.Unjudged[0], "the whole ledger: the recording broke") {
		t.Fatalf("the ledger across a gap: %+v", r)
	}
	restarted := newBuilder().pod("a", running).pod("a", failed)
	restarted.wait(time.Second)
	restart := restarted.now
	restarted.pod("b", nil)
	r = BackoffRespected.Evaluate(Context{Job: "j", Restarts: []time.Time{restart}}, restarted.tl)
	if len(r.Violations) != 0 || len(r.Unjudged) != 1 || !strings.Contains(r.Unjudged[0], "after a restart of the controller") {
		t.Fatalf("the backoff after a restart: %+v", r)
	}
	if r := BackoffRespected.Evaluate(Context{Job: "j"}, restarted.tl); len(r.Violations) != 1 || len(r.Unjudged) != 0 {
		t.Fatalf("the same without the restart: %+v", r)
	}
}
