package runner

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/jobconform/jobconform/scenarios"
)

func TestNamespacePrefixIsADNSLabel(t *testing.T) {
	for _, name := range []string{"builtin", "example.com/ext", "Kueue.X-K8s.io/MultiKueue", strings.Repeat("x", 100)} {
		p := namespacePrefix(name)
		// GenerateName appends "-" and 5 characters.
		if errs := validation.IsDNS1123Label(p + "-abcde"); len(errs) > 0 {
			t.Errorf("%q → %q: %v", name, p, errs)
		}
	}
}

func TestBuildJob(t *testing.T) {
	s, err := scenarios.Parse([]byte(`
name: x
features: [managedBy]
foreignManagedBy: true
job: {parallelism: 2, completions: 2}
pods: {run: 1s}
steps: [{await: {empty: true}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	j, err := buildJob(s, Reference)
	if err != nil {
		t.Fatal(err)
	}
	if *j.Spec.ManagedBy != AbsentManager || j.Spec.Template.Spec.RestartPolicy != "Never" || len(j.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("job %+v", j.Spec)
	}
}
