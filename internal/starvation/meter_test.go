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

// Between reads only the samples of its stretch (and the one just before):
// a starved minute elsewhere in the run does not void a proof here.
func TestBetween(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var samples []Sample
	for i := range 60 {
		q := 1.0
		if i >= 30 {
			q = 20 // the second half starved
		}
		samples = append(samples, Sample{Time: t0.Add(time.Duration(i) * time.Second), RunQueue: q})
	}
	if why := Between(samples, t0.Add(10*time.Second), t0.Add(16*time.Second), time.Second).Why(); why != "" {
		t.Errorf("a calm stretch read starved: %s", why)
	}
	if why := Between(samples, t0.Add(40*time.Second), t0.Add(46*time.Second), time.Second).Why(); !strings.Contains(why, "run queue 20.0 per CPU") {
		t.Errorf("a starved stretch read %q", why)
	}
	if r := Between(samples, t0.Add(10*time.Second), t0.Add(16*time.Second), time.Second); r.Samples != 8 {
		t.Errorf("read %d samples from 0:10 to 0:16 (and the one before), want 8", r.Samples)
	}
}
