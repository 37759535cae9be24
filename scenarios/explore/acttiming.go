package explore

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"time"

	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/scenarios"
)

// A pod deleted or evicted fails, and the Job's next pod waits out a
// backoff from that failure: 10 s after the first, doubling (upstream's
// DefaultJobPodFailureBackOff, counted from the pod's finishedAt, which
// holds whole seconds). Where that wait ends close to the first wave's end
// the case races: make test's CI of 2026-12-07 drew explore-1-1 (Indexed,
// 10 s runs, index 0 evicted with no trap, backoffLimit 2) whose
// replacement fell due 0.6 to 1.6 s after the three other pods failed and
// ended the Job — the built-in's three runs made none, the reference's
// first run one, and status.failed said 4 against 5. So a case with pod
// acts runs its first wave for a time (actRunFor) that ends well before,
// or well after, every backoff its acts start, by a model of when they
// land, in seconds after the pods started.
const (
	// actLag is how much later than the pods' readiness the harness may
	// act under load (its await sees the status, then lists the pods).
	actLag = 2.0
	// actMargin is the least distance kept between the wave's end and a
	// backoff's end, and between the last act and the wave's end.
	actMargin = 2.0
	// endJitter is how much later than its run a pod may end (kwok).
	endJitter = 0.5
)

// window is a span of seconds after the first wave's pods started.
type window struct{ lo, hi float64 }

func (w window) add(x window) window { return window{w.lo + x.lo, w.hi + x.hi} }

// clear tells whether a wave ending after run seconds keeps actMargin from w.
func (w window) clear(run float64) bool {
	return run+endJitter+actMargin <= w.lo || w.hi+actMargin <= run
}

// endDelay is how long after its deletion a pod of behaviour b ends: its
// SIGTERM trap's delay, cut at the grace period; without a trap, at once
// (the busybox shell exits on the signal).
func endDelay(b scenarios.PodBehavior, grace int64) window {
	if b.SIGTERM == nil {
		return window{0.2, 1}
	}
	d := b.SIGTERM.Delay.Seconds()
	if g := float64(grace); g < d {
		d = g
	}
	return window{d, d + 1}
}

// targetDelays is the span of end delays over the pods an act may reach
// (the first listed running pod: any of the wave's behaviours).
func targetDelays(s *scenarios.Scenario) window {
	grace := ptr.Deref(s.Job.Template.Spec.TerminationGracePeriodSeconds, 30)
	w := endDelay(s.Pods, grace)
	for _, b := range s.Pods.ByIndex {
		d := endDelay(b, grace)
		w = window{math.Min(w.lo, d.lo), math.Max(w.hi, d.hi)}
	}
	return w
}

// readyAt is when the first wave is all ready, so when its act may come.
func readyAt(s *scenarios.Scenario) float64 {
	r := s.Pods.ReadyAfter.Seconds()
	for _, b := range s.Pods.ByIndex {
		r = math.Max(r, b.ReadyAfter.Seconds())
	}
	return r
}

// actRunFor is how long (whole seconds) the first wave runs under acts, the
// pod acts awaited with their holds between them: the run nearest to
// actRun that ends actMargin after the last act and apart from every
// backoff a deletion or an eviction starts; ok is false when none in 6 to
// 30 s does (the caller draws fewer acts).
func actRunFor(s *scenarios.Scenario, acts []scenarios.Step) (run int, ok bool) {
	delays := targetDelays(s)
	r := readyAt(s)
	at := window{r + 0.3, r + 1.5 + actLag}
	var backoffs []window
	failures := 0
	for _, st := range acts {
		switch {
		case st.Await != nil:
			h := st.Holds.Seconds()
			at = at.add(window{h, h + 0.5})
		case st.Act != nil && (st.Act.Kind == scenarios.ActDeletePod || st.Act.Kind == scenarios.ActEvictPod):
			failures++
			wait := float64(int(10) << (failures - 1))
			backoffs = append(backoffs, at.add(delays).add(window{wait - 1, wait}))
		}
	}
	best, found := 0, false
	base, mixed := int(actRunSeconds), mixedEnds(s)
	for run := 6; run <= 30; run++ {
		f := float64(run)
		if f < at.hi+actMargin {
			continue
		}
		fits := true
		for _, b := range backoffs {
			fits = fits && b.clear(f) && (!mixed || b.clear(f+endsApart))
		}
		if fits && (!found || abs(run-base) < abs(best-base)) {
			best, found = run, true
		}
	}
	return best, found
}

