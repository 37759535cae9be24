package runner

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/internal/apiaudit"
	"github.com/jobconform/jobconform/scenarios/oracle"
)

func TestReadRequests(t *testing.T) {
	line := func(ns, verb string) string {
		return `{"stage":"ResponseComplete","requestURI":"/api/v1/namespaces/` + ns + `/pods","verb":"` + verb + `","user":{"username":"u"},"objectRef":{"resource":"pods","namespace":"` + ns + `"}}` + "\n"
	}
	path := filepath.Join(t.TempDir(), "audit.log")
	before := line("ns", "update") // before the run began: not this run's
	if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	from := apiaudit.Size(path)
	half := line("other", "create")
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString(line("ns", "create") + line("other", "delete") + half[:len(half)/2]) // another run's line half written
	f.Close()
	c := Controller{User: "u"}
	r := &Result{Observation: &oracle.Observation{}}
	if err := readRequests(r, c, path, from, "ns"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"create pods"}; !slices.Equal(r.Observation.Requests, want) {
		t.Errorf("requests %q, want %q", r.Observation.Requests, want)
	}
	r = &Result{Observation: &oracle.Observation{}}
	if err := readRequests(r, Controller{}, path, from, "ns"); err != nil || r.Observation.Requests != nil {
		t.Errorf("a controller of unknown identity: %v, %q", err, r.Observation.Requests)
	}
	if err := readRequests(r, c, "", 0, "ns"); err != nil || r.Observation.Requests != nil {
		t.Errorf("no audit log: %v, %q", err, r.Observation.Requests)
	}
	if err := readRequests(r, c, path, 1<<20, "ns"); err == nil || !strings.Contains(err.Error(), "rotated") {
		t.Errorf("a log shorter than at the start: %v", err)
	}
	garbled := filepath.Join(t.TempDir(), "audit.log")
	_ = os.WriteFile(garbled, []byte(half[:len(half)/2]+"\n"+line("ns", "create")), 0o644)
	r = &Result{Observation: &oracle.Observation{}}
	if err := readRequests(r, c, garbled, 0, "ns"); err != nil || r.Observation.Requests != nil || !strings.Contains(r.Observation.Unread, "1 line(s)") {
		t.Errorf("a record lost (an apiserver killed mid-write): %v, %q, %q", err, r.Observation.Requests, r.Observation.Unread)
	}
	if apiaudit.Size("") != 0 || apiaudit.Size(filepath.Join(t.TempDir(), "none")) != 0 {
		t.Error("no log: offset 0")
	}
}
