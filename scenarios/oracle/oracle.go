// Package oracle is the differential verdict: a run of a scenario by any
// controller compared with the built-in controller's run of the same
// scenario at the same release, on everything a user can observe that does
// not depend on timing — the final Job status to the last field, the order
// of the conditions and their reasons, the shape of every pod as created
// and what became of it (later.go), the events the Job got and the words of
// its messages (messages.go), what its timestamps equal (times.go), the
// pods created per index, the kinds of write request the controller sent
// (read from the apiserver's audit log by the harness: Requests) — and,
// against a built-in that ran twice, timing within its own spread: each
// pod's and condition's delay after its cause (clock.go). It finds what no
// one thought to write an invariant for; the invariants explain, the
// oracle catches.
//
// A scenario whose outcome is legitimately nondeterministic declares which
// fields may differ, and why (scenarios.Scenario.Oracle). Names, UIDs, the
// controller's own tracking finalizer and its managedBy identity are
// normalised away before anything is compared.
package oracle

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/jobconform/jobconform/internal/timeline"
)

// Observation is what a run showed that a conforming controller must show
// too, each field a canonical string so that two runs compare by equality.
type Observation struct {
	// Controller is who ran it, Version the release, Nodes what played
	// the nodes ("kubelet", or "" for kwok): an oracle holds for runs of
	// the same release on the same kind of nodes only.
	Controller string `json:"controller"`
	Version    string `json:"version"`
	Nodes      string `json:"nodes,omitempty"`
	// Gates are the feature gates the cluster was given, Scenario the
	// fingerprint of the scenario run (Fingerprint): a kept run
	// (--oracle-from) serves only a run of the same scenario, word for
	// word, on a cluster of the same gates.
	Gates    string `json:"gates,omitempty"`
	Scenario string `json:"scenario,omitempty"`
	// Format is what this jobconform observes and compares (Format): a
	// kept run of another format is no oracle (a field it compared
	// differently, or one it did not record, would differ for nothing).
	Format int `json:"format,omitempty"`
	// Final is the Job's status as it was last seen before anyone asked
	// for its deletion, field by field: once it is being deleted it owes
	// no status (the last write before it is gone depends on timing), and
	// "deleted" says it was.
	Final map[string]string `json:"final"`
	// Conditions are the distinct conditions the Job showed, as
	// type=status/reason, in the order they first appeared.
	Conditions []string `json:"conditions"`
	// Pods counts the pods created by shape (their metadata and spec as
	// created, normalised); Late the pods first seen in a gap of the
	// recording (ObserveWith), whose shape as created was never seen.
	Pods map[string]int `json:"pods"`
	Late int            `json:"late,omitempty"`
	// Later counts the pods by what became of them after their creation
	// (later): the fields of their metadata and spec that changed by the
	// time they were last seen before the Job's deletion was asked for,
	// and whether they were being deleted. nil: kept by a jobconform that
	// did not record it.
	Later map[string]int `json:"later,omitempty"`
	// Gap: the recording had a gap (a watch broken by a restart). A pod
	// created and gone inside it, or not yet relisted when the recording
	// ended, was never seen: this run's pod counts may be short, never long.
	Gap bool `json:"gap,omitempty"`
	// Events counts the Job's events by type/reason.
	Events map[string]int `json:"events"`
	// Messages are the distinct messages of the Job's conditions (before
	// its deletion was asked for) and events, by "condition
	// <type>=<status>/<reason>" and "event <type>/<reason>", the names a
	// run gives at random replaced (messages.go). nil: kept by a
	// jobconform that did not record them.
	Messages map[string]string `json:"messages,omitempty"`
	// Times are what the Job's timestamps equal (times.go): a condition's
	// lastProbeTime its lastTransitionTime, startTime not after the first
	// pod. nil: kept by
	// a jobconform that did not record them.
	Times map[string]string `json:"times,omitempty"`
	// PerIndex counts the pods created per completion index (Indexed Jobs).
	PerIndex map[string]int `json:"perIndex,omitempty"`
	// Counters is how much each series of the Job controller's counters
	// rose over the run, where the run read them (the serial scenarios
	// that judge metrics; nil elsewhere: other Jobs' counts mix in).
	Counters map[string]float64 `json:"counters"` // no omitempty: {} (read, none rose) is not null (not read)
	// Requests are the distinct kinds of write request the controller sent
	// about the scenario's objects, read from the apiserver's audit log
	// (internal/apiaudit.Sent: verb, resource, options, what a patch
	// changes). nil: not read — no audit log (another provider than the
	// local one), a controller whose identity the harness does not know, or
	// a jobconform that did not record them.
	Requests []string `json:"requests"` // no omitempty: [] (read, none sent) is not null
	// Unread says why the requests were not read though the run kept an
	// audit log (a record lost): the comparison says so, allowed.
	Unread string `json:"unread,omitempty"`
	// Job is the Job's metadata and spec as last seen before its deletion
	// was asked for, normalised (JobShape): a Job controller writes its
	// status, not these, and one that labels, annotates, finalizes or
	// edits the Job differs here.
	Job string `json:"job,omitempty"`
	// Failed lists the run's broken promises: an oracle that broke one is
	// no oracle for that run. Skipped says why it did not run at all.
	Failed  []string `json:"failed,omitempty"`
	Skipped string   `json:"skipped,omitempty"`
	// Bugs are the known upstream bugs (scenarios/bugs IDs) that explain
	// every one of Failed; nil when any failure is unexplained. A run
	// broken by bugs whose fields are known is still an oracle for the
	// rest (harness: bugFields).
	Bugs []string `json:"bugs,omitempty"`
	// Cut says where the run stopped short: at a step that failed (the
	// steps after it never ran), so its final state, pods and events are
	// of a shorter run than a run that kept every step's promise.
	Cut string `json:"cut,omitempty"`
	// Scope is "status" for a dispatched Job's run (Dispatched): its status
	// and conditions are compared, not its pods or events.
	Scope string `json:"scope,omitempty"`
	// Noise is what differed between two runs of the built-in of this
	// scenario (Learn), field → both values: a difference there is that
	// scenario's nondeterminism, not held against another controller.
	// Racy says why the two runs ended differently: then nothing is.
	Noise map[string]string `json:"noise,omitempty"`
	// NoiseValues are the values each field of Noise took in the
	// built-in's runs: another controller's value outside them (for
	// numbers, outside their range) is a difference (noise.go).
	NoiseValues map[string][]string `json:"noiseValues,omitempty"`
	Racy        string              `json:"racy,omitempty"`
	// EndRace says how a pod was deleted moments after it ended (endRace):
	// which pods the Job's end deleted is then a race, in this run or
	// (Learn) in any of the built-in's.
	EndRace string `json:"endRace,omitempty"`
	// Runs is how many runs of the built-in this observation stands for.
	Runs int `json:"runs,omitempty"`
	// Peaks are the highest active, ready and terminating the Job's status
	// showed before its deletion was asked for (issue #56: values on the
	// way). Only active is compared, one way (PeakCompared).
	Peaks map[string]int `json:"peaks,omitempty"`
	// Clocks are when things happened in each run this observation stands
	// for (clock.go), compared as delays where the built-in ran twice; nil
	// where a run was not timed, Untimed saying why.
	Clocks    []Clock   `json:"clocks,omitempty"`
	Untimed   string    `json:"untimed,omitempty"`
	clockZero time.Time // the moment a single run's clock counts from
}

