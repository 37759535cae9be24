package harness

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestDurationsFile(t *testing.T) {
	var d Durations
	if err := json.Unmarshal(durationsJSON, &d); err != nil {
		t.Fatalf("durations.json: %v (rewrite it with jobconform durations)", err)
	}
	for _, suite := range []string{"jobconform conformance", "jobconform chaos"} {
		if len(d[suite]) == 0 {
			t.Errorf("durations.json has no spec of %q: the suite would run in catalog order", suite)
		}
	}
}

func TestLongestFirst(t *testing.T) {
	orig := durationsJSON
	t.Cleanup(func() { durationsJSON = orig })
	durationsJSON = []byte(`{"s": {"a": 10, "b": 30, "c": 20}}`)
	got := LongestFirst("s", []string{"a", "new1", "b", "c", "new2"}, func(s string) string { return s })
	want := []string{"new1", "new2", "b", "c", "a"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LongestFirst = %v, want %v (never measured first, in their order; then longest first)", got, want)
	}
	if got := LongestFirst("other suite", []string{"b", "a"}, func(s string) string { return s }); !reflect.DeepEqual(got, []string{"b", "a"}) {
		t.Errorf("a suite never measured keeps its order, got %v", got)
	}
}
