package oracle

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/jobconform/jobconform/internal/timeline"
)

// Pods as last seen (issue #56). A Job controller creates its pods and then
// writes to them only to remove its tracking finalizer and to delete them;
// a controller that keeps the finalizer, deletes pods upstream keeps,
// or labels, annotates or edits its pods after their creation differs here,
// where their shape as created is the same. A pod is taken as last seen
// before the Job's deletion was asked for, as the Job's status is: what
// becomes of its pods after that (the garbage collector's deletions, the
// orphans' finalizers released) goes on past the recording's end on a
// large Job, and would be timing.

// podVersions is a pod's first version seen and its last before the cut:
// when its Job's deletion was asked for (zero: never). A scenario that
// deletes a Job and creates another of the same name compares each Job's
// pods up to their own Job's deletion.
type podVersions struct {
	first, last *corev1.Pod
	deleted     bool
	cut         time.Time
}

// see takes e's version of the pod as its last, unless it came after the
// cut.
func (v *podVersions) see(e timeline.Entry) {
	if !v.cut.IsZero() && e.Time.After(v.cut) {
		return
	}
	v.last, v.deleted = e.Pod(), v.deleted || gone(e)
	if e.Type == timeline.Deleted && len(v.last.Finalizers) > 0 {
		// A pod gone holds no finalizer. The watch's DELETED event carries
		// the pod as last stored: where the removal of its last finalizer
		// deleted it, with that finalizer still on — and whether the
		// controller's removal or the node's deletion came last is timing.
		v.last = v.last.DeepCopy()
		v.last.Finalizers = nil
	}
}

// gone tells whether e's pod is being deleted, or was.
func gone(e timeline.Entry) bool {
	p := e.Pod()
	return e.Type == timeline.Deleted || (p != nil && p.DeletionTimestamp != nil)
}

// later is what became of a pod after its creation, canonical: each field
// of its normalised shape (Shape) that changed, "before → after", and
// "deleted": "yes" if it was being deleted. "{}" for a pod left as created.
func later(v *podVersions, jobUIDs map[string]bool, finalizer string) string {
	a, b := flatten(Shape(v.first, jobUIDs, finalizer)), flatten(Shape(v.last, jobUIDs, finalizer))
	out := map[string]string{}
	for _, p := range diffPaths(a, b) {
		out[p] = plain(orNone(a, p)) + " → " + plain(orNone(b, p))
	}
	if v.deleted {
		out["deleted"] = "yes"
	}
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // "<none>", not "\u003cnone\u003e", in a verdict
	_ = enc.Encode(out)
	return strings.TrimSpace(buf.String())
}

// plain is a flattened leaf as written: a JSON string without its quotes.
func plain(leaf string) string {
	if s, err := strconv.Unquote(leaf); err == nil && len(leaf) > 0 && leaf[0] == '"' {
		return s
	}
	return leaf
}
