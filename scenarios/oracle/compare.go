// compare: two observations set side by side, each field a difference
// unless a reason allows it.

package oracle

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Difference is one observable on which two runs disagree.
type Difference struct {
	Field   string `json:"field"`
	BuiltIn string `json:"builtin"`
	Other   string `json:"other"`
	// Allowed is the scenario's reason why the field may differ ("": it
	// may not, and the difference fails the other controller's run).
	Allowed string `json:"allowed,omitempty"`
}

func (d Difference) String() string {
	s := fmt.Sprintf("%s: built-in %s, this controller %s", d.Field, d.BuiltIn, d.Other)
	if d.Allowed != "" {
		s += " (allowed: " + d.Allowed + ")"
	}
	return s
}

// Compare lists where other differs from builtin, field by field; allowed
// maps a field (or a field's prefix ending in ".") to the scenario's reason
// why it may differ. Every difference is listed, the allowed ones marked.
// An allowed event may differ in its count (how often a retry was refused
// depends on timing), never in whether it was recorded at all.
func Compare(builtin, other *Observation, allowed map[string]string) []Difference {
	return CompareWith(builtin, other, allowed, nil)
}

// CompareWith is Compare where the events of mayLose (field, or a prefix
// ending in ".", → the reason) may also be missing from either run
// altogether.
func CompareWith(builtin, other *Observation, allowed, mayLose map[string]string) []Difference {
	peaks := noPeaks
	if builtin.Runs >= 2 {
		peaks = oneWay
	}
	return compare(builtin, other, allowed, mayLose, peaks)
}

// Matches tells whether pattern names field: the field itself, a prefix
// ending in "." ("events."), or a family of fields ("pods.shape" for
// "pods.shape spec.x", "pods.index" for "pods.index 1").
func Matches(pattern, field string) bool {
	return pattern == field || (strings.HasSuffix(pattern, ".") && strings.HasPrefix(field, pattern)) || strings.HasPrefix(field, pattern+" ")
}

// followsPods tells whether field counts the pods a controller deleted:
// where the built-in's own runs created different numbers of pods, how
// many were still running when the Job reached its end, and so deleted,
// is the same race (explore-1-13 under load: pods that end within a
// second of each other, counted in one sync or two, by both controllers).
// A delete request of one kind is such noise only where the other run
// deleted no pod at all: two runs that both deleted pods, with other
// options, differ in how, not in whether.
func followsPods(field string, a, b *Observation) bool {
	if strings.HasPrefix(field, "requests delete pods") {
		return !deletesPods(a) || !deletesPods(b)
	}
	for _, p := range []string{"events.Normal/SuccessfulDelete", "pods.later"} {
		if field == p || strings.HasPrefix(field, p+" ") {
			return true
		}
	}
	return false
}

// deletesPods tells whether o's controller sent any pod delete request.
func deletesPods(o *Observation) bool {
	return slices.ContainsFunc(o.Requests, func(r string) bool { return strings.HasPrefix(r, "delete pods") })
}

// How compare compares the peaks: not at all, the other's above the
// built-in's only, or any difference (two runs of the built-in: Learn).
type peakMode int

const (
	noPeaks peakMode = iota
	oneWay
	bothWays
)

