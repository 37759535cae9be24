package runner

import (
	"bytes"
	"fmt"

	"github.com/jobconform/jobconform/internal/apiaudit"
)

// readRequests fills r's observation with the kinds of write request
// controller c sent about the objects of namespace ns (apiaudit.Sent),
// read from the audit log at path from offset on: the requests the
// differential verdict compares (issue #56). Left nil — not compared —
// where there is no log or c's identity is not known.
func readRequests(r *Result, c Controller, path string, offset int64, ns string) error {
	if path == "" || c.User == "" || r.Observation == nil {
		return nil
	}
	data, err := apiaudit.Since(path, offset)
	if err != nil {
		return err
	}
	sent, unreadable, err := apiaudit.Sent(bytes.NewReader(data), c.User, ns, c.Finalizer)
	if err != nil {
		return fmt.Errorf("the apiserver's audit log %s: %w", path, err)
	}
	if unreadable > 0 { // a request's record lost: a kind may be missing
		r.Observation.Unread = fmt.Sprintf("requests: %d line(s) of the apiserver's audit log %s were not JSON (an apiserver killed mid-write): a request's record was lost", unreadable, path)
		return nil
	}
	r.Observation.Requests = sent
	return nil
}
