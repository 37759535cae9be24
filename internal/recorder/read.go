package recorder

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Reading a recording: waits on it, its latest entries, and entries
// described for a person (verdicts, dumps).

// WaitFor waits until some entry satisfies match (entries already recorded
// count) and returns the first such entry, or fails when ctx ends or timeout passes.
func (r *Recorder) WaitFor(ctx context.Context, timeout time.Duration, what string, match func(Entry) bool) (Entry, error) {
	return r.WaitFrom(ctx, 0, timeout, what, match)
}

// WaitFrom is WaitFor counting only the entries from sequence number from on.
func (r *Recorder) WaitFrom(ctx context.Context, from int, timeout time.Duration, what string, match func(Entry) bool) (Entry, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	r.mu.Lock()
	next := min(max(from, 0), len(r.entries))
	r.mu.Unlock()
	for {
		r.mu.Lock()
		entries := r.entries[next:]
		notify := r.notify
		next = len(r.entries)
		r.mu.Unlock()
		for _, e := range entries {
			if match(e) {
				return e, nil
			}
		}
		select {
		case <-notify:
		case <-deadline.C:
			return Entry{}, fmt.Errorf("timed out after %s waiting for %s", timeout, what)
		case <-ctx.Done():
			return Entry{}, fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		}
	}
}

// CatchUp waits until the recording holds the current state of every pod
// of namespace ns (a fresh list's revision of each), or fails after
// timeout. The Job's and the pods' watches deliver in no common order: a
// recording judged the moment the Job finished missed the pods' finalizer
// removals the controller had made just before (the reference controller's
// SIGKILL spec, seen once in CI), and judging it said the pods kept them.
func (r *Recorder) CatchUp(ctx context.Context, client kubernetes.Interface, ns string, timeout time.Duration) error {
	list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing the pods to catch up with: %w", err)
	}
	behind := func() []string {
		var out []string
		for _, p := range list.Items {
			want, _ := strconv.ParseUint(p.ResourceVersion, 10, 64)
			if e, ok := r.Latest("Pod", p.Name); !ok || (e.Type != Deleted && e.Revision() < want) {
				out = append(out, p.Name)
			}
		}
		return out
	}
	deadline := time.Now().Add(timeout)
	for {
		left := behind()
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the recording did not catch up within %s with pods %v", timeout, left)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Latest is the last entry recorded of the object kind/name, if any.
func (r *Recorder) Latest(kind, name string) (Entry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.entries) - 1; i >= 0; i-- {
		if e := r.entries[i]; e.Kind == kind && e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// PodNames lists the pods seen, in order of first appearance.
func (r *Recorder) PodNames() []string {
	seen := map[string]int{}
	for _, e := range r.Of("Pod") {
		if _, ok := seen[e.Name]; !ok {
			seen[e.Name] = e.Seq
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return seen[names[i]] < seen[names[j]] })
	return names
}

// Describe renders one entry as a line a person can read in a failure report.
func Describe(e Entry) string {
	head := fmt.Sprintf("%s %-8s %-5s %s", e.Time.Format("15:04:05.000"), e.Type, e.Kind, e.Name)
	switch o := e.Object.(type) {
	case *batchv1.Job:
		s := o.Status
		var conds []string
		for _, c := range s.Conditions {
			conds = append(conds, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
		}
		term, ready := "nil", "nil"
		if s.Terminating != nil {
			term = fmt.Sprint(*s.Terminating)
		}
		if s.Ready != nil {
			ready = fmt.Sprint(*s.Ready)
		}
		return fmt.Sprintf("%s active=%d ready=%s terminating=%s succeeded=%d failed=%d uncounted=%d conditions=%v",
			head, s.Active, ready, term, s.Succeeded, s.Failed, uncounted(s.UncountedTerminatedPods), conds)
	case *corev1.Pod:
		var conds []string
		for _, c := range o.Status.Conditions {
			conds = append(conds, fmt.Sprintf("%s=%s", c.Type, c.Status))
		}
		del := ""
		if o.DeletionTimestamp != nil {
			del = " deleting"
		}
		return fmt.Sprintf("%s phase=%s%s finalizers=%v conditions=%v", head, o.Status.Phase, del, o.Finalizers, conds)
	case *corev1.Event:
		return fmt.Sprintf("%s %s %s/%s: %s", head, o.Reason, o.InvolvedObject.Kind, o.InvolvedObject.Name, o.Message)
	case *corev1.Node:
		var conds []string
		for _, c := range o.Status.Conditions {
			if c.Type == corev1.NodeReady {
				conds = append(conds, fmt.Sprintf("Ready=%s", c.Status))
			}
		}
		return fmt.Sprintf("%s %v taints=%d", head, conds, len(o.Spec.Taints))
	}
	return head
}

func uncounted(u *batchv1.UncountedTerminatedPods) int {
	if u == nil {
		return 0
	}
	return len(u.Succeeded) + len(u.Failed)
}

// Dump renders the timeline of the given kinds (all when none), one line each.
func (r *Recorder) Dump(kinds ...string) string {
	want := map[string]bool{}
	for _, k := range kinds {
		want[k] = true
	}
	var b []byte
	for _, e := range r.Entries() {
		if len(want) == 0 || want[e.Kind] {
			b = append(b, Describe(e)...)
			b = append(b, '\n')
		}
	}
	return string(b)
}
