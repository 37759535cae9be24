package apiaudit

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

func TestPolicyLogsOnlyTheUsers(t *testing.T) {
	data, err := Policy([]string{"system:serviceaccount:kube-system:job-controller", "jobconform:reference-controller"})
	if err != nil {
		t.Fatal(err)
	}
	var p auditv1.Policy
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if p.Kind != "Policy" || len(p.Rules) != 3 || p.Rules[0].Level != auditv1.LevelRequest || len(p.Rules[0].Users) != 2 || len(p.Rules[0].Verbs) != 3 ||
		p.Rules[1].Level != auditv1.LevelMetadata || len(p.Rules[1].Users) != 2 || len(p.Rules[1].Verbs) != 0 || p.Rules[2].Level != auditv1.LevelNone {
		t.Errorf("policy:\n%s", data)
	}
}

func TestCount(t *testing.T) {
	log := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","requestURI":"/apis/batch/v1/namespaces/a/jobs/job/status","verb":"update","user":{"username":"jobconform:reference-controller"},"objectRef":{"resource":"jobs","namespace":"a","name":"job","apiGroup":"batch","apiVersion":"v1","subresource":"status"},"responseStatus":{"code":200}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/a/pods","verb":"create","user":{"username":"jobconform:reference-controller"},"objectRef":{"resource":"pods","namespace":"a"},"responseStatus":{"code":201}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/a/pods","verb":"create","user":{"username":"jobconform:reference-controller"},"objectRef":{"resource":"pods","namespace":"a"},"responseStatus":{"code":201}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"Panic","requestURI":"/api/v1/pods","verb":"list","user":{"username":"jobconform:reference-controller"},"objectRef":{"resource":"pods"}}

{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","requestURI":"/healthz","verb":"get","user":{"username":"system:serviceaccount:kube-system:job-controller"}}
`
	c, err := Count(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	ref := c.Of("jobconform:reference-controller")
	if ref.Total() != 3 || ref[Key{"jobconform:reference-controller", "create", "pods"}] != 2 || ref[Key{"jobconform:reference-controller", "update", "jobs/status"}] != 1 {
		t.Errorf("reference's counts: %v", ref)
	}
	if c[Key{"system:serviceaccount:kube-system:job-controller", "get", "/healthz"}] != 1 || c.Total() != 4 || len(c.Keys()) != 3 {
		t.Errorf("counts: %v", c)
	}
	if _, err := Count(strings.NewReader("{not json\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a broken line: %v", err)
	}
}

func TestReadCountsConflicts(t *testing.T) {
	log := `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","verb":"update","user":{"username":"u"},"objectRef":{"resource":"jobs","subresource":"status"},"responseStatus":{"code":409}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","verb":"delete","user":{"username":"u"},"objectRef":{"resource":"pods"},"responseStatus":{"code":429}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","stage":"ResponseComplete","verb":"update","user":{"username":"u"},"objectRef":{"resource":"jobs","subresource":"status"},"responseStatus":{"code":200}}
`
	tl, err := Read(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	k := Key{"u", "update", "jobs/status"}
	if tl.Requests[k] != 2 || tl.Conflicts[k] != 1 || tl.Conflicts.Total() != 1 {
		t.Errorf("tally: %+v", tl)
	}
	if d := (Key{"u", "delete", "pods"}); tl.Requests[d] != 1 || tl.Throttled[d] != 1 || tl.Throttled.Total() != 1 {
		t.Errorf("a request refused 429 is a request, and throttled: %+v", tl)
	}
	if n := tl.Requests.Sum(func(k Key) bool { return k.Resource == "jobs/status" }); n != 2 {
		t.Errorf("Sum: %d", n)
	}
}
