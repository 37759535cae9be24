// What others did to the cluster during a run (chaos, a drill's swaps), as the invariants read it.

package runner

import (
	"sort"
	"time"

	"github.com/jobconform/jobconform/chaos"
	"github.com/jobconform/jobconform/internal/timeline"
	"github.com/jobconform/jobconform/scenarios/invariants"
)

// disruptionsSince are what others did to the cluster (o.Disruptions) from
// start on, and just before: a change that ended within RestartGrace of the
// start may still hold the controller back in the run (seen in a drill: the
// reference controller, its watches broken by the apiserver's replacement,
// first acted on a Job 19s after the flight created it).
func disruptionsSince(o Options, start time.Time) []chaos.Record {
	if o.Disruptions == nil {
		return nil
	}
	var out []chaos.Record
	for _, d := range o.Disruptions() {
		b := restartBounds(d)
		if b[len(b)-1].After(start.Add(-invariants.RestartGrace)) {
			out = append(out, d)
		}
	}
	return out
}

// restartTimes are the bounds (restartBounds) of the chaos actions that
// restarted the controller under test (a crash, a restart, other feature
// gates) or the apiserver it works through.
func restartTimes(records []chaos.Record) []time.Time {
	var out []time.Time
	var down time.Time // a controllerStop's, until its controllerStart
	for _, r := range records {
		a := r.Action
		if a.ControllerRestart != nil || a.FeatureGates != nil || a.APIServerRestart != nil || a.ControllerStop != nil || a.ControllerStart != nil {
			out = append(out, restartBounds(r)...)
		}
		switch {
		case a.ControllerStop != nil && a.ControllerStop.For.Duration == 0:
			down = r.Start
		case a.ControllerStart != nil && !down.IsZero():
			// The whole time down is disturbed, however long.
			for t := down.Add(invariants.RestartGrace / 2); t.Before(r.Start); t = t.Add(invariants.RestartGrace / 2) {
				out = append(out, t)
			}
			down = time.Time{}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// restartBounds are a restart's start and, when later, its end: the checks
// forgive lags for RestartGrace after a restart, and a controller's watches
// back off from when the apiserver is back, not from when it went away
// (seen in a drill: the reference controller's pod informer blind for 57s
// after the apiserver's replacement had ended). An apiserver's restart adds
// a bound RestartGrace after its end: client-go's reflector may wait twice
// before it relists, retrying the broken watch and then the list, each wait
// up to RestartGrace (seen in ten make runs: the reference controller's pod
// informer relisted 84s, its Job informer 80s, after the apiserver was back).
func restartBounds(r chaos.Record) []time.Time {
	out := []time.Time{r.Start}
	end := r.Start
	if r.Time.After(r.Start) {
		end = r.Time
		out = append(out, end)
	}
	if r.Action.APIServerRestart != nil {
		out = append(out, end.Add(invariants.RestartGrace))
	}
	return out
}

// gateOffSpans are the spans in which chaos steps had switched gate off in
// the controller under test: from the start of the restart that switched it
// off to the end of the one that switched it on again.
func gateOffSpans(records []chaos.Record, gate string) []timeline.Span {
	var out []timeline.Span
	var off *timeline.Span
	for _, r := range records {
		on, set := r.Action.FeatureGates[gate]
		if r.Action.FeatureGates != nil && len(r.Action.FeatureGates) == 0 {
			on, set = true, true // back to the defaults
		}
		switch {
		case !set:
		case !on && off == nil:
			off = &timeline.Span{From: r.Start}
		case on && off != nil:
			off.To = r.Time
			out = append(out, *off)
			off = nil
		}
	}
	if off != nil {
		out = append(out, *off)
	}
	return out
}
