package explore

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/yamltypes"
	"github.com/jobconform/jobconform/scenarios"
)

// Shrinking (explore.md, after delta debugging): a failing case is cut one
// step at a time — an act, a pod's own behaviour, a rule, a policy, a
// number lowered toward its edge — while the same failure holds. Shrink
// gives the next step's candidates; the caller runs them side by side and
// keeps the smallest that still fails alike (Signature), until none does
// or its budget runs out.

// Shrink returns every valid scenario one cut smaller than s, each named
// <s.Name>-s<k>, smallest first (by Size).
func Shrink(s *scenarios.Scenario) []*scenarios.Scenario {
	var out []*scenarios.Scenario
	seen := map[string]bool{}
	base, _ := Render(s)
	seen[string(base)] = true
	for _, cut := range cuts(s) {
		c := clone(s)
		if !cut(c) || !fitWaves(s, c) {
			continue
		}
		retime(c) // the acts left, or what they reach, may need another run
		c.Name = ""
		data, err := Render(c)
		if err != nil || seen[string(data)] {
			continue
		}
		seen[string(data)] = true
		c.Name = s.Name
		if c.Validate() != nil {
			continue
		}
		out = append(out, c)
	}
	slices.SortStableFunc(out, func(a, b *scenarios.Scenario) int { return Size(a) - Size(b) })
	for i, c := range out {
		c.Name = fmt.Sprintf("%s-s%d", s.Name, i+1)
	}
	return out
}

// Size is how much there is to read of s: its file's length without its
// name and description.
func Size(s *scenarios.Scenario) int {
	c := *s
	c.Name, c.Description = "", ""
	data, _ := Render(&c)
	return len(data)
}

// Signature is what a failure line is about, without its moment and
// values: "invariant terminating-counted", "differential status.failed",
// "step 3 (await …)", "harness error". Two runs fail alike when they
// share the signature of the first failure of the case being shrunk.
func Signature(failure string) string {
	for _, re := range signatures {
		if m := re.FindString(failure); m != "" {
			return m
		}
	}
	return failure
}

var signatures = []*regexp.Regexp{
	regexp.MustCompile(`^invariant [^ ]+`),
	regexp.MustCompile(`^differential [^:]+`),
	regexp.MustCompile(`^step \d+ \([^)]*\)`),
	regexp.MustCompile(`^harness error`),
}

