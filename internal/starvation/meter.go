// Package starvation is the meter a timing verdict is read against: while
// a scenario runs it samples how starved the machine is — the CPU run queue
// and steal time from /proc, and how long the apiserver takes to answer a
// cheap request — so that a verdict of "too late" can say whether the
// machine, not only the controller, was slow then. It never turns a
// verdict by the clock into a pass: it adds what a reader needs to tell the
// two apart, and a suite runs a run that failed on a red reading once more
// (suites/internal/harness), whose verdict stands. A proof by the controller's own acts (invariants' cause lines)
// holds only up to the load it was measured at: past it the proof is not
// used (Between), and the verdict says so.
package starvation

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/procfs"
)

// Thresholds of a red reading: beyond the load at which make soak measured
// no false failure (docs/checks.md). Beside 2 spinning processes the
// conformance and chaos suites read a mean run queue of 5.6–6.1 per CPU
// (99th percentile of the runs 8.3–9.3), GETs answered within 0.2 s (90th
// percentile) and pod statuses at most 1.6 s late, and all 198 specs of a
// round passed: red says the machine was more starved than that.
var (
	// RedRunQueue: runnable threads per CPU, averaged over the run.
	RedRunQueue = 10.0
	// RedAPILatency: the slowest answer of the apiserver to a GET.
	RedAPILatency = time.Second
	// RedSteal: the share of CPU time the hypervisor took from this guest.
	RedSteal = 0.2
	// RedStatusLag: how late a pod's end reached its status, as recorded
	// (finishedAt has a resolution of a second).
	RedStatusLag = 5 * time.Second
)

// Sample is one reading of the machine.
type Sample struct {
	Time time.Time
	// RunQueue is the number of runnable threads per CPU (procs_running).
	RunQueue float64
	// Steal is the share of CPU time stolen since the previous sample.
	Steal float64
	// Probed: the apiserver was asked in this sample; API is how long it
	// took to answer (negative: it did not).
	Probed bool
	API    time.Duration
}

// Reading sums up the samples of a stretch of time.
type Reading struct {
	Samples int `json:"samples"`
	// RunQueue is the mean and RunQueueMax the highest run queue per CPU.
	RunQueue    float64 `json:"runQueue"`
	RunQueueMax float64 `json:"runQueueMax"`
	// Steal is the highest share of stolen CPU time.
	Steal float64 `json:"steal"`
	// API is the slowest answer of the apiserver (seconds), APIFailed how
	// many probes got none.
	API       float64 `json:"apiSeconds"`
	APIFailed int     `json:"apiFailed,omitempty"`
	// StatusLag is the longest a pod's end took to reach its status
	// (seconds), read from the run's recording (StatusLag); 0: none ended.
	StatusLag float64 `json:"statusLagSeconds,omitempty"`
	// EndsRewritten counts containers' ends written again with another
	// finishedAt (a node simulator playing a stage twice; a kubelet writes
	// a run's end once). Not starvation: the verdicts read the first end.
	EndsRewritten int `json:"endsRewritten,omitempty"`
}

// Red tells whether the machine was starved past the thresholds.
func (r Reading) Red() bool {
	return len(r.causes()) > 0
}

func (r Reading) causes() []string {
	var out []string
	if r.Samples > 0 && r.RunQueue >= RedRunQueue {
		out = append(out, fmt.Sprintf("run queue %.1f per CPU (peak %.1f)", r.RunQueue, r.RunQueueMax))
	}
	if r.API >= RedAPILatency.Seconds() {
		out = append(out, fmt.Sprintf("apiserver answered a GET in %.1fs", r.API))
	}
	if r.APIFailed >= 2 {
		out = append(out, fmt.Sprintf("apiserver did not answer %d probes", r.APIFailed))
	}
	if r.Steal >= RedSteal {
		out = append(out, fmt.Sprintf("%.0f%% of CPU time stolen", 100*r.Steal))
	}
	if r.StatusLag >= RedStatusLag.Seconds() {
		out = append(out, fmt.Sprintf("a pod's end reached its status %.1fs late", r.StatusLag))
	}
	return out
}

