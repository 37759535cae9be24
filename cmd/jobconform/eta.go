package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jobconform/jobconform/internal/options"
)

// Time left (issue #71): each suite run's wall time on this machine is kept
// in the cache directory from one run to the next, and a stream's progress
// line adds up the ones still to come. A machine's own past is the best
// guess of its future here: the same suites take twice as long on one
// runner as on another (docs/performance.md).

// suiteTimesFile is where the wall times are kept, in the cache directory.
const suiteTimesFile = "suite-times.json"

// suiteTimes are the last wall times of suite runs, by jobKey.
type suiteTimes struct {
	mu    sync.Mutex
	path  string               // "": not kept (no cache directory)
	Times map[string]suiteTime `json:"times"`
}

type suiteTime struct {
	Seconds float64   `json:"seconds"`
	When    time.Time `json:"when"`
}

// jobKey names what a job runs, as far as its time goes: the suite, the
// release, nodes, gates and controllers (job.String), and the selection.
func jobKey(j job) string {
	k := j.String()
	for _, f := range []struct{ name, v string }{
		{"focus", j.o.Run.Focus}, {"labels", j.o.Run.LabelFilter}, {"shard", j.o.Run.Shard}, {"scale", j.o.Scale},
		{"scenarios", strings.Join(j.o.ScenarioDirs, ",")},
	} {
		if f.v != "" {
			k += " " + f.name + "=" + f.v
		}
	}
	return k
}

// loadSuiteTimes reads the kept times (none when the file is missing or
// unreadable: the progress lines then say no earlier run was measured).
func loadSuiteTimes() *suiteTimes {
	t := &suiteTimes{Times: map[string]suiteTime{}}
	dir, err := options.CacheDir()
	if err != nil {
		return t
	}
	t.path = filepath.Join(dir, suiteTimesFile)
	if data, err := os.ReadFile(t.path); err == nil {
		_ = json.Unmarshal(data, t)
		if t.Times == nil {
			t.Times = map[string]suiteTime{}
		}
	}
	return t
}

// record keeps j's wall time and writes the file (best effort: a time not
// kept only makes the next estimate poorer).
func (t *suiteTimes) record(j job, took time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.Times[jobKey(j)] = suiteTime{Seconds: took.Seconds(), When: time.Now().UTC()}
	if t.path == "" {
		return
	}
	data, err := json.MarshalIndent(t, "", " ")
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o755); err == nil {
		tmp := t.path + ".tmp"
		if os.WriteFile(tmp, data, 0o644) == nil {
			_ = os.Rename(tmp, t.path)
		}
	}
}

// left says how long jobs (a stream's, from the one starting now) took
// when last run here: "about 21 min left in this stream", with how many of
// them were never measured; "" when none was.
func (t *suiteTimes) left(jobs []job) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var secs float64
	unmeasured := 0
	for _, j := range jobs {
		if m, ok := t.Times[jobKey(j)]; ok {
			secs += m.Seconds
		} else {
			unmeasured++
		}
	}
	switch {
	case unmeasured == len(jobs):
		return "time left unknown: no earlier run of these suites measured on this machine"
	case unmeasured > 0:
		return fmt.Sprintf("about %s left in this stream, and %d suite(s) never measured here", minutes(secs), unmeasured)
	}
	return fmt.Sprintf("about %s left in this stream (as its suites last took here)", minutes(secs))
}

// minutes is a duration in whole minutes, "under a minute" below one.
func minutes(secs float64) string {
	if secs < 60 {
		return "under a minute"
	}
	return fmt.Sprintf("%.0f min", secs/60)
}