func explained(o *Observation) bool {
	return len(o.Failed) == 0 || len(o.Bugs) > 0
}

// Fingerprint names a scenario's content: what it was loaded as, the file
// it came from aside. Two versions of a scenario of the same name differ.
func Fingerprint(s any) string {
	data, _ := json.Marshal(s)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:6])
}

// Dispatched narrows o to what the user of a dispatcher sees of a Job run
// as a copy on another cluster: the manager's Job's status and conditions.
// Its pods are the worker's built-in's, its events the dispatcher's own:
// neither is compared (Scope says so). For a controller that queues Jobs
// (Kueue), the suspension it holds a Job in until admission
// (Suspended=True/JobSuspended, then Suspended=False/JobResumed) is its own
// contract, not the Job controller's: dropped from the conditions. A Job
// deleted mid-run compares on its deletion alone (Compare).
func (o *Observation) Dispatched(queued bool) *Observation {
	o.Scope, o.Pods, o.Later, o.Events, o.Messages, o.PerIndex, o.Peaks, o.Requests, o.Unread = "status", nil, nil, nil, nil, nil, nil, nil, ""
	if !queued {
		return o
	}
	queuing := func(c string) bool { return strings.HasPrefix(c, string(batchv1.JobSuspended)+"=") }
	o.Conditions = slices.DeleteFunc(o.Conditions, queuing)
	if cs, ok := o.Final["conditions"]; ok {
		var kept []string
		for _, c := range strings.Split(cs, ", ") {
			if c != "" && !queuing(c) {
				kept = append(kept, c)
			}
		}
		o.Final["conditions"] = strings.Join(kept, ", ")
	}
	return o
}