// cuts are the one-step reductions, each reporting whether it changed
// anything.
func cuts(s *scenarios.Scenario) []func(*scenarios.Scenario) bool {
	var out []func(*scenarios.Scenario) bool
	// An act with the await before it (a resume's with the Job's
	// spec.suspend; a pod act's with the long run it needed); a suspension
	// in the run with the await before it, its own await and its resume
	// (cut apart, the Job would stay suspended, or be awaited suspended
	// without one: seen shrinking a real failure).
	for i := range s.Steps {
		if a := s.Steps[i].Act; a != nil && (i == 0 || s.Steps[i-1].Act != nil) && slices.Contains(podActs, a.Kind) {
			// A second act drawn at once after the first (secondAct), or
			// left first by the first's cut: alone.
			out = append(out, func(c *scenarios.Scenario) bool {
				c.Steps = slices.Delete(c.Steps, i, i+1)
				return true
			})
			continue
		}
		if s.Steps[i].Act == nil || i == 0 || s.Steps[i-1].Await == nil {
			continue
		}
		if s.Steps[i].Act.Kind == scenarios.ActSuspend {
			if j := resumeAfter(s, i); j > 0 {
				out = append(out, func(c *scenarios.Scenario) bool {
					c.Steps = slices.Delete(c.Steps, i-1, j+1)
					return true
				})
			}
			continue
		}
		if s.Steps[i].Act.Kind == scenarios.ActPatchTemplate {
			// The template's change alone: the await before it is the
			// resume's (the Job awaited suspended).
			out = append(out, func(c *scenarios.Scenario) bool {
				c.Steps = slices.Delete(c.Steps, i, i+1)
				return true
			})
			continue
		}
		if k := s.Steps[i].Act.Kind; k == scenarios.ActRefusePods || k == scenarios.ActRefusePodChanges {
			// A refusal of new pods or of pod changes, whole: the await
			// before it, the acts and awaits inside, and the allow that
			// ends it (cut apart, the refusal would last to the end), and
			// a suspension made inside it to its resume (the allowances
			// it makes go with it: Scenario.RetryTimed reads the steps).
			end := scenarios.ActAllowPods
			if k == scenarios.ActRefusePodChanges {
				end = scenarios.ActAllowPodChanges
			}
			if j := actAfter(s, i, end); j > 0 {
				if k := actAfter(s, i, scenarios.ActSuspend); k > 0 && k < j {
					// A suspension made while refused: with its resume,
					// and the await of it between.
					j = max(j, resumeAfter(s, k))
				}
				out = append(out, func(c *scenarios.Scenario) bool {
					c.Steps = slices.Delete(c.Steps, i-1, j+1)
					return true
				})
			}
			continue
		}
		if k := s.Steps[i].Act.Kind; (k == scenarios.ActResume && suspendedBy(s, i)) || k == scenarios.ActAllowPods || k == scenarios.ActAllowPodChanges {
			continue // an in-run suspension's resume, a refusal's end: cut with it
		}
		out = append(out, func(c *scenarios.Scenario) bool {
			if c.Steps[i].Act.Kind == scenarios.ActResume {
				c.Job.Suspend = nil
			}
			// With every await that leads to it (the first wave's, and
			// the failures' awaited after it by the forms that act once a
			// backoff is pending): none is left to wait for nothing.
			from := i - 1
			for from > 0 && c.Steps[from-1].Await != nil {
				from--
			}
			c.Steps = slices.Delete(c.Steps, from, i+1)
			return true
		})
	}
	for _, ix := range slices.Sorted(maps.Keys(s.Pods.ByIndex)) {
		out = append(out, func(c *scenarios.Scenario) bool {
			delete(c.Pods.ByIndex, ix)
			return true
		})
	}
	out = append(out,
		func(c *scenarios.Scenario) bool {
			if c.Pods.SIGTERM == nil {
				return false
			}
			c.Pods.SIGTERM, c.Job.Template.Spec.TerminationGracePeriodSeconds = nil, nil
			return true
		},
		func(c *scenarios.Scenario) bool { return set(&c.Pods.ReadyAfter, yamltypes.Duration{}) },
		func(c *scenarios.Scenario) bool { return set(&c.Pods.Gates, nil) },
		func(c *scenarios.Scenario) bool { return set(&c.Job.SuccessPolicy, nil) },
		func(c *scenarios.Scenario) bool { return set(&c.Job.PodReplacementPolicy, nil) },
		func(c *scenarios.Scenario) bool { return set(&c.Job.MaxFailedIndexes, nil) },
		func(c *scenarios.Scenario) bool {
			if c.Job.BackoffLimitPerIndex == nil {
				return false
			}
			c.Job.BackoffLimitPerIndex, c.Job.MaxFailedIndexes = nil, nil
			return true
		},
		func(c *scenarios.Scenario) bool {
			if c.Job.ManualSelector == nil {
				return false
			}
			c.Job.ManualSelector, c.Job.Selector, c.Job.Template.Labels = nil, nil, nil
			return true
		},
		func(c *scenarios.Scenario) bool {
			// NonIndexed is the default: said or not, the same Job.
			return c.Job.CompletionMode != nil && *c.Job.CompletionMode == batchv1.NonIndexedCompletion && set(&c.Job.CompletionMode, nil)
		},
		func(c *scenarios.Scenario) bool { return lower(&c.Job.BackoffLimit, 0) },
		func(c *scenarios.Scenario) bool { return lower(&c.Job.Parallelism, 1) },
		func(c *scenarios.Scenario) bool {
			if c.Job.SuccessPolicy != nil || !lower(&c.Job.Completions, 1) {
				return false
			}
			n := *c.Job.Completions
			for ix := range c.Pods.ByIndex {
				if i, err := strconv.Atoi(ix); err == nil && int32(i) >= n {
					delete(c.Pods.ByIndex, ix)
				}
			}
			if c.Job.MaxFailedIndexes != nil && *c.Job.MaxFailedIndexes > n {
				c.Job.MaxFailedIndexes = ptr.To(n)
			}
			return true
		},
		func(c *scenarios.Scenario) bool {
			if c.Pods.Failures <= 1 {
				return false
			}
			c.Pods.Failures--
			return true
		},
		func(c *scenarios.Scenario) bool { return shorter(c) },
	)
	if s.Job.PodFailurePolicy != nil {
		if len(s.Job.PodFailurePolicy.Rules) > 1 {
			for i := range s.Job.PodFailurePolicy.Rules {
				out = append(out, func(c *scenarios.Scenario) bool {
					c.Job.PodFailurePolicy.Rules = slices.Delete(c.Job.PodFailurePolicy.Rules, i, i+1)
					return true
				})
			}
		}
		out = append(out, func(c *scenarios.Scenario) bool { return set(&c.Job.PodFailurePolicy, nil) })
	}
	return out
}

// set makes *p v; false when it was v already (nothing cut).
func set[T any](p *T, v T) bool {
	a, _ := json.Marshal(*p)
	b, _ := json.Marshal(v)
	*p = v
	return string(a) != string(b)
}

// lower takes one off a number above floor.
func lower(p **int32, floor int32) bool {
	if *p == nil || **p <= floor {
		return false
	}
	*p = ptr.To(**p - 1)
	return true
}

