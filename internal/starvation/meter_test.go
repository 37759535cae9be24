package starvation

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// recorded reads samples a Meter took on this project's two-core machine
// beside a local cluster: idle, and beside 32 spinning processes.
func recorded(t *testing.T, name string) []Sample {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var s []Sample
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRecordedReadings(t *testing.T) {
	idle := Summarize(recorded(t, "idle-samples.json"))
	if idle.Red() || idle.Note() != "" {
		t.Errorf("idle machine read red: %s (%s)", idle, idle.Note())
	}
	if idle.Samples < 20 || idle.API <= 0 {
		t.Errorf("idle reading %+v: want its samples and probes", idle)
	}
	starved := Summarize(recorded(t, "starved-samples.json"))
	if !starved.Red() {
		t.Fatalf("machine beside 32 hogs on 2 CPUs read %s: not red", starved)
	}
	if n := starved.Note(); !strings.Contains(n, "run queue") || !strings.Contains(n, "starved") {
		t.Errorf("note %q does not name the run queue", n)
	}
}

func TestRedCauses(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Reading
		want string
	}{
		{"slow apiserver", Reading{Samples: 3, API: 2.5}, "apiserver answered a GET in 2.5s"},
		{"silent apiserver", Reading{Samples: 10, APIFailed: 3}, "did not answer 3 probes"},
		{"stolen", Reading{Samples: 3, Steal: 0.4}, "40% of CPU time stolen"},
		{"late status", Reading{StatusLag: 7}, "reached its status 7.0s late"},
		{"nothing", Reading{Samples: 3, RunQueue: 1, API: 0.05}, ""},
	} {
		if got := tc.r.Note(); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: note %q, want it to say %q", tc.name, got, tc.want)
		}
	}
}

func TestMeterSamplesAndStops(t *testing.T) {
	probes := 0
	m := Start(context.Background(), 10*time.Millisecond, func(context.Context) error { probes++; return nil })
	time.Sleep(100 * time.Millisecond)
	m.Stop()
	s := m.Samples()
	if len(s) < 3 {
		t.Fatalf("%d samples in 100ms at 10ms", len(s))
	}
	n := len(s)
	time.Sleep(30 * time.Millisecond)
	if len(m.Samples()) != n {
		t.Error("the meter sampled after Stop")
	}
	r := Summarize(s)
	if r.APIFailed != 0 || probes == 0 || r.RunQueueMax <= 0 {
		t.Errorf("reading %+v after %d probes: want answered probes and a run queue", r, probes)
	}
}
