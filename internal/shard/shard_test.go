package shard

import (
	"fmt"
	"slices"
	"testing"
)

// Every scenario is in exactly one of N shards, whatever N, so the shards'
// union is the whole; each shard's expected time is within the longest
// scenario of the others'; and the split does not depend on the order the
// scenarios come in.
func TestSplitPartitionsEvenly(t *testing.T) {
	d := Measured()
	for _, suite := range []string{"jobconform conformance", "jobconform chaos"} {
		var names []string
		longest := 0.0
		for text := range d[suite] {
			var ctl, name string
			if _, err := fmt.Sscanf(text, "[%s %s", &ctl, &name); err == nil && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		names = append(names, "a-scenario-never-measured")
		ctls := []string{"builtin", "reference"}
		for _, s := range names {
			longest = max(longest, d.Of(suite, s, ctls))
		}
		for _, n := range []int{1, 2, 4, 7} {
			seen := map[string]int{}
			var loads []float64
			for k := 1; k <= n; k++ {
				keep := d.Shard(suite, names, ctls, k, n)
				reversed := slices.Clone(names)
				slices.Reverse(reversed)
				if again := d.Shard(suite, reversed, ctls, k, n); fmt.Sprint(again) != fmt.Sprint(keep) {
					t.Errorf("%s shard %d/%d depends on the scenarios' order", suite, k, n)
				}
				load := 0.0
				for s := range keep {
					seen[s]++
					load += d.Of(suite, s, ctls)
				}
				loads = append(loads, load)
			}
			for _, s := range names {
				if seen[s] != 1 {
					t.Errorf("%s, %d shards: %s is in %d of them, want 1", suite, n, s, seen[s])
				}
			}
			if spread := slices.Max(loads) - slices.Min(loads); spread > longest {
				t.Errorf("%s, %d shards: expected times %v differ by %.0fs, more than the longest scenario (%.0fs)", suite, n, loads, spread, longest)
			}
		}
		if len(names) < 5 {
			t.Errorf("%s: only %d scenarios measured", suite, len(names))
		}
	}
}

func TestDurationsFile(t *testing.T) {
	if Measured() == nil {
		t.Fatalf("%s is malformed (rewrite it with jobconform durations)", File)
	}
}
