package harness

import (
	"reflect"
	"testing"

	"github.com/jobconform/jobconform/internal/shard"
)

func TestDurationsFile(t *testing.T) {
	d := shard.Measured()
	if d == nil {
		t.Fatalf("%s is malformed (rewrite it with jobconform durations)", shard.File)
	}
	for _, suite := range []string{"jobconform conformance", "jobconform chaos"} {
		if len(d[suite]) == 0 {
			t.Errorf("durations.json has no spec of %q: the suite would run in catalog order", suite)
		}
	}
}

func TestPriority(t *testing.T) {
	orig := measured
	t.Cleanup(func() { measured = orig })
	measured = func() Durations { return shard.Parse([]byte(`{"s": {"a": 9.9, "b": 39.5, "c": 20}}`)) }
	got := []int{int(Priority("s", "a")), int(Priority("s", "b")), int(Priority("s", "c")), int(Priority("s", "new"))}
	if want := []int{0, 3, 2, 1000}; !reflect.DeepEqual(got, want) {
		t.Errorf("priorities %v, want %v (10s buckets; never measured first)", got, want)
	}
}
