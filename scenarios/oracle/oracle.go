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
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
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

// Shape is pod p as its controller created it, normalised: what the
// apiserver, the scheduler and the nodes add or name at random is gone, the
// Job's UID and the controller's finalizer are placeholders.
func Shape(p *corev1.Pod, jobUIDs map[string]bool, finalizer string) string {
	uid := func(s string) string {
		if jobUIDs[s] {
			return jobUID
		}
		return s
	}
	q := &corev1.Pod{}
	q.GenerateName = p.GenerateName
	q.Labels = map[string]string{}
	for k, v := range p.Labels {
		q.Labels[k] = uid(v)
	}
	q.Annotations = maps.Clone(p.Annotations)
	for _, f := range p.Finalizers {
		if f == finalizer && f != "" {
			f = trackingFinal
		}
		q.Finalizers = append(q.Finalizers, f)
	}
	for _, r := range p.OwnerReferences {
		r.UID = "" // the Job's: its name and kind stay
		q.OwnerReferences = append(q.OwnerReferences, r)
	}
	q.Spec = *p.Spec.DeepCopy()
	q.Spec.NodeName = "" // the scheduler's, sometimes already in the first version seen
	for i := range q.Spec.Volumes {
		if strings.HasPrefix(q.Spec.Volumes[i].Name, "kube-api-access-") {
			q.Spec.Volumes[i].Name = serviceAccount
		}
	}
	for _, cs := range [][]corev1.Container{q.Spec.InitContainers, q.Spec.Containers} {
		for i := range cs {
			for j := range cs[i].VolumeMounts {
				if strings.HasPrefix(cs[i].VolumeMounts[j].Name, "kube-api-access-") {
					cs[i].VolumeMounts[j].Name = serviceAccount
				}
			}
		}
	}
	data, _ := json.Marshal(struct {
		Meta metav1.ObjectMeta `json:"metadata"`
		Spec corev1.PodSpec    `json:"spec"`
	}{q.ObjectMeta, q.Spec})
	return string(data)
}

// JobShape is job's metadata (labels, annotations, finalizers, owners) and
// spec, normalised: the Job's UID a placeholder, spec.managedBy gone (the
// harness gives each controller under test its own value).
func JobShape(job *batchv1.Job, jobUIDs map[string]bool) string {
	uid := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			if jobUIDs[v] {
				v = jobUID
			}
			out[k] = v
		}
		return out
	}
	spec := job.Spec.DeepCopy()
	spec.ManagedBy = nil
	if spec.Selector != nil {
		spec.Selector.MatchLabels = uid(spec.Selector.MatchLabels)
	}
	spec.Template.Labels = uid(spec.Template.Labels)
	var owners []metav1.OwnerReference
	for _, r := range job.OwnerReferences {
		r.UID = ""
		owners = append(owners, r)
	}
	data, _ := json.Marshal(struct {
		Labels      map[string]string       `json:"labels,omitempty"`
		Annotations map[string]string       `json:"annotations,omitempty"`
		Finalizers  []string                `json:"finalizers,omitempty"`
		Owners      []metav1.OwnerReference `json:"ownerReferences,omitempty"`
		Spec        *batchv1.JobSpec        `json:"spec"`
	}{uid(job.Labels), job.Annotations, job.Finalizers, owners, spec})
	return string(data)
}

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

type fieldDiff struct{ path, a, b string }

// unmatched counts the pods of shapes a has beyond b's, and b's beyond a's.
func unmatched(a, b map[string]int) (onlyA, onlyB int) {
	for _, k := range union(a, b) {
		onlyA += max(a[k]-b[k], 0)
		onlyB += max(b[k]-a[k], 0)
	}
	return onlyA, onlyB
}

