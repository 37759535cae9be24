package oracle

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobconform/jobconform/internal/timeline"
)

// Timing (issue #55: "timing is compared too, within the noise the
// built-in's own runs show"). A run's Clock is when each thing happened, in
// seconds from the Job's first sighting: what a controller acts on — the
// Job made or its spec changed ("job 1 change 2"), a pod of the Job
// deleted (asked for, or removed: "job 1 index 0 deleted #1"), succeeding
// or failing ("job 1 failed #2": the Job's second pod to fail), a pod's
// labels or annotations edited — and what it does that shows — a pod of
// the Job appearing, made or adopted ("job 1 index 0 pod 2 created"), a
// condition first shown ("job 1 condition Complete=True/CompletionsReached").
// Pods are named by their place, not their name: the K-th pod of an index,
// or of the Job.
//
// Each effect is compared by its delay after its cause: the latest thing
// before it, in the built-in's run, that a controller acts on, and the
// other run's delay after that same thing. Absolute moments are not: one
// late pod within bounds shifts everything after it. The other's delay
// must lie within the built-in's runs' delays widened by Slack and a
// tenth of the delay. Measured (96 explore cases of seed 7, v1.37.1, kwok,
// 2026-12-03): 438 delays, the built-in's two runs at most 1.1 s apart
// (upstream's 1 s batch of pod events), the reference at most 1.1 s from
// the built-in. Slack is the invariants' ReplacementTolerance (a loaded
// runner was seen 5.4 s late), the tenth room for the long waits (a
// backoff of minutes). Under the built-in a pod comes a moment after its
// cause or when the backoff of the Job's latest failure ends, a terminal
// condition a moment after the last pod's end; a controller whose pods
// come late after a resume, a scale-up or an adoption, or whose terminal
// condition waits, differs here where no invariant names the delay.
type Clock map[string]float64

// Slack is what an effect's delay may differ from the built-in's by, plus a
// tenth of the delay: the 5 s of invariants.ReplacementTolerance, for its
// reasons.
const Slack = 5 * time.Second

// clockLimit bounds a clock's entries: a Job of hundreds of pods (the scale
// suite) is timed by its own figures, and its clock would fill the oracle.
const clockLimit = 400

// clockOf is the recording's clock for the Jobs named job, and the moment
// its zero stands for; nil when it has more than clockLimit entries.
func clockOf(t timeline.Timeline, job string, cuts map[string]time.Time) (c Clock, zero time.Time) {
	c = Clock{}
	at := func(key string, when time.Time) {
		if zero.IsZero() {
			zero = when
		}
		if _, ok := c[key]; !ok {
			c[key] = math.Round(when.Sub(zero).Seconds()*10) / 10
		}
	}
	jobs := map[string]int{}     // Job UID → its ordinal among the Jobs of that name
	specs := map[string]string{} // Job UID → its spec as last seen
	changes := map[string]int{}  // Job UID → its spec's versions so far
	places := map[string]int{}   // a place (Job, index) → its pods so far
	type podSeen struct {
		place             string // "job J [index I]"
		deleted, finished bool
		meta              string // labels and annotations as last seen
	}
	// A cause is named by its place and its order there ("job 1 deleted
	// #1"), not by the pod: which of a batch's pods is made first, or which
	// one a person deletes, differs from run to run; the order of what
	// happens to them does not.
	nth := map[string]int{}
	cause := func(place, what string, when time.Time) {
		k := place + " " + what
		nth[k]++
		at(fmt.Sprintf("%s #%d", k, nth[k]), when)
	}
	pods := map[string]*podSeen{}
	for _, e := range t {
		switch e.Kind {
		case "Job":
			j := e.Job()
			if j == nil || e.Name != job || j.DeletionTimestamp != nil || e.Type == timeline.Deleted {
				continue
			}
			uid := string(j.UID)
			if _, ok := jobs[uid]; !ok {
				jobs[uid] = len(jobs) + 1
			}
			if s := jsonOf(j.Spec); s != specs[uid] {
				specs[uid] = s
				changes[uid]++
				at(fmt.Sprintf("job %d change %d", jobs[uid], changes[uid]), e.Time)
			}
			if cut, ok := cuts[uid]; !ok || e.Time.Before(cut) {
				for _, cond := range j.Status.Conditions {
					at(fmt.Sprintf("job %d condition %s", jobs[uid], condition(cond)), e.Time)
				}
			}
		case "Pod":
			p := e.Pod()
			if p == nil {
				continue
			}
			owner := metav1.GetControllerOf(p)
			if owner == nil {
				continue
			}
			n, ok := jobs[string(owner.UID)]
			if !ok {
				continue
			}
			seen := pods[string(p.UID)]
			if seen == nil {
				place := fmt.Sprintf("job %d", n)
				if ix, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]; ok {
					place += " index " + ix
				}
				places[place]++
				seen = &podSeen{place: place, meta: metaOf(p)}
				pods[string(p.UID)] = seen
				at(place+" pod "+strconv.Itoa(places[place])+" created", e.Time)
			}
			if m := metaOf(p); m != seen.meta {
				seen.meta = m
				cause(seen.place, "edited", e.Time)
			}
			// Deleted and finished apart: under podReplacementPolicy Failed a
			// deleted pod is replaced when it has failed.
			if !seen.deleted && (e.Type == timeline.Deleted || p.DeletionTimestamp != nil) {
				seen.deleted = true
				cause(seen.place, "deleted", e.Time)
			}
			if !seen.finished && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) {
				seen.finished = true
				cause(seen.place, strings.ToLower(string(p.Status.Phase)), e.Time)
			}
		}
	}
	if len(c) > clockLimit {
		return nil, zero
	}
	return c, zero
}

