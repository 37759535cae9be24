package harness

import (
	_ "embed"
	"fmt"

	"github.com/onsi/ginkgo/v2"

	"github.com/jobconform/jobconform/internal/shard"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

// Durations are measured spec wall times (shard.Durations).
type Durations = shard.Durations

// measured is durations.json read once: Priority is asked for every spec.
var measured = shard.Measured

// Priority is the Ginkgo SpecPriority of a spec of suite: its measured wall
// time in buckets of 10s, so the longest specs are handed to the parallel
// processes first (run with --randomize-all, which the Makefile and
// jobconform run pass: without it Ginkgo orders top-level containers only).
// A long spec handed out last keeps every other process waiting for it; the
// order within a bucket stays random. Specs never measured (the user's
// scenarios, new ones) come first: they may be long. Only the order changes,
// never what runs.
func Priority(suite, text string) ginkgo.SpecPriority {
	secs, ok := measured()[suite][text]
	if !ok {
		return ginkgo.SpecPriority(1000)
	}
	return ginkgo.SpecPriority(int(secs / 10))
}

// BuiltInFirst is the priority of c's specs in a suite whose specs are not
// ordered by their measured time (the drills, the scale suite): the
// built-in's first, so that every other controller's run finds the
// built-in's kept, its oracle, rather than making one of its own.
func BuiltInFirst(c runner.Controller) ginkgo.SpecPriority {
	if c.Name == runner.BuiltIn.Name {
		return 1
	}
	return 0
}

// OraclePriority is the priority of the built-in's spec p: above every
// other controller's spec of the same scenario, whose run waits for the
// built-in's as its oracle (Oracle.Judge), so Ginkgo hands it out first.
func OraclePriority(suite string, p Pair, cs []runner.Controller) ginkgo.SpecPriority {
	top := Priority(suite, p.Text())
	for _, c := range cs {
		if c.Name != p.Controller.Name {
			top = max(top, Priority(suite, Pair{p.Scenario, c}.Text())+1)
		}
	}
	return top
}

// Pair is one spec of a controller suite: a scenario against a controller.
type Pair struct {
	Scenario   *scenarios.Scenario
	Controller runner.Controller
}

// Text is the spec's text: "[controller] scenario".
func (p Pair) Text() string { return fmt.Sprintf("[%s] %s", p.Controller.Name, p.Scenario.Name) }

// Pairs is every scenario against every controller, scenario by scenario.
func Pairs(ss []*scenarios.Scenario, cs []runner.Controller) []Pair {
	var out []Pair
	for _, s := range ss {
		for _, c := range cs {
			out = append(out, Pair{s, c})
		}
	}
	return out
}