// shorter takes the pods' run times one down (an act's, 4 s, 1 s); an
// act's only once no act needs the first wave running: any act right after an await
// of running pods (a pod's deletion, but also a suspension or a scale,
// whose effect on the running wave is what the case tests). Shrunk to 1 s,
// explore-2-23's suspension landed after its pod had failed on a busy
// machine (rehearsal 11, 2026-12-02): a case that passes or fails by the
// machine's speed.
func shorter(s *scenarios.Scenario) bool {
	acts := needsRunningWave(s)
	down := func(run string) string {
		switch {
		case !acts && run != "" && run != refusedRun && !slices.Contains(runTimes, run):
			return runTimes[1] // an act's run (actRunFor), no act left to need it
		case run == runTimes[1]:
			return runTimes[0]
		}
		return run
	}
	changed := false
	was := clone(s)
	if r := down(s.Pods.Run); r != s.Pods.Run {
		s.Pods.Run, changed = r, true
	}
	for ix, b := range s.Pods.ByIndex {
		if r := down(b.Run); r != b.Run {
			b.Run, changed = r, true
			s.Pods.ByIndex[ix] = b
		}
	}
	if changed && !endsKeptApart(s) {
		*s = *was // a success and a failure brought into one second (endsApart)
		return false
	}
	return changed
}

// endsKeptApart tells whether s's indexes that succeed where the others
// fail, or the reverse, end endsApart or more from them.
func endsKeptApart(s *scenarios.Scenario) bool {
	for _, b := range s.Pods.ByIndex {
		if endsOtherwise(s.Pods, b) && b.Run != "" && s.Pods.Run != "" {
			if d := seconds(b.Run) - seconds(s.Pods.Run); d < endsApart && -d < endsApart {
				return false
			}
		}
	}
	return true
}

// needsRunningWave tells whether an act of s follows an await of running
// pods: it must land while they still run.
func needsRunningWave(s *scenarios.Scenario) bool {
	for i := 1; i < len(s.Steps); i++ {
		if a := s.Steps[i-1].Await; s.Steps[i].Act != nil && a != nil && a.Active != nil && *a.Active > 0 {
			return true
		}
	}
	return false
}

// resumeAfter is the index of the first resume act after step i (-1: none).
func resumeAfter(s *scenarios.Scenario, i int) int { return actAfter(s, i, scenarios.ActResume) }

// actAfter is the index of the first act of kind after step i (-1: none).
func actAfter(s *scenarios.Scenario, i int, kind string) int {
	for j := i + 1; j < len(s.Steps); j++ {
		if a := s.Steps[j].Act; a != nil && a.Kind == kind {
			return j
		}
	}
	return -1
}

// suspendedBy tells whether the resume at step i ends a suspension made by
// an act of the run (not the Job's spec.suspend at creation).
func suspendedBy(s *scenarios.Scenario, i int) bool {
	for j := i - 1; j >= 0; j-- {
		if a := s.Steps[j].Act; a != nil {
			switch a.Kind {
			case scenarios.ActSuspend:
				return true
			case scenarios.ActResume:
				return false
			}
		}
	}
	return false
}

// fitWaves keeps an await of the first wave's active and ready pods, in
// cut c of s, at what c's first wave is; an await of no active pods (a
// suspension's) stays, and so does every await after a scale (its values
// are the scale's, not the wave's). A cut that changes the wave of a case
// whose awaits before a scale are not the plain wave — the elastic form's
// (one index done), the unready scale-down's (one pod not ready) — is no
// candidate (false): rewritten, they awaited states no controller reaches
// (issue #69), and so those cases came out unshrunk.
func fitWaves(s, c *scenarios.Scenario) bool {
	from, to := firstWave(s), firstWave(c)
	if from == to {
		return true
	}
	for i := range c.Steps {
		if act := c.Steps[i].Act; act != nil && act.Kind == scenarios.ActScale {
			return true
		}
		a := c.Steps[i].Await
		if a == nil || a.Active == nil || *a.Active == 0 {
			continue
		}
		if *a.Active != from || (a.Ready != nil && *a.Ready != from) || a.CompletedIndexes != nil {
			return false
		}
		a.Active = ptr.To(to)
		if a.Ready != nil {
			a.Ready = ptr.To(to)
		}
	}
	return true
}

// firstWave is how many pods s's Job runs at first.
func firstWave(s *scenarios.Scenario) int32 {
	wave := ptr.Deref(s.Job.Parallelism, 1)
	if s.Job.Completions != nil {
		wave = min(wave, *s.Job.Completions)
	}
	return wave
}

// clone is a deep copy of s by its JSON.
func clone(s *scenarios.Scenario) *scenarios.Scenario {
	data, _ := json.Marshal(s)
	c := &scenarios.Scenario{}
	_ = json.Unmarshal(data, c)
	c.File = s.File
	return c
}
