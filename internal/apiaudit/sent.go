package apiaudit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// writes are the verbs whose requests Sent reads: what a controller asks
// the apiserver to change. Its reads are left out: whether it reads an
// object again or trusts its informer's cache is its own business, and
// when it must depends on timing.
var writes = []string{"create", "update", "patch", "delete", "deletecollection"}

// Sent is the distinct kinds of write request user sent about objects of
// namespace, read from an audit log of JSON lines kept by Policy: each
// "<verb> <resource>[.<group>][/<subresource>]", then its query options
// where it has any, then, for a patch, the patch's content and, for a
// delete, its options (normalise). Which kinds, not how many: how many
// status writes or finalizer patches a run needs depends on when the pod
// events arrive. Unreadable counts the lines that are not JSON: an
// apiserver killed in the middle of a write leaves one, and the request it
// recorded is lost.
func Sent(r io.Reader, user, namespace, finalizer string) (kinds []string, unreadable int, err error) {
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var e auditv1.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			unreadable++
			continue
		}
		if e.Stage != auditv1.StageResponseComplete || e.User.Username != user || e.ObjectRef == nil ||
			e.ObjectRef.Namespace != namespace || !slices.Contains(writes, e.Verb) {
			continue
		}
		if refusedUnread(&e) {
			// Refused before its body was read (authorization, a
			// restarting apiserver: RBAC not loaded yet — rehearsal 15's
			// drill saw the reference's finalizer patch refused so, then
			// sent again): it says nothing of what was asked, and the
			// request sent again is counted with its body.
			continue
		}
		if e.ObjectRef.Resource == "events" && e.Verb == "patch" {
			// An event's count raised: whether a repeat raises a count or
			// makes an event depends on timing (the recorder's correlator,
			// a send retried across an apiserver restart — a drill's flight
			// showed one run patching and the other not), and the counts
			// are compared as events.* already, with their own rules.
			continue
		}
		seen[kind(&e, finalizer)] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, unreadable, sc.Err()
}

// refusedUnread tells whether a patch or a delete, logged at the Request
// level, was refused without its body.
func refusedUnread(e *auditv1.Event) bool {
	return (e.Verb == "patch" || strings.HasPrefix(e.Verb, "delete")) && e.RequestObject == nil &&
		e.ResponseStatus != nil && e.ResponseStatus.Code >= 400
}

// kind is what one request asked, normalised.
func kind(e *auditv1.Event, finalizer string) string {
	ref := e.ObjectRef
	res := ref.Resource
	if ref.APIGroup != "" {
		res += "." + ref.APIGroup
	}
	if ref.Subresource != "" {
		res += "/" + ref.Subresource
	}
	k := e.Verb + " " + res
	if u, err := url.Parse(e.RequestURI); err == nil {
		q := u.Query()
		q.Del("timeout") // the client's own deadline, not an option of the request
		if len(q) > 0 {
			k += " ?" + q.Encode()
		}
	}
	if e.RequestObject != nil && (e.Verb == "patch" || strings.HasPrefix(e.Verb, "delete")) {
		k += " " + normalise(e.RequestObject.Raw, finalizer)
	}
	return k
}

// Since is what the audit log at path holds from offset on (its length
// when a run began, Size), up to its last whole line: the apiserver goes
// on logging others' requests, and a last line may be half written.
func Since(path string, offset int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the apiserver's audit log: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() < offset {
		return nil, fmt.Errorf("the apiserver's audit log %s is shorter (%d bytes) than when the run began (%d): it was rotated, the run's requests cannot be read", path, st.Size(), offset)
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("the apiserver's audit log %s: %w", path, err)
	}
	return data[:bytes.LastIndexByte(data, '\n')+1], nil
}

// Size is how long the audit log at path is now (0: none, or not written
// yet): a run reads its requests from there on (Since).
func Size(path string) int64 {
	if path == "" {
		return 0
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

var uid = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// normalise is a patch's or a delete's body with what two runs name
// differently as placeholders (any UID, the controller's own finalizer)
// and its guards dropped: a delete's preconditions and a patch's
// metadata.uid and metadata.resourceVersion change nothing where they
// hold, and they fail only on an object replaced under the same name — a
// pod's name is generated. A delete's kind and apiVersion go too (client-go
// sends them with some options and not others).
func normalise(body []byte, finalizer string) string {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return "<not JSON>"
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "preconditions")
		delete(m, "kind")
		delete(m, "apiVersion")
		if meta, ok := m["metadata"].(map[string]any); ok {
			delete(meta, "uid")
			delete(meta, "resourceVersion")
		}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)                   // placeholders read <uid>, not \u003cuid\u003e
	_ = enc.Encode(placeholders(v, finalizer)) // maps encode with their keys sorted
	return strings.TrimSuffix(b.String(), "\n")
}

func placeholders(v any, finalizer string) any {
	switch t := v.(type) {
	case string:
		switch {
		case uid.MatchString(t):
			return "<uid>"
		case t == finalizer && finalizer != "":
			return "<tracking-finalizer>"
		}
	case []any:
		for i := range t {
			t[i] = placeholders(t[i], finalizer)
		}
	case map[string]any:
		for k, x := range t {
			t[k] = placeholders(x, finalizer)
		}
	}
	return v
}