// Why says why the reading is red, in a line ("" when it is not).
func (r Reading) Why() string { return strings.Join(r.causes(), ", ") }

// Between sums up the samples taken from an interval before from until to.
func Between(samples []Sample, from, to time.Time, interval time.Duration) Reading {
	var in []Sample
	for _, s := range samples {
		if !s.Time.Before(from.Add(-interval)) && !s.Time.After(to) {
			in = append(in, s)
		}
	}
	return Summarize(in)
}

// Note is what a late verdict says when the meter was red ("" when not).
func (r Reading) Note() string {
	c := r.causes()
	if len(c) == 0 {
		return ""
	}
	return "the machine was starved during this run (" + strings.Join(c, ", ") + "): a slow machine, not necessarily a slow controller"
}

// String is the reading in a line.
func (r Reading) String() string {
	s := fmt.Sprintf("run queue %.1f/CPU (peak %.1f), apiserver ≤%.2fs, steal %.0f%%, status lag %.1fs",
		r.RunQueue, r.RunQueueMax, r.API, 100*r.Steal, r.StatusLag)
	if r.EndsRewritten > 0 {
		s += fmt.Sprintf(", %d container ends written twice", r.EndsRewritten)
	}
	return s
}

// Meter samples the machine until stopped.
type Meter struct {
	mu      sync.Mutex
	samples []Sample
	stop    context.CancelFunc
	done    chan struct{}
}

// maxSamples bounds a meter's memory (two hours at one a second).
const maxSamples = 7200

// Start samples every interval until Stop; probe (nil: none) is a cheap
// request to the apiserver, timed every other sample.
func Start(ctx context.Context, interval time.Duration, probe func(context.Context) error) *Meter {
	ctx, cancel := context.WithCancel(ctx)
	m := &Meter{stop: cancel, done: make(chan struct{})}
	fs, fsErr := procfs.NewDefaultFS()
	go func() {
		defer close(m.done)
		var prev *procfs.CPUStat
		t := time.NewTicker(interval)
		defer t.Stop()
		for n := 0; ; n++ {
			s := Sample{Time: time.Now()}
			if fsErr == nil {
				if st, err := fs.Stat(); err == nil {
					s.RunQueue = float64(st.ProcessesRunning) / float64(runtime.NumCPU())
					if prev != nil {
						s.Steal = steal(*prev, st.CPUTotal)
					}
					cur := st.CPUTotal
					prev = &cur
				}
			}
			if probe != nil && n%2 == 0 {
				pctx, pcancel := context.WithTimeout(ctx, 10*time.Second)
				began := time.Now()
				s.Probed = true
				if err := probe(pctx); err != nil {
					s.API = -1
				} else {
					s.API = time.Since(began)
				}
				pcancel()
				if ctx.Err() != nil {
					return // stopped mid-probe: no answer to count
				}
			}
			m.add(s)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return m
}

func steal(prev, cur procfs.CPUStat) float64 {
	total := func(c procfs.CPUStat) float64 {
		return c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
	}
	d := total(cur) - total(prev)
	if d <= 0 {
		return 0
	}
	return (cur.Steal - prev.Steal) / d
}

func (m *Meter) add(s Sample) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.samples) == maxSamples {
		m.samples = slices.Delete(m.samples, 0, 1)
	}
	m.samples = append(m.samples, s)
}

// Stop ends the sampling.
func (m *Meter) Stop() {
	if m == nil {
		return
	}
	m.stop()
	<-m.done
}

// Samples are the readings taken so far.
func (m *Meter) Samples() []Sample {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.samples)
}

// Summarize sums up samples.
func Summarize(samples []Sample) Reading {
	var r Reading
	sum := 0.0
	for _, s := range samples {
		r.Samples++
		sum += s.RunQueue
		r.RunQueueMax = max(r.RunQueueMax, s.RunQueue)
		r.Steal = max(r.Steal, s.Steal)
		switch {
		case !s.Probed:
		case s.API >= 0:
			r.API = max(r.API, s.API.Seconds())
		default:
			r.APIFailed++
		}
	}
	if r.Samples > 0 {
		r.RunQueue = sum / float64(r.Samples)
	}
	return r
}
