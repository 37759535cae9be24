// Deferred terminal conditions (Kubernetes 1.31+).

package invariants

import (
	batchv1 "k8s.io/api/batch/v1"

	"github.com/jobconform/jobconform/internal/timeline"
)

// TerminalAfterTarget: Failed only with FailureTarget, Complete only with
// SuccessCriteriaMet, each with the same reason (deferred terminal conditions, 1.31+).
var TerminalAfterTarget = Invariant{
	Name:        "terminal-after-target",
	Manager:     true,
	Description: "Failed comes only after FailureTarget, Complete only after SuccessCriteriaMet, with the same reason",
	Since:       "v1.31.0",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		reported := map[batchv1.JobConditionType]bool{}
		for _, e := range jobEntries(ctx, t) {
			s := e.Job().Status
			for _, pair := range [][2]batchv1.JobConditionType{{batchv1.JobFailed, batchv1.JobFailureTarget}, {batchv1.JobComplete, batchv1.JobSuccessCriteriaMet}} {
				term := hasCond(s, pair[0])
				if term == nil || reported[pair[0]] {
					continue
				}
				target := hasCond(s, pair[1])
				switch {
				case target == nil:
					out = append(out, violation("terminal-after-target", e, "%s=True without %s", pair[0], pair[1]))
				case target.Reason != term.Reason:
					out = append(out, violation("terminal-after-target", e, "%s reason %q differs from %s reason %q", pair[0], term.Reason, pair[1], target.Reason))
				default:
					continue
				}
				reported[pair[0]] = true
			}
		}
		return out
	},
}

// TerminalOnlyWhenPodsTerminal: when Failed or Complete is written, every pod
// of the Job is terminal or gone (1.31+).
var TerminalOnlyWhenPodsTerminal = Invariant{
	Name:        "terminal-only-when-pods-terminal",
	Description: "Failed/Complete is written only once no pod of the Job is running or terminating",
	Since:       "v1.31.0",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		var out []Violation
		done := false
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			if done || e.Kind != "Job" || finished(e.Job().Status) == nil {
				return
			}
			done = true
			for _, p := range after.podsOf(e.Job().UID) {
				if !podTerminal(p) {
					state := "running"
					if p.DeletionTimestamp != nil {
						state = "terminating"
					}
					out = append(out, violation("terminal-only-when-pods-terminal", e, "%s written while pod %s was %s (phase %s)",
						finished(e.Job().Status).Type, p.Name, state, p.Status.Phase))
				}
			}
		})
		return out
	},
}