// Format is the observations' format: raise it whenever what an
// Observation holds, or how a field of it is read, changes.
// 2: pods.later, messages, times; 3: no startTime relation for a Job ever
// suspended; 4: no completionTime relation (2026-11-29); 5: requests;
// 6: noise bounded by the built-in's values (NoiseValues, issue #70).
const Format = 6

// Placeholders of what two runs name differently.
const (
	jobUID         = "<job-uid>"
	trackingFinal  = "<tracking-finalizer>"
	serviceAccount = "kube-api-access-<random>"
)

// Observe reads an Observation from a recording of the Job named job whose
// pods the controller tracks with finalizer ("" for none).
func Observe(t timeline.Timeline, job, finalizer string) *Observation {
	return ObserveWith(t, job, finalizer, nil)
}

// ObserveWith is Observe of a recording whose watches broke during gaps
// (an apiserver restart, a control-plane change): a pod first seen in a
// gap was not seen as created — created and finished while the watch was
// down, its tracking finalizer already gone — and is counted in Late, its
// shape not kept.
func ObserveWith(t timeline.Timeline, job, finalizer string, gaps []timeline.Span) *Observation {
	o := &Observation{Final: map[string]string{}, Pods: map[string]int{}, Events: map[string]int{}, Gap: len(gaps) > 0, Format: Format}
	seenCond := map[string]bool{}
	seenPod := map[string]bool{}
	jobUIDs := map[string]bool{}
	var last *batchv1.Job
	deleted := false
	cuts := map[string]time.Time{} // Job UID → when its deletion was asked for
	var endAt time.Time            // when the Job first showed a condition of its end
	said, names, stamps := messages{}, &placeholders{}, newTimes()
	names.generatedFrom(job)
	for _, e := range t {
		switch e.Kind {
		case "Job":
			j := e.Job()
			if j == nil || e.Name != job { // e.Name: a dispatched Job's copy is recorded as <name>@worker
				continue
			}
			jobUIDs[string(j.UID)] = true
			if j.DeletionTimestamp != nil || e.Type == timeline.Deleted {
				if _, ok := cuts[string(j.UID)]; !ok {
					cuts[string(j.UID)] = e.Time
				}
				deleted = true
				continue
			}
			last, deleted = j, false
			said.conditions(j)
			stamps.job(j, e.Time)
			names.name(string(j.UID), jobUID)
			names.name(j.Namespace+"/", "<namespace>/")
			names.name(`"`+j.Namespace+`"`, `"<namespace>"`) // an apiserver's refusal: in the namespace "…"
			peak(o, "active", &j.Status.Active)
			peak(o, "ready", j.Status.Ready)
			peak(o, "terminating", j.Status.Terminating)
			for _, c := range j.Status.Conditions {
				if endAt.IsZero() && ends(c) {
					endAt = e.Time // the Job's end, as endRace reads it
				}
				k := condition(c)
				if !seenCond[k] {
					seenCond[k] = true
					o.Conditions = append(o.Conditions, k)
				}
			}
		case "Event":
			ev, ok := e.Object.(*corev1.Event)
			if !ok || ev.InvolvedObject.Kind != "Job" || ev.InvolvedObject.Name != job || e.Type == timeline.Deleted {
				continue
			}
			// An event's count grows in place: keep each event's latest.
			o.Events[ev.Type+"/"+ev.Reason+"#"+ev.Name] = int(max(ev.Count, 1))
			said.event(ev)
		}
	}
	pods := map[string]*podVersions{}
	for _, e := range t {
		p := e.Pod()
		if p == nil {
			continue
		}
		if v := pods[string(p.UID)]; v != nil {
			v.see(e)
			continue
		}
		if seenPod[string(p.UID)] || !ownedBy(p, jobUIDs) {
			continue
		}
		seenPod[string(p.UID)] = true
		names.name(p.Name, "<pod>")
		stamps.pod(p)
		if slices.ContainsFunc(gaps, func(g timeline.Span) bool { return g.Contains(e.Time) }) {
			o.Late++
		} else {
			o.Pods[Shape(p, jobUIDs, finalizer)]++
			v := &podVersions{first: p, last: p, cut: cuts[string(metav1.GetControllerOf(p).UID)]}
			v.see(e) // a first version that is the pod's deletion holds no finalizer either
			pods[string(p.UID)] = v
		}
		if ix, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]; ok {
			if o.PerIndex == nil {
				o.PerIndex = map[string]int{}
			}
			o.PerIndex[ix]++
		}
	}
	o.EndRace = endRace(t, jobUIDs, cuts, endAt)
	o.Later = map[string]int{}
	for _, v := range pods {
		o.Later[later(v, jobUIDs, finalizer)]++
	}
	o.Events = sumEvents(o.Events)
	o.Messages = said.joined(names)
	if last != nil {
		o.Times = stamps.relations()
		o.Final = final(last.Status)
		o.Job = JobShape(last, jobUIDs)
	}
	if deleted {
		o.Final["deleted"] = "yes"
	}
	c, zero := clockOf(t, job, cuts)
	switch {
	case len(gaps) > 0:
		o.Untimed = "the recording had a gap"
	case c == nil:
		o.Untimed = fmt.Sprintf("more than %d things to time", clockLimit)
	default:
		o.Clocks, o.clockZero = []Clock{c}, zero
	}
	return o
}

