package harness

import (
	"encoding/json"
	"reflect"
	"sync"
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

func TestPriority(t *testing.T) {
	orig, origMeasured := durationsJSON, measured
	t.Cleanup(func() { durationsJSON, measured = orig, origMeasured })
	durationsJSON = []byte(`{"s": {"a": 9.9, "b": 39.5, "c": 20}}`)
	measured = sync.OnceValue(MeasuredDurations)
	got := []int{int(Priority("s", "a")), int(Priority("s", "b")), int(Priority("s", "c")), int(Priority("s", "new"))}
	if want := []int{0, 3, 2, 1000}; !reflect.DeepEqual(got, want) {
		t.Errorf("priorities %v, want %v (10s buckets; never measured first)", got, want)
	}
}
