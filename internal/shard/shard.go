// Package shard splits a suite's scenarios between machines (--shard K/N)
// by their measured wall times, kept in durations.json ("jobconform
// durations" writes it from Ginkgo JSON reports); the suites order their
// specs by the same times (longest first).
package shard

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"slices"
	"sync"
)

//go:embed durations.json
var durationsJSON []byte

// File is where durations.json lives in the checkout.
const File = "internal/shard/durations.json"

// Durations are measured spec wall times: suite description → spec text
// ("[controller] scenario") → seconds.
type Durations map[string]map[string]float64

// Measured is durations.json, read once (a malformed file only loses the
// order and the balance; TestDurationsFile checks it).
var Measured = sync.OnceValue(func() Durations { return Parse(durationsJSON) })

// Parse reads a durations file; nil when it is malformed.
func Parse(data []byte) Durations {
	var d Durations
	_ = json.Unmarshal(data, &d)
	return d
}

// Unmeasured is the expected wall time of a spec durations.json does not
// know (a new scenario, the user's): about a conformance spec's.
const Unmeasured = 60.0

// Of is scenario's expected time in suite (a description) against
// controllers: its measured runs, summed.
func (d Durations) Of(suite, scenario string, controllers []string) float64 {
	total := 0.0
	for _, c := range controllers {
		secs, ok := d[suite]["["+c+"] "+scenario]
		if !ok {
			secs = Unmeasured
		}
		total += secs
	}
	return total
}

// Shard is which of a suite's scenarios (names) shard k of n runs, each
// weighed by its runs against controllers (Split).
func (d Durations) Shard(suite string, scenarios, controllers []string, k, n int) map[string]bool {
	expected := make(map[string]float64, len(scenarios))
	for _, s := range scenarios {
		expected[s] = d.Of(suite, s, controllers)
	}
	return Split(expected, k, n)
}

// Split is which of a suite's scenarios shard k of n runs (n ≤ 1: all). A
// scenario stays whole on one shard — its built-in run is the oracle of the
// others' — and every scenario is on exactly one. Every machine computes
// the same split from the same scenarios and durations: longest expected
// first, each to the shard with the least expected time so far, ties to
// the lower shard and the scenario's name.
func Split(expected map[string]float64, k, n int) map[string]bool {
	keep := map[string]bool{}
	names := make([]string, 0, len(expected))
	for name := range expected {
		names = append(names, name)
	}
	if n <= 1 {
		for _, name := range names {
			keep[name] = true
		}
		return keep
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(expected[b], expected[a]), cmp.Compare(a, b))
	})
	load := make([]float64, n)
	for _, name := range names {
		least := 0
		for i := range load {
			if load[i] < load[least] {
				least = i
			}
		}
		load[least] += expected[name]
		if least == k-1 {
			keep[name] = true
		}
	}
	return keep
}