func jsonOf(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

// metaOf is what of a pod's metadata a person's edit changes.
func metaOf(p *corev1.Pod) string {
	return jsonOf([2]map[string]string{p.Labels, p.Annotations})
}

// effect tells whether a clock's key is something a controller does.
func effect(key string) bool {
	return strings.HasSuffix(key, " created") || strings.Contains(key, " condition ")
}

// Starved drops from a single run's clock the effects whose delay after
// their latest cause spans a moment the machine was starved (why(from, to)
// not ""): their timing is the machine's. It returns how many it dropped.
func (o *Observation) Starved(why func(from, to time.Time) string) int {
	if len(o.Clocks) != 1 || why == nil {
		return 0
	}
	c, zero := o.Clocks[0], o.clockZero
	n := 0
	for k, t := range c {
		if !effect(k) {
			continue
		}
		from := t
		if cause, ok := c.causeOf(k, nil); ok {
			from = c[cause]
		}
		if why(zero.Add(seconds(from)), zero.Add(seconds(t))) != "" {
			delete(c, k)
			n++
		}
	}
	return n
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// causeOf is the latest cause at or before effect k (a cause and its effect
// in the same tenth of a second: the cause), among those also in other
// (nil: any).
func (c Clock) causeOf(k string, other Clock) (string, bool) {
	best, found := "", false
	for _, key := range slices.Sorted(maps.Keys(c)) {
		if effect(key) || c[key] > c[k] {
			continue
		}
		if _, ok := other[key]; other != nil && !ok {
			continue
		}
		if !found || c[key] > c[best] {
			best, found = key, true
		}
	}
	return best, found
}

// WhyUntimed says why other's delays are not compared with the built-in's
// ("": they are): timing is judged only against a built-in that ran twice,
// each run with its clock, and another run with its own — never silently
// left out (issue #56), so a verdict can say what it did not time.
func WhyUntimed(builtin, other *Observation) string {
	switch {
	case builtin.Runs < 2:
		return "the built-in ran once (no spread of its own to time against)"
	case builtin.Scope == "status" || other.Scope == "status":
		return "a dispatched Job: its pods are not the controller's"
	case other.Untimed != "":
		return other.Untimed
	case builtin.Untimed != "":
		return "in the built-in's run, " + builtin.Untimed
	case len(other.Clocks) != 1 || len(builtin.Clocks) < 2:
		return "no clock kept (a run kept by an older jobconform)"
	}
	return ""
}

// delays compares other's clock with the built-in's runs' (clocks): each
// effect both show, its delay after its cause in the first built-in run
// that shows both.
func delays(clocks []Clock, other Clock, add func(field, builtin, other string)) {
	if len(clocks) == 0 || other == nil {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(other)) {
		if !effect(k) {
			continue
		}
		var cause string
		var ds []float64
		for _, b := range clocks {
			if _, ok := b[k]; !ok {
				continue
			}
			if cause == "" {
				var ok bool
				if cause, ok = b.causeOf(k, other); !ok {
					break
				}
			}
			if t, ok := b[cause]; ok {
				ds = append(ds, b[k]-t)
			}
		}
		if len(ds) == 0 {
			continue
		}
		lo, hi := slices.Min(ds), slices.Max(ds)
		d := other[k] - other[cause]
		if d < lo-within(lo) || d > hi+within(hi) {
			runs := make([]string, len(ds))
			for i, x := range ds {
				runs[i] = strconv.FormatFloat(x, 'f', 1, 64) + " s"
			}
			add("delay "+k, strings.Join(runs, ", ")+" after "+cause, strconv.FormatFloat(d, 'f', 1, 64)+" s after "+cause)
		}
	}
}

// within is how far from the built-in's delay d another's may be.
func within(d float64) float64 { return Slack.Seconds() + math.Abs(d)/10 }