// PeakCompared is the one peak compared, and only against a built-in that
// ran twice (Runs ≥ 2: explore, --oracle-twice, the chaos suite with
// another controller under test), its own spread excused as noise, and
// one way: a controller whose status shows more active pods than the
// built-in's ever did (terminating pods counted as active, a pod beyond
// parallelism) differs; one that shows fewer does not — a controller
// slower than upstream (fewer pods a sync) or writing its status at other
// moments may never show the built-in's peak, and breaks no promise. The
// ready and terminating peaks are recorded, not compared: how many pods a
// status write finds ready or terminating depends on when it is made
// (upstream's pod events wait a 1 s batch).
const PeakCompared = "active"

// PeaksSaid are the peaks compared as PeakCompared is, above the
// built-in's whole spread, and said, not held (issue #70, values on the
// way): measured first, on the correct reference, for how often a status
// written at other moments shows more (peakSaid); the built-in's own
// runs learn their spread as noise.
var PeaksSaid = []string{"ready", "terminating"}

// peakSaid is why a PeaksSaid difference does not fail the run.
const peakSaid = "said, not held: a peak of ready or terminating above every run of the built-in's; how many pods a status write finds ready or terminating depends on when it is made, and how often a correct controller shows more is being measured (docs/oracle.md, Values on the way)"

// peak raises o's peak of field to *n (nil: the field is not written).
func peak(o *Observation, field string, n *int32) {
	if n == nil {
		return
	}
	if o.Peaks == nil {
		o.Peaks = map[string]int{}
	}
	o.Peaks[field] = max(o.Peaks[field], int(*n))
}

func condition(c batchv1.JobCondition) string {
	return fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason)
}

// sumEvents adds up the latest counts of each type/reason's events.
func sumEvents(byName map[string]int) map[string]int {
	out := map[string]int{}
	for k, n := range byName {
		reason, _, _ := strings.Cut(k, "#")
		out[reason] += n
	}
	return out
}

func ownedBy(p *corev1.Pod, jobs map[string]bool) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.Kind == "Job" && jobs[string(ref.UID)]
}

// final is the status's every field, canonical.
func final(s batchv1.JobStatus) map[string]string {
	out := map[string]string{
		"active":           strconv.Itoa(int(s.Active)),
		"succeeded":        strconv.Itoa(int(s.Succeeded)),
		"failed":           strconv.Itoa(int(s.Failed)),
		"ready":            optional(s.Ready),
		"terminating":      optional(s.Terminating),
		"completedIndexes": s.CompletedIndexes,
		"failedIndexes":    "<unset>",
		"startTime":        set(s.StartTime != nil),
		"completionTime":   set(s.CompletionTime != nil),
	}
	if s.FailedIndexes != nil {
		out["failedIndexes"] = *s.FailedIndexes
	}
	u := 0
	if s.UncountedTerminatedPods != nil {
		u = len(s.UncountedTerminatedPods.Succeeded) + len(s.UncountedTerminatedPods.Failed)
	}
	out["uncountedTerminatedPods"] = strconv.Itoa(u)
	var conds []string
	for _, c := range s.Conditions {
		conds = append(conds, condition(c))
	}
	out["conditions"] = strings.Join(conds, ", ")
	return out
}

func optional(n *int32) string {
	if n == nil {
		return "<unset>"
	}
	return strconv.Itoa(int(*n))
}

func set(b bool) string {
	if b {
		return "set"
	}
	return "<unset>"
}
