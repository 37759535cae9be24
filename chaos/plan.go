package chaos

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/chaos-mesh/chaos-mesh/api/v1alpha1"
	"github.com/robfig/cron/v3"
	"k8s.io/utils/ptr"
)

// Planned is one action of an expanded plan, after a pause.
type Planned struct {
	Pause  time.Duration
	Action Action
}

// Expand turns a Random action into its plan. The plan depends only on the
// seed's stream: the same stream gives the same actions and pauses.
func Expand(r Random, rng *rand.Rand) []Planned {
	minP, maxP := r.MinPause.Duration, r.MaxPause.Duration
	if maxP == 0 {
		minP, maxP = 2*time.Second, 5*time.Second
	}
	pause := func() time.Duration {
		// Whole 100ms steps, so logs read well.
		steps := int64((maxP - minP) / (100 * time.Millisecond))
		return minP + time.Duration(rng.Int64N(steps+1))*100*time.Millisecond
	}
	grace := ptr.Deref(r.GracePeriod, 30)
	var out []Planned
	for i := 0; i < r.Actions; i++ {
		kind := r.Menu[rng.IntN(len(r.Menu))]
		var a Action
		switch kind {
		case KindPodKill:
			a.PodChaos = &v1alpha1.PodChaosSpec{Action: v1alpha1.PodKillAction, GracePeriod: grace}
			a.PodChaos.Mode = v1alpha1.OneMode
		case KindContainerKill:
			a.PodChaos = &v1alpha1.PodChaosSpec{Action: v1alpha1.ContainerKillAction}
			a.PodChaos.Mode = v1alpha1.OneMode
		case KindEvict:
			a.Evict = &Selection{Mode: v1alpha1.OneMode}
		case KindNodeLoss:
			a.NodeLoss = &NodeLoss{Selection: Selection{Mode: v1alpha1.OneMode}}
		case KindReadinessGate:
			a.ReadinessGate = &GateFlip{Selection: Selection{Mode: v1alpha1.RandomMaxPercentMode, Value: "100"}, Gate: r.Gate}
		case KindControllerCrash:
			a.ControllerRestart = &Restart{Crash: true}
		}
		out = append(out, Planned{Pause: pause(), Action: a})
		if kind == KindNodeLoss {
			out = append(out, Planned{Pause: pause(), Action: Action{NodeReturn: &NodeReturn{}}})
		}
	}
	return out
}

// Describe is the action as one deterministic log line.
func (a Action) Describe() string {
	sel := func(s Selection) string {
		out := "mode=" + string(orOne(s.Mode))
		if s.Value != "" {
			out += " value=" + s.Value
		}
		if s.Index != nil {
			out += " index=" + strconv.Itoa(*s.Index)
		}
		return out
	}
	k := a.Kind()
	var parts []string
	switch {
	case a.PodChaos != nil:
		parts = append(parts, sel(Selection{Mode: a.PodChaos.Mode, Value: a.PodChaos.Value}))
		switch a.PodChaos.Action {
		case v1alpha1.PodKillAction:
			parts = append(parts, fmt.Sprintf("gracePeriod=%d", a.PodChaos.GracePeriod))
		case v1alpha1.PodFailureAction:
			parts = append(parts, "duration="+ptr.Deref(a.PodChaos.Duration, ""))
		}
	case a.Evict != nil:
		parts = append(parts, sel(*a.Evict))
	case a.Preempt != nil:
		parts = append(parts, sel(*a.Preempt))
	case a.Drain != nil:
		parts = append(parts, sel(*a.Drain))
	case a.Taint != nil:
		parts = append(parts, sel(a.Taint.Selection))
		if a.Taint.OutOfService {
			parts = append(parts, "outOfService")
		}
	case a.NodeLoss != nil:
		parts = append(parts, sel(a.NodeLoss.Selection))
		if a.NodeLoss.DeletePods {
			parts = append(parts, "deletePods")
		}
	case a.ReadinessGate != nil:
		st := string(a.ReadinessGate.Status)
		if st == "" {
			st = "flip"
		}
		parts = append(parts, sel(a.ReadinessGate.Selection), "gate="+string(a.ReadinessGate.Gate), "status="+st)
	case a.FeatureGates != nil:
		parts = append(parts, formatGates(a.FeatureGates))
	case a.ControllerStop != nil:
		if a.ControllerStop.Crash {
			parts = append(parts, "crash")
		}
		if a.ControllerStop.For.Duration > 0 {
			parts = append(parts, "for="+a.ControllerStop.For.String())
		}
	}
	if a.Schedule != "" {
		parts = append(parts, fmt.Sprintf("schedule=%q times=%d", a.Schedule, a.Times))
	}
	if len(parts) == 0 {
		return k
	}
	return k + " " + strings.Join(parts, " ")
}

func orOne(m v1alpha1.SelectorMode) v1alpha1.SelectorMode {
	if m == "" {
		return v1alpha1.OneMode
	}
	return m
}

// count is how many of n candidates the selection takes, as Chaos Mesh
// counts (pkg/selector/pod): percentages round down; intn draws for
// random-max-percent.
func (s Selection) count(n int, intn func(int) int) (int, error) {
	switch orOne(s.Mode) {
	case v1alpha1.OneMode:
		return min(1, n), nil
	case v1alpha1.AllMode:
		return n, nil
	case v1alpha1.FixedMode:
		v, err := strconv.Atoi(s.Value)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("mode fixed: value %q must be a count", s.Value)
		}
		return min(v, n), nil
	case v1alpha1.FixedPercentMode, v1alpha1.RandomMaxPercentMode:
		v, err := strconv.Atoi(s.Value)
		if err != nil || v < 0 || v > 100 {
			return 0, fmt.Errorf("mode %s: value %q must be a percentage 0-100", s.Mode, s.Value)
		}
		if s.Mode == v1alpha1.RandomMaxPercentMode {
			v = intn(v + 1)
		}
		return int(math.Floor(float64(n) * float64(v) / 100)), nil
	}
	return 0, fmt.Errorf("mode %q: use one of %v", s.Mode, modes)
}

// scheduleTimes are the offsets (from start) of the repetitions of a
// scheduled action: the first at once, then at the schedule's next times.
func scheduleTimes(spec string, times int, start time.Time) ([]time.Duration, error) {
	if times < 0 {
		return nil, fmt.Errorf("times must not be negative")
	}
	if spec == "" {
		if times > 1 {
			return nil, fmt.Errorf("times %d needs a schedule (e.g. \"@every 3s\")", times)
		}
		return []time.Duration{0}, nil
	}
	if times == 0 {
		return nil, fmt.Errorf("schedule %q needs times (how often in all)", spec)
	}
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("schedule %q: %v (use a cron line or \"@every 3s\")", spec, err)
	}
	out := []time.Duration{0}
	t := start
	for len(out) < times {
		t = sched.Next(t)
		out = append(out, t.Sub(start))
	}
	return out, nil
}

func formatGates(g map[string]bool) string {
	var parts []string
	for k, v := range g {
		parts = append(parts, k+"="+strconv.FormatBool(v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
