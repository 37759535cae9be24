package scenarios

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"

	"github.com/invopop/jsonschema"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/jobconform/jobconform/internal/yamltypes"
	"github.com/jobconform/jobconform/scenarios/bugs"
)

// SchemaID names the scenario file schema: the file scenarios/scenario.schema.json
// of the module's repository (jobconform schema prints it).
const SchemaID = "https://raw.githubusercontent.com/jobconform/jobconform/main/scenarios/scenario.schema.json"

// Schema returns the JSON Schema of a scenario document, reflected from
// Scenario (so it cannot drift from what Parse accepts): editors complete and
// check scenario files with it (e.g. "# yaml-language-server: $schema=...").
// Unknown fields are errors, as in Parse; Validate's further rules that a
// schema can say (the features, the action kinds) are in it too.
func Schema() ([]byte, error) {
	r := &jsonschema.Reflector{
		ExpandedStruct:             true,
		RequiredFromJSONSchemaTags: true, // Kubernetes types mark optional fields inconsistently; Validate says what is required
		Namer: func(t reflect.Type) string {
			// Qualified: core/v1 and batch/v1 both have types named alike.
			if t.Name() == "" || t.PkgPath() == "" {
				return t.Name()
			}
			return strings.ReplaceAll(t.PkgPath(), "/", ".") + "." + t.Name()
		},
		Mapper: func(t reflect.Type) *jsonschema.Schema {
			switch t {
			case reflect.TypeOf(yamltypes.Duration{}):
				return &jsonschema.Schema{Type: "string", Pattern: `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`, Description: "a duration such as 5s or 1m30s"}
			case reflect.TypeOf(resource.Quantity{}), reflect.TypeOf(intstr.IntOrString{}):
				return &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "string"}, {Type: "integer"}}}
			case reflect.TypeOf(metav1.Time{}), reflect.TypeOf(metav1.MicroTime{}):
				return &jsonschema.Schema{Type: "string", Format: "date-time"}
			}
			return nil
		},
	}
	s := r.Reflect(&Scenario{})
	s.ID = SchemaID
	s.Title = "jobconform scenario"
	s.Description = "One jobconform scenario: a Job, what its pods do, and the steps to await or act. Several may share a file, separated by ---."
	s.Required = []string{"name", "features", "steps"}
	if p, ok := s.Properties.Get("features"); ok && p.Items != nil {
		p.Items.Enum = anySlice(Features)
	}
	if act, ok := s.Definitions[r.Namer(reflect.TypeOf(Action{}))]; ok {
		if kind, ok := act.Properties.Get("kind"); ok {
			kind.Enum = anySlice(actionKinds)
		}
		if refuse, ok := act.Properties.Get("refuse"); ok && refuse.Items != nil {
			refuse.Items.Enum = anySlice([]string{RefusePods, RefuseJobStatus})
		}
		act.Required = []string{"kind"}
	}
	if st, ok := s.Definitions[r.Namer(reflect.TypeOf(Step{}))]; ok {
		st.OneOf = []*jsonschema.Schema{{Required: []string{"await"}}, {Required: []string{"awaitGone"}}, {Required: []string{"act"}}, {Required: []string{"chaos"}}}
		if kb, ok := st.Properties.Get("knownBugs"); ok && kb.Items != nil {
			var ids []string
			for id := range bugs.All {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			kb.Items.Enum = anySlice(ids)
		}
	}
	return json.MarshalIndent(s, "", "  ")
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