// compare is CompareWith, the peaks compared as peaks says.
func compare(builtin, other *Observation, allowed, mayLose map[string]string, peaks peakMode) []Difference {
	var out []Difference
	add := func(field, a, b string) {
		if a == b {
			return
		}
		d := Difference{Field: field, BuiltIn: a, Other: b}
		for f, why := range allowed {
			if Matches(f, field) {
				d.Allowed = why
			}
		}
		if strings.HasPrefix(field, "events.") && (a == "0" || b == "0") {
			d.Allowed = ""
		}
		if why, ok := lost(mayLose, field); ok {
			d.Allowed = "may be lost: " + why
		}
		if noisy, why := builtin.noise(field, b); noisy && why != "" {
			d.Allowed = why
		} else if noisy {
			d.BuiltIn = a + " (its runs: " + strings.Join(builtin.NoiseValues[field], ", ") + ")"
		} else if why, ok := builtin.createdNoise(other); ok && followsPods(field, builtin, other) {
			d.Allowed = why
		} else if race := builtin.endRace(other); race != "" && followsPods(field, builtin, other) {
			d.Allowed = "noise: which pods the Job's end deleted raced with their ends: " + race
		}
		out = append(out, d)
	}
	for _, k := range union(builtin.Final, other.Final) {
		if other.Scope == "status" && other.Final["deleted"] != "" && k != "deleted" {
			// A dispatched Job deleted mid-run: the manager's last status
			// before the deletion is the mirror's, a status or two behind
			// the copy's; only the deletion compares.
			continue
		}
		add("status."+k, orNone(builtin.Final, k), orNone(other.Final, k))
	}
	add("conditions", strings.Join(builtin.Conditions, " → "), strings.Join(other.Conditions, " → "))
	if peaks != noPeaks && builtin.Peaks != nil && other.Peaks != nil { // nil: kept by a jobconform that did not record them
		if a, b := builtin.Peaks[PeakCompared], other.Peaks[PeakCompared]; b > a || (b < a && peaks == bothWays) {
			add("peak."+PeakCompared, strconv.Itoa(a), strconv.Itoa(b))
		}
		for _, f := range PeaksSaid {
			a, inA := builtin.Peaks[f]
			b, inB := other.Peaks[f]
			if !inA || !inB || !(b > a || (b < a && peaks == bothWays)) {
				continue
			}
			n := len(out)
			add("peak."+f, strconv.Itoa(a), strconv.Itoa(b))
			if peaks == oneWay && len(out) > n && out[n].Allowed == "" {
				out[n].Allowed = peakSaid
			}
		}
	}
	if builtin.Scope == "status" || other.Scope == "status" {
		return out // a dispatched Job: its pods and events are not the controller's
	}
	if peaks == oneWay && WhyUntimed(builtin, other) == "" { // a built-in that ran twice, against one run
		delays(builtin.Clocks, other.Clocks[0], add)
	}
	if builtin.Times != nil && other.Times != nil { // nil: kept by a jobconform that did not record them
		for _, k := range union(builtin.Times, other.Times) {
			add("times."+k, orNone(builtin.Times, k), orNone(other.Times, k))
		}
	}
	if builtin.Job != "" && other.Job != "" { // "": kept by a jobconform that did not record it
		x, y := flatten(builtin.Job), flatten(other.Job)
		for _, p := range diffPaths(x, y) {
			add("job."+p, orNone(x, p), orNone(y, p))
		}
	}
	for _, k := range union(builtin.Events, other.Events) {
		add("events."+k, strconv.Itoa(builtin.Events[k]), strconv.Itoa(other.Events[k]))
	}
	if builtin.Messages != nil && other.Messages != nil { // nil: kept by a jobconform that did not record them
		for _, k := range union(builtin.Messages, other.Messages) {
			a, inA := builtin.Messages[k]
			b, inB := other.Messages[k]
			if inA && inB { // borne by one run only: its condition or event differs, said there
				add("messages."+k, a, b)
			}
		}
	}
	if builtin.Requests != nil && other.Requests != nil { // nil: not read
		for _, k := range union(asSet(builtin.Requests), asSet(other.Requests)) {
			n := len(out)
			add("requests "+k, sent(builtin.Requests, k), sent(other.Requests, k))
			// A run whose every event may be lost may have created none.
			if why, ok := lost(mayLose, "events."); ok && len(out) > n && out[n].Allowed == "" && strings.HasPrefix(k, "create events") {
				out[n].Allowed = "may be lost: " + why
			}
		}
	}
	if builtin.Unread != "" || other.Unread != "" {
		out = append(out, Difference{Field: "requests (not read)", BuiltIn: cmp.Or(builtin.Unread, "read"), Other: cmp.Or(other.Unread, "read"),
			Allowed: "a run's requests could not all be read: not compared"})
	}
	// A count a gap in the smaller one's recording may have cut short.
	count := func(field string, a, b int) {
		n := len(out)
		add(field, strconv.Itoa(a), strconv.Itoa(b))
		if len(out) > n && out[n].Allowed == "" && ((a < b && builtin.Gap) || (b < a && other.Gap)) {
			out[n].Allowed = gapShort
		}
	}
	for _, k := range union(builtin.PerIndex, other.PerIndex) {
		count("pods.index "+k, builtin.PerIndex[k], other.PerIndex[k])
	}
	if builtin.Counters != nil && other.Counters != nil {
		for _, k := range union(builtin.Counters, other.Counters) {
			add("counters."+k, strconv.FormatFloat(builtin.Counters[k], 'f', -1, 64), strconv.FormatFloat(other.Counters[k], 'f', -1, 64))
		}
	}
	count("pods.created", total(builtin.Pods)+builtin.Late, total(other.Pods)+other.Late)
	if builtin.Later != nil && other.Later != nil { // nil: kept by a jobconform that did not record it
		for _, d := range shapeDiffs(builtin.Later, other.Later) {
			n := len(out)
			add("pods.later "+d.path, d.a, d.b)
			if len(out) > n && out[n].Allowed == "" && (builtin.Gap || other.Gap || builtin.Late > 0 || other.Late > 0) {
				out[n].Allowed = gapLater
			}
		}
	}
	onlyA, onlyB := unmatched(builtin.Pods, other.Pods)
	seen := func(only, late int, gap bool) bool { return only <= late || gap }
	if (builtin.Late > 0 || other.Late > 0 || builtin.Gap || other.Gap) && seen(onlyA, other.Late, other.Gap) && seen(onlyB, builtin.Late, builtin.Gap) {
		// Every pod seen as created in one run and not the other may be
		// one the other saw only late, or never: said, not held against it.
		if onlyA+onlyB > 0 {
			out = append(out, Difference{Field: "pods.shape (seen late or not at all)", BuiltIn: fmt.Sprintf("%d seen late, gap %t", builtin.Late, builtin.Gap), Other: fmt.Sprintf("%d seen late, gap %t", other.Late, other.Gap),
				Allowed: "pods first seen in a gap of the recording (the watch broken by a restart) were not seen as created, and pods created and gone inside one not at all"})
		}
		return out
	}
	for _, d := range shapeDiffs(builtin.Pods, other.Pods) {
		add("pods.shape "+d.path, d.a, d.b)
	}
	return out
}

