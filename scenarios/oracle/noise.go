package oracle

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Noise: what the built-in's own runs of a scenario differ in, learned
// from them (Learn) and bounded by the values they showed (issue #70): a
// noisy field excuses another controller's value only where the
// built-in's runs showed it — for numbers, anywhere between their lowest
// and highest — never whatever it is.

// Learn is first with what differs from second, another run of the
// built-in of the same scenario, as its noise (issue #55: noise learned,
// not guessed), each noisy field with the values the runs showed. Two
// runs that end apart — other conditions, or one that broke a promise the
// other kept — are racy: no oracle at all.
func Learn(first, second *Observation) *Observation {
	out := *first
	out.Runs = max(first.Runs, 1) + max(second.Runs, 1)
	out.EndRace = cmp.Or(first.EndRace, second.EndRace)
	out.Noise = maps.Clone(first.Noise) // a third run adds to two runs' noise
	if out.Noise == nil {
		out.Noise = map[string]string{}
	}
	out.NoiseValues = maps.Clone(first.NoiseValues)
	if out.NoiseValues == nil {
		out.NoiseValues = map[string][]string{}
	}
	for _, d := range compare(first, second, nil, nil, bothWays) {
		a := strings.TrimSuffix(d.BuiltIn, noiseSuffix(first, d.Field))
		if _, ok := out.Noise[d.Field]; !ok {
			out.Noise[d.Field] = fmt.Sprintf("run 1 %s, run 2 %s", a, d.Other)
		}
		vals := append(slices.Clone(out.NoiseValues[d.Field]), a, d.Other)
		slices.Sort(vals)
		out.NoiseValues[d.Field] = slices.Compact(vals)
		if d.Field == "conditions" || d.Field == "status.conditions" || d.Field == "status.deleted" {
			out.Racy = cmp.Or(out.Racy, fmt.Sprintf("the built-in's two runs ended apart: %s", d))
		}
	}
	if (len(first.Failed) == 0) != (len(second.Failed) == 0) {
		// A known bug that shows in one run of two, and did not cut its run
		// short, is the bug's own nondeterminism: its fields are excused
		// by it (harness), the rest is noise as above.
		broken := first
		if len(second.Failed) > 0 {
			broken = second
		}
		if len(broken.Bugs) == 0 || broken.Cut != "" {
			out.Racy = cmp.Or(out.Racy, fmt.Sprintf("one of the built-in's two runs broke a promise, the other did not (%s)", strings.Join(append(first.Failed, second.Failed...), "; ")))
		}
	}
	out.Cut = cmp.Or(first.Cut, second.Cut)
	out.Clocks, out.Untimed = nil, cmp.Or(first.Untimed, second.Untimed)
	if first.Clocks != nil && second.Clocks != nil {
		out.Clocks = slices.Concat(first.Clocks, second.Clocks)
	}
	out.Failed = append(slices.Clone(first.Failed), second.Failed...)
	out.Bugs = nil
	if explained(first) && explained(second) {
		out.Bugs = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(first.Bugs), second.Bugs...))))
	}
	return &out
}

// noiseSuffix is what compare appended to the built-in's value of a
// field of first's noise whose value lay outside it (not to be learned
// as a value).
func noiseSuffix(first *Observation, field string) string {
	if vals, ok := first.NoiseValues[field]; ok {
		return " (its runs: " + strings.Join(vals, ", ") + ")"
	}
	return ""
}

// noise tells whether field is noisy in o's runs and, when v lies within
// the values they showed, why it is excused ("" when v lies outside).
func (o *Observation) noise(field, v string) (noisy bool, why string) {
	n, ok := o.Noise[field]
	if !ok {
		return false, ""
	}
	vals, known := o.NoiseValues[field]
	if !known || !amongValues(vals, v) {
		return true, ""
	}
	return true, "noise: the built-in's own runs differ here (" + n + ")"
}

// createdNoise excuses the deletions that follow from how many pods ran
// (followsPods) where the built-in's runs created different numbers of
// pods and other created a number within them.
func (o *Observation) createdNoise(other *Observation) (string, bool) {
	noisy, why := o.noise("pods.created", strconv.Itoa(total(other.Pods)+other.Late))
	if !noisy || why == "" {
		return "", false
	}
	return "noise: the built-in's own runs created different numbers of pods (" + o.Noise["pods.created"] + "), this controller a number among them, and which pods are left to delete at the end follows from which ran", true
}

// endRace is the race between pods' ends and the Job's end that excuses
// which pods the end deleted: learned from the built-in's runs alone where
// it ran twice or more (a controller's own race is no excuse); against a
// single run of the built-in, either run's, as that run cannot show it.
func (o *Observation) endRace(other *Observation) string {
	if o.Runs >= 2 {
		return o.EndRace
	}
	if o.EndRace == "" && other.EndRace != "" {
		return other.EndRace + " (in this controller's run; the built-in ran once, so its own spread is unknown: --oracle-twice learns it)"
	}
	return o.EndRace
}

// amongValues tells whether v is among vals or, when all are numbers, between
// the lowest and the highest.
func amongValues(vals []string, v string) bool {
	if slices.Contains(vals, v) {
		return true
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || len(vals) == 0 {
		return false
	}
	lo, hi := 0.0, 0.0
	for i, s := range vals {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return false
		}
		if i == 0 || f < lo {
			lo = f
		}
		if i == 0 || f > hi {
			hi = f
		}
	}
	return x >= lo && x <= hi
}

// OneRunDeletes says why a difference in field of one of a controller's
// two runs is the race of which pods the Job's end deleted (field counts
// the deleted pods: followsPods), or "" when field is another: the
// confirmation of a difference (harness) excuses it in one run of two,
// never in both. Measured in make test's rehearsal of 2026-12-07:
// explore-1-21's two pods, failing 20 ms apart under load, left one pod to
// delete in the reference's first run and in none of the built-in's three
// or the reference's second. Every other field fails in either run.
func OneRunDeletes(builtin, run *Observation, field string) string {
	if run == nil || !followsPods(field, builtin, run) {
		return ""
	}
	why := "which pods the Job's end deleted, in one of this controller's two runs and not the other"
	if run.EndRace != "" {
		why += " (" + run.EndRace + ")"
	}
	return why
}
