package oracle

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// Messages (issue #56): a condition's or an event's words compared, the
// pods' names and the namespace placeholders, client-go's "combined" prefix
// dropped; a message of another wording differs.
func TestMessagesCompared(t *testing.T) {
	worded := func(uid, ns, finished string, combine bool) *Observation {
		tl := run(uid, "f", func(j *batchv1.Job, _ []*corev1.Pod) {
			j.Namespace = ns
			j.Status.Conditions[1].Message = finished
		})
		for i, e := range tl {
			if ev, ok := e.Object.(*corev1.Event); ok {
				ev.Message = "Created pod: " + tl[i%2].Name
				if combine && i%2 == 1 {
					ev.Message = combined + ev.Message
				}
			}
		}
		return Observe(tl, "job", "f")
	}
	builtin := worded("11111111", "ns-a", "Reached expected number of succeeded pods", false)
	if got := builtin.Messages["event Normal/SuccessfulCreate"]; got != "Created pod: <pod>" {
		t.Fatalf("event messages: %q", got)
	}
	if ds := Compare(builtin, worded("22222222", "ns-b", "Reached expected number of succeeded pods", true), nil); len(ds) != 0 {
		t.Fatalf("the same words, other names: %v", ds)
	}
	// A refused creation names a pod that never existed.
	refused := func(name string) map[string]string {
		var p placeholders
		p.generatedFrom("job")
		m := messages{}
		m.event(&corev1.Event{Type: "Warning", Reason: "FailedCreate", Message: `Error creating: pods "` + name + `" is forbidden: exceeded quota`})
		return m.joined(&p)
	}
	if a, b := refused("job-7w5vl"), refused("job-0-dx6lc"); a["event Warning/FailedCreate"] != `Error creating: pods "<pod>" is forbidden: exceeded quota` || b["event Warning/FailedCreate"] != a["event Warning/FailedCreate"] {
		t.Fatalf("generated names: %v, %v", a, b)
	}
	if a := refused("jobs-7w5vl"); a["event Warning/FailedCreate"] != `Error creating: pods "jobs-7w5vl" is forbidden: exceeded quota` {
		t.Fatalf("another Job's name: %v", a)
	}
	// An apiserver's refusal names the controller's identity and the
	// namespace (a drill's restarted apiserver, its RBAC not read yet).
	forbidden := func(uid, ns, user string) *Observation {
		tl := run(uid, "f", func(j *batchv1.Job, _ []*corev1.Pod) { j.Namespace = ns })
		for _, e := range tl {
			if ev, ok := e.Object.(*corev1.Event); ok {
				ev.Type, ev.Reason = "Warning", "FailedCreate"
				ev.Message = `Error creating: pods is forbidden: User "` + user + `" cannot create resource "pods" in API group "" in the namespace "` + ns + `"`
			}
		}
		return Observe(tl, "job", "f")
	}
	a, b := forbidden("11111111", "jc-builtin-qt669", "system:serviceaccount:kube-system:job-controller"), forbidden("22222222", "jc-reference-9bms9", "jobconform:reference-controller")
	if ds := Compare(a, b, nil); len(ds) != 0 || a.Messages["event Warning/FailedCreate"] != `Error creating: pods is forbidden: User "<controller>" cannot create resource "pods" in API group "" in the namespace "<namespace>"` {
		t.Fatalf("refusals of two identities in two namespaces: %v, %q", ds, a.Messages["event Warning/FailedCreate"])
	}
	// A refusal by the admission policy of one run's namespace names it.
	var p placeholders
	if got := p.generic(`pods "job-7w5vl" is forbidden: ValidatingAdmissionPolicy '` + RefusalPolicyPrefix + `jc-builtin-mhgzm' with binding '` + RefusalPolicyPrefix + `jc-builtin-mhgzm' denied request`); got != `pods "job-7w5vl" is forbidden: ValidatingAdmissionPolicy '`+RefusalPolicyPrefix+`<namespace>' with binding '`+RefusalPolicyPrefix+`<namespace>' denied request` {
		t.Fatalf("a refusal by the policy of a run's namespace: %q", got)
	}
	ds := Failing(Compare(builtin, worded("22222222", "ns-b", "Job completed", false), nil))
	if len(ds) != 1 || ds[0].Field != "messages.condition Complete=True/CompletionsReached" || ds[0].Other != "Job completed" {
		t.Fatalf("another wording: %v", ds)
	}
}
