package k8sbin

import (
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// Chaos Mesh's own replace directives are carried over, its ./api put to
// the module proxy's API module at the same commit.
func TestCarriedPins(t *testing.T) {
	f, err := modfile.Parse("go.mod", []byte(`module github.com/chaos-mesh/chaos-mesh

go 1.25.11

replace (
	github.com/chaos-mesh/chaos-mesh/api => ./api
	k8s.io/api => k8s.io/api v0.35.3
)

replace github.com/opencontainers/runtime-spec => github.com/opencontainers/runtime-spec v1.2.0
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	pins, err := carriedPins(f, ChaosMeshVersion)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"\tgithub.com/chaos-mesh/chaos-mesh/api => github.com/chaos-mesh/chaos-mesh/api v0.0.0-20260902003049-47411975a8cb",
		"\tk8s.io/api => k8s.io/api v0.35.3",
		"\tgithub.com/opencontainers/runtime-spec => github.com/opencontainers/runtime-spec v1.2.0",
	}
	if strings.Join(pins, "\n") != strings.Join(want, "\n") {
		t.Errorf("pins:\n%s\nwant:\n%s", strings.Join(pins, "\n"), strings.Join(want, "\n"))
	}
	f.AddReplace("example.com/x", "", "./x", "")
	if _, err := carriedPins(f, ChaosMeshVersion); err == nil {
		t.Error("a directory replacement other than the API module's was carried over")
	}
}
