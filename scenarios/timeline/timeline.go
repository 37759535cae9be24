// Package timeline is the record of one scenario run: every change of the
// Jobs, Pods, Nodes and Events it involved, in order. The recorder (suites)
// writes it, the invariants (scenarios/invariants) read it, the reports draw it.
package timeline

import (
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// EventType is the kind of change.
type EventType string

// Changes an entry records.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
)

// Entry is one observed change. Seq orders the entries of one recording by
// arrival; within one kind that is the apiserver's order.
type Entry struct {
	Seq    int
	Time   time.Time
	Type   EventType
	Kind   string // Job, Pod, Node, Event
	Name   string
	Object runtime.Object // a private copy
}

// Job returns the entry's object as a Job (nil for other kinds).
func (e Entry) Job() *batchv1.Job { j, _ := e.Object.(*batchv1.Job); return j }

// Pod returns the entry's object as a Pod (nil for other kinds).
func (e Entry) Pod() *corev1.Pod { p, _ := e.Object.(*corev1.Pod); return p }

// Revision is the object's resourceVersion as a number. With an etcd3-backed
// apiserver it is the etcd revision of the change, one counter for every
// object of the cluster, so revisions order changes across kinds exactly,
// where arrival times from separate watches only approximate it. 0 if unknown.
func (e Entry) Revision() uint64 {
	m, err := meta.Accessor(e.Object)
	if err != nil {
		return 0
	}
	rv, err := strconv.ParseUint(m.GetResourceVersion(), 10, 64)
	if err != nil {
		return 0
	}
	return rv
}

// Timeline is a recording.
type Timeline []Entry

// Of returns the entries of one kind, in order.
func (t Timeline) Of(kind string) Timeline {
	var out Timeline
	for _, e := range t {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}
