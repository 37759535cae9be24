package catalog

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/jobconform/jobconform/scenarios"
)

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	data, err := scenarios.Schema()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(scenarios.SchemaID, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(scenarios.SchemaID)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func instance(t *testing.T, doc []byte) any {
	t.Helper()
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Every catalog scenario is valid under the schema editors use: the schema
// must not flag what jobconform accepts.
func TestCatalogMatchesSchema(t *testing.T) {
	s := compileSchema(t)
	n := 0
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(path, "drills/") || !strings.HasSuffix(path, ".yaml") { // drills are no scenarios, explored/README.md none either
			return err
		}
		data, err := fs.ReadFile(files, path)
		if err != nil {
			return err
		}
		for _, doc := range bytes.Split(data, []byte("\n---\n")) {
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			n++
			if err := s.Validate(instance(t, doc)); err != nil {
				t.Errorf("%s: %v", path, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Fatalf("validated %d scenarios, the catalogs hold more", n)
	}
}

// And it flags what jobconform rejects, where a schema can say it.
func TestSchemaRejectsBrokenScenarios(t *testing.T) {
	s := compileSchema(t)
	for name, doc := range map[string]string{
		"unknown field":   "name: a\nfeatures: [suspend]\nsteps: [{await: {active: 1}}]\nbogus: 1\n",
		"wrong type":      "name: a\nfeatures: [suspend]\nsteps: [{await: {active: one}}]\n",
		"unknown feature": "name: a\nfeatures: [teleport]\nsteps: [{await: {active: 1}}]\n",
		"bad duration":    "name: a\nfeatures: [suspend]\ntimeout: soon\nsteps: [{await: {active: 1}}]\n",
		"no steps":        "name: a\nfeatures: [suspend]\n",
		"two kinds":       "name: a\nfeatures: [suspend]\nsteps: [{await: {active: 1}, act: {kind: suspend}}]\n",
		"unknown act":     "name: a\nfeatures: [suspend]\nsteps: [{act: {kind: explode}}]\n",
	} {
		if err := s.Validate(instance(t, []byte(doc))); err == nil {
			t.Errorf("%s: the schema accepts\n%s", name, doc)
		}
		if _, err := scenarios.Parse([]byte(doc)); err == nil {
			t.Errorf("%s: Parse accepts\n%s", name, doc)
		}
	}
	var v any
	if err := json.Unmarshal([]byte(`{"name":"a","features":["suspend"],"steps":[{"await":{"active":1}}]}`), &v); err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("a minimal scenario: %v", err)
	}
}
