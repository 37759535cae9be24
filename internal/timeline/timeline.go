// Package timeline is the record of one scenario run: every change of the
// Jobs, Pods, Nodes and Events it involved, in order. The recorder
// (internal/recorder) writes it, the invariants (scenarios/invariants) read
// it, the reports draw it: it sits on the lowest floor, beside the
// settings, so that each of them imports it downward (hack/verify.sh).
// The public Go API names its types through suites.Timeline and
// suites.Entry.
package timeline

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
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

// Line is the one schema of a timeline written out (JSON lines): the suites
// write it into their reports, the reports read it back.
type Line struct {
	Time   time.Time       `json:"time"`
	Type   EventType       `json:"type"`
	Kind   string          `json:"kind"`
	Name   string          `json:"name"`
	Object json.RawMessage `json:"object"`
}

// Lines renders t as JSON lines, one Line per entry. Each object's
// managedFields keep who wrote it (manager, operation, subresource: what
// delegation-respected reads) but not which fields, which were a third of
// a recording's bytes and nothing reads.
func (t Timeline) Lines() (string, error) {
	var b strings.Builder
	err := t.WriteLines(&b)
	return b.String(), err
}

// WriteLines writes what Lines returns to w, a line at a time (the scale
// suite counts a 10,000-pod recording's bytes without holding them).
func (t Timeline) WriteLines(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, e := range t {
		obj, err := json.Marshal(withoutFieldSets(e.Object))
		if err != nil {
			return fmt.Errorf("timeline entry %d (%s %s): %w", e.Seq, e.Kind, e.Name, err)
		}
		if err := enc.Encode(Line{Time: e.Time, Type: e.Type, Kind: e.Kind, Name: e.Name, Object: obj}); err != nil {
			return err
		}
	}
	return nil
}

// withoutFieldSets is obj, or a copy of it whose managedFields entries have
// no FieldsV1.
func withoutFieldSets(obj runtime.Object) runtime.Object {
	m, err := meta.Accessor(obj)
	if err != nil {
		return obj
	}
	has := false
	for _, f := range m.GetManagedFields() {
		has = has || f.FieldsV1 != nil
	}
	if !has {
		return obj
	}
	obj = obj.DeepCopyObject()
	m, _ = meta.Accessor(obj)
	fields := m.GetManagedFields()
	for i := range fields {
		fields[i].FieldsV1 = nil
	}
	m.SetManagedFields(fields)
	return obj
}

// ParseLines reads what Lines wrote.
func ParseLines(s string) ([]Line, error) {
	var out []Line
	err := scanLines(strings.NewReader(s), func(_ int, l Line) error {
		out = append(out, l)
		return nil
	})
	return out, err
}

// ReadTimeline reads back what WriteLines wrote, a line at a time, as
// entries with their typed objects (Jobs, Pods, Nodes, Events; a line of
// another kind is an error): a recording kept on disk judged again.
func ReadTimeline(r io.Reader) (Timeline, error) {
	var out Timeline
	err := scanLines(r, func(n int, l Line) error {
		var obj runtime.Object
		switch l.Kind {
		case "Job":
			obj = &batchv1.Job{}
		case "Pod":
			obj = &corev1.Pod{}
		case "Node":
			obj = &corev1.Node{}
		case "Event":
			obj = &corev1.Event{}
		default:
			return fmt.Errorf("timeline line %d: unknown kind %q", n, l.Kind)
		}
		if err := json.Unmarshal(l.Object, obj); err != nil {
			return fmt.Errorf("timeline line %d (%s %s): %w", n, l.Kind, l.Name, err)
		}
		out = append(out, Entry{Seq: len(out), Time: l.Time, Type: l.Type, Kind: l.Kind, Name: l.Name, Object: obj})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scanLines calls fn with each non-blank JSON line of r and its number.
func scanLines(r io.Reader, fn func(n int, l Line) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var l Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return fmt.Errorf("timeline line %d: %w", n, err)
		}
		if err := fn(n, l); err != nil {
			return err
		}
	}
	return sc.Err()
}

// Span is a stretch of a recording's time (a watch's gap, a gate turned
// off), open-ended when To is zero.
type Span struct{ From, To time.Time }

// Contains tells whether t falls in s, its ends included.
func (s Span) Contains(t time.Time) bool {
	return !t.Before(s.From) && (s.To.IsZero() || !t.After(s.To))
}