// sent says whether request kind k is among those a run sent.
func sent(kinds []string, k string) string {
	if slices.Contains(kinds, k) {
		return "sent"
	}
	return "not sent"
}

// asSet is a list's members as a map's keys (for union).
func asSet(list []string) map[string]bool {
	out := make(map[string]bool, len(list))
	for _, k := range list {
		out[k] = true
	}
	return out
}

// gapLater is why pods as last seen may differ where a recording had a gap.
const gapLater = "a recording had a gap (a watch broken by a restart): a pod's versions inside it, or a pod seen only late, were never seen"

// gapShort is why a run's pod count may fall short of the other's.
const gapShort = "the run with fewer had a gap in its recording (a watch broken by a restart): a pod created and gone inside it, or not yet relisted at its end, was never seen"

// Failing keeps the differences no reason allows.
func Failing(ds []Difference) []Difference {
	return slices.DeleteFunc(slices.Clone(ds), func(d Difference) bool { return d.Allowed != "" })
}

func union[V any](a, b map[string]V) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return slices.Sorted(maps.Keys(keys))
}

func orNone(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return v
	}
	return "<none>"
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// lost is mayLose's reason for field: its own key first, else the longest
// prefix ending in "." (so the verdict names the narrowest reason).
func lost(mayLose map[string]string, field string) (string, bool) {
	if why, ok := mayLose[field]; ok {
		return why, true
	}
	best := ""
	for f := range mayLose {
		if strings.HasSuffix(f, ".") && strings.HasPrefix(field, f) && len(f) > len(best) {
			best = f
		}
	}
	return mayLose[best], best != ""
}
