package harness

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

// durations.json holds each spec's wall time (seconds) in a measured run of
// the suites, by suite description and spec text; "jobconform durations"
// writes it from Ginkgo JSON reports.
//
//go:embed durations.json
var durationsJSON []byte

// Durations are measured spec wall times: suite description → spec text → seconds.
type Durations map[string]map[string]float64

// MeasuredDurations reads the embedded durations.json.
func MeasuredDurations() Durations {
	var d Durations
	_ = json.Unmarshal(durationsJSON, &d) // a malformed file only loses the order; TestDurationsFile checks it
	return d
}

// LongestFirst orders items, specs to be defined, by their measured wall
// time, longest first. Ginkgo hands specs to parallel processes in the order
// they are defined, so a long spec defined last keeps every other process
// waiting for it at the end (longest-first is the classic greedy schedule).
// Specs never measured (the user's scenarios, new ones) keep their order and
// go first: they may be long. Only the order changes, never what runs.
func LongestFirst[T any](suite string, items []T, text func(T) string) []T {
	seconds := MeasuredDurations()[suite]
	out := append([]T(nil), items...)
	sort.SliceStable(out, func(i, j int) bool {
		a, aok := seconds[text(out[i])]
		b, bok := seconds[text(out[j])]
		if aok != bok {
			return !aok
		}
		return a > b
	})
	return out
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