// shapeDiffs pairs the pod shapes one run created and the other did not,
// each with the other run's most alike, and names the fields in which
// they differ (metadata.annotations.x, spec.containers.0.image …); a shape
// left without a partner is named by its generateName and index.
func shapeDiffs(a, b map[string]int) []fieldDiff {
	var onlyA, onlyB []map[string]string
	for _, k := range union(a, b) {
		for n := a[k] - b[k]; n > 0; n-- {
			onlyA = append(onlyA, flatten(k))
		}
		for n := b[k] - a[k]; n > 0; n-- {
			onlyB = append(onlyB, flatten(k))
		}
	}
	seen := map[string]bool{}
	var out []fieldDiff
	for _, x := range onlyA {
		if len(onlyB) == 0 {
			out = append(out, fieldDiff{"(a pod)", describe(x), "<none>"})
			continue
		}
		best, bestN := 0, -1
		for i, y := range onlyB {
			if n := len(diffPaths(x, y)); bestN < 0 || n < bestN {
				best, bestN = i, n
			}
		}
		for _, p := range diffPaths(x, onlyB[best]) {
			d := fieldDiff{p, orNone(x, p), orNone(onlyB[best], p)}
			if k := d.path + "\x00" + d.a + "\x00" + d.b; !seen[k] { // one line for pods that differ alike
				seen[k] = true
				out = append(out, d)
			}
		}
		onlyB = slices.Delete(onlyB, best, best+1)
	}
	for _, y := range onlyB {
		out = append(out, fieldDiff{"(a pod)", "<none>", describe(y)})
	}
	return out
}

func describe(flat map[string]string) string {
	if _, ok := flat["metadata.generateName"]; !ok { // what became of a pod (later)
		data, _ := json.Marshal(flat)
		return string(data)
	}
	return fmt.Sprintf("generateName %s, index %s", orNone(flat, "metadata.generateName"), orNone(flat, "metadata.annotations."+batchv1.JobCompletionIndexAnnotation))
}

func diffPaths(x, y map[string]string) []string {
	var out []string
	for _, p := range union(x, y) {
		if vx, okx := x[p]; !okx || vx != y[p] {
			out = append(out, p)
		} else if _, oky := y[p]; !oky {
			out = append(out, p)
		}
	}
	return out
}

// flatten turns a shape's JSON into path → value (leaves as JSON).
func flatten(shape string) map[string]string {
	var v any
	out := map[string]string{}
	if json.Unmarshal([]byte(shape), &v) != nil {
		out[""] = shape
		return out
	}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, c := range t {
				walk(join(prefix, k), c)
			}
		case []any:
			for i, c := range t {
				walk(join(prefix, strconv.Itoa(i)), c)
			}
		default:
			out[prefix] = leaf(t)
		}
	}
	walk("", v)
	return out
}

// leaf is a value as JSON, "<" and ">" as they are (a placeholder in a
// verdict reads "<none>", not "\u003cnone\u003e").
func leaf(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

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

// Store keeps the built-in's observations of one release, a file per
// scenario, so that another controller's run (in another process, or in a
// later run: --oracle-from) finds its oracle.
type Store struct{ Dir string }

func (s Store) path(scenario string) string { return filepath.Join(s.Dir, scenario+".json") }

// Put writes o as scenario's oracle; the file appears whole (renamed into place).
func (s Store) Put(scenario string, o *Observation) error {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.Dir, ".put-")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path(scenario))
}

// Get reads scenario's oracle; ok is false when there is none yet.
func (s Store) Get(scenario string) (o *Observation, ok bool, err error) {
	data, err := os.ReadFile(s.path(scenario))
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	o = &Observation{}
	if err := json.Unmarshal(data, o); err != nil {
		return nil, false, fmt.Errorf("oracle %s: %w", s.path(scenario), err)
	}
	return o, true, nil
}

// Claim marks that the built-in's run of scenario has started here, so
// that another controller's run waits for it rather than running its own;
// false when it was marked already.
func (s Store) Claim(scenario string) (bool, error) {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return false, err
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, scenario+".started"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if os.IsExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, f.Close()
}

// ClaimedAt is when the built-in's run of scenario was marked started
// (ok false: it was not).
func (s Store) ClaimedAt(scenario string) (at time.Time, ok bool) {
	fi, err := os.Stat(filepath.Join(s.Dir, scenario+".started"))
	if err != nil {
		return time.Time{}, false
	}
	return fi.ModTime(), true
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
