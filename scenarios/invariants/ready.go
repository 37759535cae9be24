package invariants

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
)

// ReadySlack is added to Context.ReadyWithin: the watch that tells the
// recorder a status was written arrives a moment after the write.
var ReadySlack = 500 * time.Millisecond

func podReady(p *corev1.Pod) bool {
	if podTerminal(p) || p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ReadyFollows: whenever the number of Ready pods of the Job (not
// terminating) holds still for ReadyWithin, status.ready shows it by then
// (Pod Ready++ readiness gates feeding status.ready). Late by cause first: a
// status write more than CauseGrace after the count changed that does not
// show it (staleWrites); then by the clock, the scenario's readyWithin. Only
// runs whose scenario gives readyWithin are held to it.
var ReadyFollows = Invariant{
	Name:        "ready-follows",
	Late:        true,
	Description: "status.ready equals the Job's Ready pods within the scenario's readyWithin of every change that lasts that long",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		if ctx.ReadyWithin <= 0 {
			return nil
		}
		bound := ctx.ReadyWithin + ReadySlack
		type sample struct {
			e     timeline.Entry
			ready int32 // Ready pods (pod changes) or status.ready (Job changes)
			job   *batchv1.Job
		}
		var podSamples, jobSamples []sample
		owned := ownedCount{pred: podReady}
		unknown := unknownSpans(t)
		stale := staleWrites{ctx: ctx, name: "ready-follows", field: "ready", unknown: unknown,
			reported: func(s batchv1.JobStatus) *int32 { return s.Ready },
			owes: func(j *batchv1.Job) bool {
				return j.DeletionTimestamp == nil && finished(j.Status) == nil && !ptr.Deref(j.Spec.Suspend, false)
			}}
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			n := owned.update(e, before, after)
			if after.job == nil {
				return
			}
			stale.visit(e, before, after, n)
			if e.Kind == "Job" {
				jobSamples = append(jobSamples, sample{e, ptr.Deref(after.job.Status.Ready, 0), after.job})
				return
			}
			if len(podSamples) == 0 || podSamples[len(podSamples)-1].ready != n {
				podSamples = append(podSamples, sample{e, n, after.job})
			}
		})
		end := recordingEnd(ctx, t)
		statusAt := func(at time.Time) *sample {
			var last *sample
			for i := range jobSamples {
				if jobSamples[i].e.Time.After(at) {
					break
				}
				last = &jobSamples[i]
			}
			return last
		}
		out := stale.out
		caught := map[time.Time]bool{} // counts a write already proved stale, by when they began
		for _, at := range stale.proven {
			caught[at] = true
		}
		for i, s := range podSamples {
			until := end
			if i+1 < len(podSamples) {
				until = podSamples[i+1].e.Time
			}
			deadline := s.e.Time.Add(bound)
			if until.Before(deadline) || overlapsUnknownTime(unknown, s.e.Time, deadline) {
				continue // changed again before the controller owed an update, or not known
			}
			st := statusAt(deadline)
			if st == nil || finished(st.job.Status) != nil || ptr.Deref(st.job.Spec.Suspend, false) {
				continue
			}
			if st.ready != s.ready && !caught[s.e.Time] {
				out = append(out, violation("ready-follows", s.e, "%d pods Ready from %s on, but status.ready=%d %s later",
					s.ready, s.e.Time.Format("15:04:05.000"), st.ready, bound))
			}
		}
		return out
	},
}

// ReadySeen: status.ready never counts more of the Job's pods than were
// Ready (and not terminating or finished) at once at some revision before
// the write. A controller counts from its cache, a snapshot of the pods
// at some earlier revision (an informer's lister reads under the store's
// lock), so a lagging cache may show fewer or stale pods, never pods
// Ready before they were: this bound is causal and holds at any load,
// where ready-follows' and staleWrites' bounds wait out CauseGrace (5 s).
// Issue #70's mutant ready-high-for-a-moment counts a pod ready for 3 s
// after its Ready condition changed, whatever its status: a pod ready
// only after 2 s shows in status.ready at once. Judged per Job (a Job
// made again under its name starts over), in revision order, up to the
// first gap in the recording (states lost there could have held more
// pods Ready), not on a dispatched Job (its pods are the worker's copy's).
var ReadySeen = Invariant{
	Name:        "ready-seen",
	Description: "status.ready never exceeds the most of the Job's pods Ready (not terminating) at once before the write",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		if ctx.Copy != "" {
			return nil
		}
		var gapFrom uint64
		for _, s := range unknownSpans(t) {
			if gapFrom == 0 || s.fromRV < gapFrom {
				gapFrom = s.fromRV
			}
		}
		var gapAt time.Time
		for _, g := range ctx.Gaps {
			if gapAt.IsZero() || g.From.Before(gapAt) {
				gapAt = g.From
			}
		}
		owned := ownedCount{pred: podReady}
		var job types.UID
		var most int32
		var out []Violation
		replay(ctx, t, func(e timeline.Entry, before, after *world) {
			n := owned.update(e, before, after)
			if after.job == nil {
				return
			}
			if after.job.UID != job {
				job, most = after.job.UID, n
			}
			most = max(most, n)
			if e.Kind != "Job" || (gapFrom != 0 && e.Revision() >= gapFrom) || (!gapAt.IsZero() && !e.Time.Before(gapAt)) {
				return
			}
			if r := ptr.Deref(after.job.Status.Ready, 0); r > most {
				out = append(out, violation("ready-seen", e, "status.ready=%d, but at most %d of the Job's pods were Ready (not terminating) at once before this write: pods counted ready before they were",
					r, most))
			}
		})
		return out
	},
}
