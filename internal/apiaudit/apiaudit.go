// Package apiaudit keeps and reads an apiserver audit log of some users'
// requests: how many API requests each Job controller made, by verb and
// resource (the scale suite's side-by-side table, issue #32), and which
// kinds of write it sent about a scenario's objects (Sent: the
// differential verdict's requests, issue #56). The apiserver's own request
// metrics do not say which client asked.
package apiaudit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"sigs.k8s.io/yaml"
)

// Policy is an audit policy that logs the requests of users once each
// (when the response is complete), and nothing else: their patches and
// deletes at the Request level (what a patch changes, a delete's options:
// Sent), the rest at the Metadata level.
func Policy(users []string) ([]byte, error) {
	p := auditv1.Policy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "audit.k8s.io/v1", Kind: "Policy"},
		OmitStages: []auditv1.Stage{auditv1.StageRequestReceived, auditv1.StageResponseStarted},
		Rules: []auditv1.PolicyRule{
			{Level: auditv1.LevelRequest, Users: users, Verbs: []string{"patch", "delete", "deletecollection"}},
			{Level: auditv1.LevelMetadata, Users: users},
			{Level: auditv1.LevelNone},
		},
	}
	return yaml.Marshal(p)
}

// Key is what requests are counted by.
type Key struct {
	User string
	Verb string // get, list, watch, create, update, patch, delete, ...
	// Resource is the resource, with its subresource after a slash
	// ("jobs/status"); a non-resource request is its path.
	Resource string
}

func (k Key) String() string { return fmt.Sprintf("%s %s %s", k.User, k.Verb, k.Resource) }

// Counts are requests by Key.
type Counts map[Key]int

// Count reads an audit log of JSON lines (--audit-log-format=json) and
// counts its completed requests.
func Count(r io.Reader) (Counts, error) {
	t, err := Read(r)
	return t.Requests, err
}

// Tally is what an audit log says: every completed request, those the
// apiserver answered 409 Conflict (an update on a stale resourceVersion, a
// create of a name that exists), and those it refused 429 Too Many Requests
// (priority and fairness: client-go sends them again, each a request of
// its own).
type Tally struct {
	Requests  Counts
	Conflicts Counts
	Throttled Counts
}

// Read reads an audit log of JSON lines (--audit-log-format=json) and
// counts its completed requests and their conflicts.
func Read(r io.Reader) (Tally, error) {
	out := Tally{Requests: Counts{}, Conflicts: Counts{}, Throttled: Counts{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e auditv1.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return out, fmt.Errorf("audit log line %d: %w", line, err)
		}
		if e.Stage != auditv1.StageResponseComplete {
			continue
		}
		k := Key{User: e.User.Username, Verb: e.Verb, Resource: e.RequestURI}
		if ref := e.ObjectRef; ref != nil {
			k.Resource = ref.Resource
			if ref.Subresource != "" {
				k.Resource += "/" + ref.Subresource
			}
		}
		out.Requests[k]++
		if e.ResponseStatus != nil {
			switch e.ResponseStatus.Code {
			case 409:
				out.Conflicts[k]++
			case 429:
				out.Throttled[k]++
			}
		}
	}
	return out, sc.Err()
}

// Of is the counts of one user.
func (c Counts) Of(user string) Counts {
	out := Counts{}
	for k, n := range c {
		if k.User == user {
			out[k] = n
		}
	}
	return out
}

// Sum is the number of requests counted whose key matches.
func (c Counts) Sum(match func(Key) bool) int {
	n := 0
	for k, v := range c {
		if match(k) {
			n += v
		}
	}
	return n
}

// Total is the number of requests counted.
func (c Counts) Total() int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// Keys are the counted keys, sorted.
func (c Counts) Keys() []Key {
	out := make([]Key, 0, len(c))
	for k := range c {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
