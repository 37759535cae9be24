package apiaudit

import (
	"slices"
	"strings"
	"testing"
)

func TestSent(t *testing.T) {
	const ref = "jobconform:reference-controller"
	log := strings.Join([]string{
		// two status writes, one kind
		`{"stage":"ResponseComplete","requestURI":"/apis/batch/v1/namespaces/a/jobs/job/status","verb":"update","user":{"username":"` + ref + `"},"objectRef":{"resource":"jobs","namespace":"a","name":"job","apiGroup":"batch","subresource":"status"}}`,
		`{"stage":"ResponseComplete","requestURI":"/apis/batch/v1/namespaces/a/jobs/job/status?timeout=10s","verb":"update","user":{"username":"` + ref + `"},"objectRef":{"resource":"jobs","namespace":"a","name":"job","apiGroup":"batch","subresource":"status"}}`,
		// a finalizer's removal guarded by the pod's UID, and one not guarded: one kind
		`{"stage":"ResponseComplete","requestURI":"/api/v1/namespaces/a/pods/p1","verb":"patch","user":{"username":"` + ref + `"},"objectRef":{"resource":"pods","namespace":"a","name":"p1"},"requestObject":{"metadata":{"$deleteFromPrimitiveList/finalizers":["example.com/tracking"],"uid":"0f6c6a9e-1d8c-4c55-9a43-1d2b3c4d5e6f"}}}`,
		`{"stage":"ResponseComplete","requestURI":"/api/v1/namespaces/a/pods/p2","verb":"patch","user":{"username":"` + ref + `"},"objectRef":{"resource":"pods","namespace":"a","name":"p2"},"requestObject":{"metadata":{"$deleteFromPrimitiveList/finalizers":["example.com/tracking"]}}}`,
		// deletes: with a precondition (a guard), then with other options
		`{"stage":"ResponseComplete","requestURI":"/api/v1/namespaces/a/pods/p1","verb":"delete","user":{"username":"` + ref + `"},"objectRef":{"resource":"pods","namespace":"a","name":"p1"},"requestObject":{"kind":"DeleteOptions","apiVersion":"meta.k8s.io/v1","preconditions":{"uid":"0f6c6a9e-1d8c-4c55-9a43-1d2b3c4d5e6f"}}}`,
		`{"stage":"ResponseComplete","requestURI":"/api/v1/namespaces/a/pods/p2","verb":"delete","user":{"username":"` + ref + `"},"objectRef":{"resource":"pods","namespace":"a","name":"p2"},"requestObject":{"propagationPolicy":"Background"}}`,
		`{"stage":"ResponseComplete","requestURI":"/api/v1/namespaces/a/pods?dryRun=All","verb":"create","user":{"username":"` + ref + `"},"objectRef":{"resource":"pods","namespace":"a"}}`,
		// refused before its body was read (a restarting apiserver's RBAC): not a kind
		`{"stage":"ResponseComplete","requestURI":"/api/v1/namespaces/a/pods/p3","verb":"patch","user":{"username":"` + ref + `"},"objectRef":{"resource":"pods","namespace":"a","name":"p3"},"responseStatus":{"code":403}}`,
		// an event's count raised: not a kind (timing; events.* compares the counts)
		`{"stage":"ResponseComplete","requestURI":"/api/v1/namespaces/a/events/e","verb":"patch","user":{"username":"` + ref + `"},"objectRef":{"resource":"events","namespace":"a"},"requestObject":{"count":2,"lastTimestamp":"2026-12-01T21:00:00Z","message":"Created pod: job-x"}}`,
		`{"stage":"ResponseComplete","requestURI":"/apis/events.k8s.io/v1/namespaces/a/events","verb":"create","user":{"username":"` + ref + `"},"objectRef":{"resource":"events","namespace":"a","apiGroup":"events.k8s.io"}}`,
		// not sent about namespace a by the reference: reads, another namespace, another user, the request's first stage
		`{"stage":"ResponseComplete","requestURI":"/apis/batch/v1/namespaces/a/jobs/job","verb":"get","user":{"username":"` + ref + `"},"objectRef":{"resource":"jobs","namespace":"a","apiGroup":"batch"}}`,
		`{"stage":"ResponseComplete","requestURI":"/api/v1/namespaces/b/pods","verb":"create","user":{"username":"` + ref + `"},"objectRef":{"resource":"pods","namespace":"b"}}`,
		`{"stage":"ResponseComplete","requestURI":"/api/v1/namespaces/a/pods/p1","verb":"delete","user":{"username":"system:serviceaccount:kube-system:job-controller"},"objectRef":{"resource":"pods","namespace":"a"},"requestObject":{}}`,
		`{"stage":"RequestReceived","requestURI":"/api/v1/namespaces/a/configmaps","verb":"create","user":{"username":"` + ref + `"},"objectRef":{"resource":"configmaps","namespace":"a"}}`,
		``,
	}, "\n")
	got, unreadable, err := Sent(strings.NewReader(log), ref, "a", "example.com/tracking")
	if err != nil || unreadable != 0 {
		t.Fatal(err, unreadable)
	}
	want := []string{
		`create events.events.k8s.io`,
		`create pods ?dryRun=All`,
		`delete pods {"propagationPolicy":"Background"}`,
		`delete pods {}`,
		`patch pods {"metadata":{"$deleteFromPrimitiveList/finalizers":["<tracking-finalizer>"]}}`,
		`update jobs.batch/status`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("sent:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if kinds, unreadable, err := Sent(strings.NewReader("{\n"+log), ref, "a", ""); err != nil || unreadable != 1 || len(kinds) != len(want) {
		t.Errorf("a broken line (an apiserver killed mid-write): %v, %d unreadable, %q", err, unreadable, kinds)
	}
}

func TestNormaliseKeepsWhatAPatchChanges(t *testing.T) {
	adopt := `{"metadata":{"ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"job","uid":"0f6c6a9e-1d8c-4c55-9a43-1d2b3c4d5e6f","controller":true,"blockOwnerDeletion":true}],"uid":"1f6c6a9e-1d8c-4c55-9a43-1d2b3c4d5e6f","finalizers":["f"]}}`
	if got, want := normalise([]byte(adopt), "f"), `{"metadata":{"finalizers":["<tracking-finalizer>"],"ownerReferences":[{"apiVersion":"batch/v1","blockOwnerDeletion":true,"controller":true,"kind":"Job","name":"job","uid":"<uid>"}]}}`; got != want {
		t.Errorf("adoption:\n%s\nwant\n%s", got, want)
	}
	if got := normalise([]byte(`[{"op":"remove","path":"/metadata/finalizers/0"}]`), "f"); got != `[{"op":"remove","path":"/metadata/finalizers/0"}]` {
		t.Errorf("a JSON patch: %s", got)
	}
	if got := normalise([]byte(`not json`), ""); got != "<not JSON>" {
		t.Errorf("not JSON: %s", got)
	}
}
