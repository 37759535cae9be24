package explore

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/scenarios"
)

// TestActRunClearsBackoffs: the first wave's run under pod acts, worked by
// hand from the model (seconds after the pods started: acts at 0.3 to 3.5
// past readiness, a backoff's end 9 to 10 s past the failure).
func TestActRunClearsBackoffs(t *testing.T) {
	act := func(kind string) scenarios.Step { return scenarios.Step{Act: &scenarios.Action{Kind: kind}} }
	hold := func(s int) scenarios.Step {
		return scenarios.Step{Await: &scenarios.StatusPattern{}, Holds: scenarios.Duration{Duration: time.Duration(s) * time.Second}}
	}
	trap := func(b *scenarios.PodBehavior, d int) {
		b.SIGTERM = &struct {
			Delay    scenarios.Duration `json:"delay"`
			ExitCode *int32             `json:"exitCode,omitempty"`
		}{Delay: scenarios.Duration{Duration: time.Duration(d) * time.Second}}
	}
	for _, tc := range []struct {
		name  string
		setup func(s *scenarios.Scenario)
		acts  []scenarios.Step
		want  int
	}{
		// Backoff 9.5–14.5: the wave ends by 7 (or from 17 on).
		{"no trap, one eviction", func(*scenarios.Scenario) {}, []scenarios.Step{act(scenarios.ActEvictPod)}, 7},
		// A 5 s trap: backoff 14.3–19.5, clear of 10 (+2.5).
		{"5 s trap", func(s *scenarios.Scenario) {
			trap(&s.Pods, 5)
			s.Job.Template.Spec.TerminationGracePeriodSeconds = ptr.To(int64(10))
		}, []scenarios.Step{act(scenarios.ActDeletePod)}, 10},
		{"an orphan fails no pod", func(*scenarios.Scenario) {}, []scenarios.Step{act(scenarios.ActOrphanPod)}, 10},
		// Ready after 2 s: acts 2.3–5.5, backoff 11.5–16.5: 8 or 9.
		{"ready after 2 s", func(s *scenarios.Scenario) { s.Pods.ReadyAfter = scenarios.Duration{Duration: 2 * time.Second} }, []scenarios.Step{act(scenarios.ActDeletePod)}, 9},
		// Two deletions at once: backoffs 9.5–14.5 and 19.5–24.5 (20 s
		// after the second failure): 7 is nearer 10 than 17.
		{"two deletions", func(*scenarios.Scenario) {}, []scenarios.Step{act(scenarios.ActDeletePod), act(scenarios.ActDeletePod)}, 7},
		// CI's explore-1-1: index 0 untrapped, the others' trap cut at a
		// 4 s grace (delays 0.2–5), evicted, orphaned 3 s later (acts
		// until 7): backoff 9.5–18.5, so from 21 on.
		{"explore-1-1 of 2026-12-07", func(s *scenarios.Scenario) {
			trap(&s.Pods, 5)
			s.Job.Template.Spec.TerminationGracePeriodSeconds = ptr.To(int64(4))
			s.Pods.ByIndex = map[string]scenarios.PodBehavior{"0": {Run: actRun}}
		}, []scenarios.Step{act(scenarios.ActEvictPod), hold(3), act(scenarios.ActOrphanPod)}, 21},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &scenarios.Scenario{}
			s.Pods.Run = actRun
			tc.setup(s)
			got, ok := actRunFor(s, tc.acts)
			if !ok || got != tc.want {
				t.Errorf("actRunFor = %d, %t; want %d", got, ok, tc.want)
			}
		})
	}
}

// TestGeneratedActRuns: every generated case with acts on running pods runs
// its pods as the model says, so no backoff its acts start ends near the
// first wave's end.
func TestGeneratedActRuns(t *testing.T) {
	moved := 0
	for _, c := range Generate(1, 1000) {
		acts := podActSteps(c.Scenario)
		if acts == nil {
			continue
		}
		want, ok := actRunFor(c.Scenario, acts)
		if !ok {
			t.Errorf("%s: its acts leave no run clear of their backoffs", c.Scenario.Name)
			continue
		}
		if got := c.Scenario.Pods.Run; got != fmt.Sprintf("%ds", want) {
			t.Errorf("%s: pods run %s, the model says %ds", c.Scenario.Name, got, want)
		}
		if want != int(actRunSeconds) {
			moved++
		}
	}
	if moved == 0 {
		t.Error("no case's run moved off 10 s: the model is not applied")
	}
	t.Logf("%d cases' runs moved off %s", moved, actRun)
}

// TestMixedEndsApart: in every generated case, an index that succeeds where
// the others fail (or the reverse) ends endsApart or more from them, so no
// sync groups a success and a failure of one second (explore-1-13).
func TestMixedEndsApart(t *testing.T) {
	mixed := 0
	for _, seed := range []uint64{1, 2} {
		for _, c := range Generate(seed, 1000) {
			if mixedEnds(c.Scenario) {
				mixed++
			}
			if !endsKeptApart(c.Scenario) {
				t.Errorf("%s: a success and a failure end within %ds: the others run %s, byIndex %+v", c.Scenario.Name, endsApart, c.Scenario.Pods.Run, c.Scenario.Pods.ByIndex)
			}
		}
	}
	if mixed == 0 {
		t.Fatal("no case mixes a success and a failure in its first wave")
	}
	t.Logf("%d cases mix a success and a failure, each %ds apart or more", mixed, endsApart)
}

// TestShrinkKeepsEndsApart: no cut of the shrinker brings a success and a
// failure of the first wave into one second.
func TestShrinkKeepsEndsApart(t *testing.T) {
	for _, c := range Generate(2, 300) {
		s := c.Scenario
		for depth := 0; depth < 40; depth++ {
			cands := Shrink(s)
			for _, k := range cands {
				if !endsKeptApart(k) {
					t.Fatalf("%s: a success and a failure brought together: base %s, byIndex %+v", k.Name, k.Pods.Run, k.Pods.ByIndex)
				}
			}
			if len(cands) == 0 {
				break
			}
			s = cands[len(cands)-1]
			s.Name = c.Scenario.Name
		}
	}
}
