package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// parts are the timed parts of a long command (make test's builds, go
// test, each suite run), printed at its end so that every CI log shows
// where the time went and a part that grew stands out (issue #57).
type parts struct {
	mu    sync.Mutex
	start time.Time
	rows  []part
}

type part struct {
	what   string
	stream string // "" for the parts run one after another; front, beside
	took   time.Duration
}

func newParts() *parts { return &parts{start: time.Now()} }

// time runs f as the part what, and records how long it took.
func (ps *parts) time(what string, f func() error) error {
	start := time.Now()
	err := f()
	ps.add(what, "", time.Since(start))
	return err
}

// add records a part; a nil parts records nothing (jobconform run).
func (ps *parts) add(what, stream string, took time.Duration) {
	if ps == nil {
		return
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.rows = append(ps.rows, part{what: what, stream: stream, took: took})
}

// print writes the parts in minutes, the whole, and whether the whole kept
// within budget: a warning, not a failure (a slow machine is no verdict).
func (ps *parts) print(w io.Writer, name string, budget time.Duration) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	total := time.Since(ps.start)
	fmt.Fprintf(w, "\n%s: where the time went (minutes; the suites run in two streams side by side)\n", name)
	for _, r := range ps.rows {
		where := ""
		if r.stream != "" {
			where = " [" + r.stream + "]"
		}
		fmt.Fprintf(w, "  %6.1f  %s%s\n", r.took.Minutes(), r.what, where)
	}
	fmt.Fprintf(w, "  %6.1f  in all (budget %.0f)\n", total.Minutes(), budget.Minutes())
	if total > budget {
		fmt.Fprintf(w, "%s: over its budget of %.0f minutes by %.1f: see docs/performance.md for each part's usual time\n", name, budget.Minutes(), (total - budget).Minutes())
	}
}