// actRunSeconds and refusedRunSeconds are actRun and refusedRun in seconds.
var (
	actRunSeconds     = seconds(actRun)
	refusedRunSeconds = seconds(refusedRun)
)

func seconds(run string) float64 { d, _ := time.ParseDuration(run); return d.Seconds() }

func abs(x int) int { return max(x, -x) }

// onPods tells whether steps are acts on running pods alone.
func onPods(steps []scenarios.Step) bool {
	for _, st := range steps {
		if st.Act == nil || !slices.Contains(podActs, st.Act.Kind) {
			return false
		}
	}
	return len(steps) > 0
}

// setRun sets how long the pods of s run, in seconds: an index that ends
// otherwise than the others (a success among failures, or the reverse)
// endsApart later.
func setRun(s *scenarios.Scenario, run int) {
	s.Pods.Run = fmt.Sprintf("%ds", run)
	for ix, b := range s.Pods.ByIndex {
		b.Run = s.Pods.Run
		if endsOtherwise(s.Pods, b) {
			b.Run = fmt.Sprintf("%ds", run+endsApart)
		}
		s.Pods.ByIndex[ix] = b
	}
}

// endsApart is how far apart (seconds) the ends of a wave's successes and
// failures are kept. Upstream's backoff record forgets the failures that
// did not end after the last success, by finishedAt (whole seconds), among
// the pods one sync sees newly finished: pods that fail and succeed in the
// same second are grouped by syncs (a 1 s batch, and a loaded machine's
// pace), and the Job's next pod comes at once or 10 s later. make test's
// rehearsal of 2026-12-07 (evening): explore-1-13's three 4 s pods, one a
// success, gave the built-in no backoff in three runs and the reference
// one of 10 s in one run of two.
const endsApart = 3

// endsOtherwise tells whether a pod of behaviour b ends otherwise than one
// of base: one succeeds, the other fails.
func endsOtherwise(base, b scenarios.PodBehavior) bool {
	return (base.ExitCode == 0) != (b.ExitCode == 0)
}

// mixedEnds tells whether s's first wave has both successes and failures.
func mixedEnds(s *scenarios.Scenario) bool {
	for _, b := range s.Pods.ByIndex {
		if endsOtherwise(s.Pods, b) {
			return true
		}
	}
	return false
}

// podActSteps are the acts on running pods that follow the await of the
// first wave ready, with the holds between them, as the generator draws
// them (nil when s has none).
func podActSteps(s *scenarios.Scenario) []scenarios.Step {
	for i := 1; i < len(s.Steps); i++ {
		a, st := s.Steps[i-1].Await, s.Steps[i]
		if a == nil || a.Ready == nil || st.Act == nil || !slices.Contains(podActs, st.Act.Kind) {
			continue
		}
		end := i + 1
		for end < len(s.Steps) && (onPods(s.Steps[end:end+1]) || isHold(s.Steps[end])) {
			end++
		}
		return s.Steps[i:end]
	}
	return nil
}

// isHold tells whether st only waits a while.
func isHold(st scenarios.Step) bool {
	return st.Await != nil && st.Holds.Duration > 0 && reflect.ValueOf(*st.Await).IsZero()
}

// retime sets the run of a case with pod acts again after a cut changed
// them or what they reach (a trap, a pod's own behaviour, its readiness):
// reports whether the run changed.
func retime(s *scenarios.Scenario) bool {
	acts := podActSteps(s)
	if acts == nil || s.Pods.Run == refusedRun {
		return false
	}
	run, ok := actRunFor(s, acts)
	if !ok {
		return false
	}
	if fmt.Sprintf("%ds", run) == s.Pods.Run {
		return false
	}
	setRun(s, run)
	return true
}
