// Package reports turns finished runs (each spec's verdict, its Result and
// its timeline) into what people read: one self-contained HTML file (verdict
// matrix, a timeline per run drawn as SVG, replacement latencies) and a
// Markdown summary for CI job pages. It knows no test framework: the suites
// hand it Specs and the Result each run attached (suites/ginkgoreport
// reads them out of Ginkgo's JSON).
package reports

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/jobconform/jobconform/internal/starvation"
	"github.com/jobconform/jobconform/internal/timeline"
)

// Report entry names under which each spec keeps its run.
const (
	EntryResult   = "jobconform.result"
	EntryTimeline = "jobconform.timeline"
)

// Spec is what the test framework says of one spec.
type Spec struct {
	Suite   string
	Text    string // the full spec text
	Leaf    string // the spec's own text
	Labels  []string
	Verdict string // PASS, FAIL, skip
	Seconds float64
	// FailureMessage is the framework's failure, for specs that carry no Result.
	FailureMessage string
	// Interrupted: the framework stopped the spec before its end.
	Interrupted bool
}

// Run is one spec: a scenario against a controller at a Kubernetes version.
type Run struct {
	Suite      string
	Spec       string
	Scenario   string
	Controller string
	Version    string
	Features   []string
	Verdict    string // PASS, FAIL, skip
	Seconds    float64
	Failures   []string
	Skipped    string
	Seed       uint64
	Chaos      []ChaosAction
	Events     []Event
	Violations []Violation
	// Faults mark a negative control (Result.Faults); SpecVerdict is the
	// test framework's verdict on the spec, which for a control says
	// whether the harness caught the fault as it expected.
	Faults      []string
	SpecVerdict string
	// Nodes is "kubelet" for a run on real kubelet nodes.
	Nodes string
	// Gates are feature gates the cluster was given ("JobManagedBy=true").
	Gates string
	// Figures are the scale suite's measurements (nil elsewhere).
	Figures *Figures
	// MirrorLags are, for a Job a dispatcher ran on a worker cluster, how
	// late (seconds) each status of the worker's copy reached the manager's Job.
	MirrorLags []float64
	// Oracle is the differential verdict (nil: none was asked for).
	Oracle *Oracle
	// Unjudged: see Result.Unjudged.
	Unjudged []string `json:",omitempty"`
	// Again: see Result.Again.
	Again string `json:",omitempty"`
	// Starvation: see Result.Starvation.
	Starvation *starvation.Reading `json:",omitempty"`
	// Jobconform is the jobconform build that judged the run
	// (buildinfo.Info.Label; "" in reports older than issue #71).
	Jobconform string `json:",omitempty"`
	// Harness: the spec failed by the framework's failure alone, with no
	// failure of the controller's (a cluster that did not start, a harness
	// error): no verdict on the controller (jobconform run exits 3).
	Harness bool `json:",omitempty"`
	// Interrupted: the framework stopped the spec before its end (an
	// interrupt, or --fail-fast after another spec failed), so what failed
	// in it may be the stop, not the controller.
	Interrupted bool `json:",omitempty"`
}

// Control tells whether r judged a controller broken on purpose.
func (r Run) Control() bool { return len(r.Faults) > 0 }

// Caught tells whether a control's fault was caught: the controller failed
// and the spec that expected it passed.
func (r Run) Caught() bool { return r.Control() && r.Verdict == "FAIL" && r.SpecVerdict == "PASS" }

// ChaosAction is one injected disruption.
type ChaosAction struct {
	Time   string `json:"time"` // HH:MM:SS.mmm
	Log    string `json:"log"`
	Effect string `json:"effect,omitempty"`
	Error  string `json:"error,omitempty"`
	// Experiment is the Chaos Mesh experiment that carried it out, as its
	// own records tell it (a line per record event).
	Experiment []string `json:"experiment,omitempty"`
}

// Event is one recorded change, reduced to what the drawings need.
type Event struct {
	Time time.Time
	Type string // ADDED, MODIFIED, DELETED
	Kind string
	Name string
	// Pods: phase and whether it is being deleted; Ready, and the first
	// container's exit code and reason once terminated; the completion index.
	Phase    string
	Deleting bool
	Created  time.Time
	PodReady bool
	ExitCode *int32
	Reason   string
	Index    string
	// Jobs: the counters and the True conditions.
	Active, Ready, Terminating, Failed, Succeeded int32
	Conditions                                    []string
}

// Violation is a broken invariant, at the change that broke it.
type Violation struct {
	Invariant string    `json:"invariant"`
	Time      time.Time `json:"time"`
	Seq       int       `json:"seq"`
	Revision  uint64    `json:"revision,omitempty"`
	Message   string    `json:"message"`
}

// Result is the machine-readable verdict each spec attaches (EntryResult).
type Result struct {
	Scenario   string   `json:"scenario"`
	Controller string   `json:"controller"`
	Version    string   `json:"version"`
	Features   []string `json:"features,omitempty"`
	// Failures are every broken step and invariant, a line each, for people.
	Failures []string `json:"failures,omitempty"`
	// Violations are the broken invariants among them, typed.
	Violations []Violation `json:"violations,omitempty"`
	Skipped    string      `json:"skipped,omitempty"`
	Seconds    float64     `json:"seconds"`
	// Seed and Chaos: the chaos seed and the actions carried out (chaos suite).
	Seed  uint64        `json:"seed,omitempty"`
	Chaos []ChaosAction `json:"chaos,omitempty"`
	// Faults: the controller was broken on purpose (a negative control, or a
	// mutant of make mutate); its failures are the harness catching it.
	Faults []string `json:"faults,omitempty"`
	// Nodes is "kubelet" for a run on real kubelet nodes, "" on kwok nodes.
	Nodes string `json:"nodes,omitempty"`
	// Gates are the feature gates the cluster was given beyond its release's
	// defaults, e.g. "JobManagedBy=true" to judge a delegated controller on 1.31.
	Gates string `json:"gates,omitempty"`
	// Figures are the scale suite's measurements of the run.
	Figures *Figures `json:"figures,omitempty"`
	// MirrorLags: see Run.MirrorLags.
	MirrorLags []float64 `json:"mirrorLags,omitempty"`
	// Oracle is the differential verdict: the run compared with the
	// built-in's of the same scenario and release.
	Oracle *Oracle `json:"oracle,omitempty"`
	// TailPending are the invariants whose verdict on the final state the
	// recording went on for, TailWait how long (seconds).
	TailPending []string `json:"tailPending,omitempty"`
	TailWait    float64  `json:"tailWait,omitempty"`
	// Starvation is how starved the machine was while the run went on
	// (internal/starvation); nil in reports older than the meter.
	Starvation *starvation.Reading `json:"starvation,omitempty"`
	// Unjudged says what of the run a check could not judge, and why
	// ("invariant: what"): neither a failure nor a pass.
	Unjudged []string `json:"unjudged,omitempty"`
	// Jobconform is the build of jobconform that judged the run
	// (buildinfo.Info.Label).
	Jobconform string `json:"jobconform,omitempty"`
	// Again says why this run was made again and how the first run,
	// which it stands in for, failed ("": it was not).
	Again string `json:"again,omitempty"`
}

// Oracle is a run's differential verdict: every field in which it differed
// from the built-in's run (the allowed ones with the scenario's reason), or
// why it was not compared.
type Oracle struct {
	// Compared: the run was compared with the built-in's (with no
	// difference when Differences is empty); else Note says why not.
	Compared    bool         `json:"compared,omitempty"`
	Note        string       `json:"note,omitempty"`
	Differences []Difference `json:"differences,omitempty"`
	// Timed: a compared run's delays were compared too (oracle.md,
	// Timing); else Untimed says why not ("" in a report from before).
	Timed   bool   `json:"timed,omitempty"`
	Untimed string `json:"untimed,omitempty"`
}

// Difference is one field two runs disagree on.
type Difference struct {
	Field   string `json:"field"`
	BuiltIn string `json:"builtin"`
	Other   string `json:"other"`
	Allowed string `json:"allowed,omitempty"`
}

// NewRun joins a spec with the Result it attached (nil: the harness's own
// checks, kept with the framework's verdict) and its timeline lines.
func NewRun(s Spec, res *Result, lines string) (Run, error) {
	r := Run{Suite: s.Suite, Spec: s.Text, Scenario: s.Leaf, Seconds: s.Seconds, Features: s.Labels, Verdict: s.Verdict, SpecVerdict: s.Verdict, Interrupted: s.Interrupted}
	if res != nil {
		r.Scenario, r.Controller, r.Version, r.Failures, r.Skipped, r.Seed, r.Chaos, r.Violations, r.Faults, r.Nodes, r.Gates =
			res.Scenario, res.Controller, res.Version, res.Failures, res.Skipped, res.Seed, res.Chaos, res.Violations, res.Faults, res.Nodes, res.Gates
		r.Jobconform = res.Jobconform
		r.Figures, r.MirrorLags, r.Oracle, r.Unjudged, r.Starvation, r.Again = res.Figures, res.MirrorLags, res.Oracle, res.Unjudged, res.Starvation, res.Again
		if res.Seconds > 0 {
			// The scenario's own time: a drill's flight is judged by a
			// spec of its own after it flew, which takes no time.
			r.Seconds = res.Seconds
		}
		if len(res.Features) > 0 {
			r.Features = res.Features
		}
	}
	if lines != "" {
		evs, err := parseTimeline(lines)
		if err != nil {
			return r, err
		}
		r.Events = evs
	}
	// The verdict is on the controller: a spec that passes because it caught a
	// controller broken on purpose still shows that controller failing.
	if r.Verdict == "PASS" && len(r.Failures) > 0 {
		r.Verdict = "FAIL"
	}
	if r.Verdict == "FAIL" && len(r.Failures) == 0 && s.FailureMessage != "" {
		r.Failures, r.Harness = []string{s.FailureMessage}, !r.Control()
	}
	return r, nil
}

// Sort orders runs by scenario, controller and version.
func Sort(runs []Run) {
	sort.SliceStable(runs, func(i, j int) bool {
		a, b := runs[i], runs[j]
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		if a.Controller != b.Controller {
			return a.Controller < b.Controller
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.Nodes < b.Nodes
	})
}

// object is what the drawings read of a timeline line's object.
type object struct {
	Metadata struct {
		DeletionTimestamp *time.Time        `json:"deletionTimestamp,omitempty"`
		CreationTimestamp time.Time         `json:"creationTimestamp"`
		Annotations       map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
	Status struct {
		Phase       string      `json:"phase,omitempty"`
		Active      int32       `json:"active,omitempty"`
		Ready       *int32      `json:"ready,omitempty"`
		Terminating *int32      `json:"terminating,omitempty"`
		Failed      int32       `json:"failed,omitempty"`
		Succeeded   int32       `json:"succeeded,omitempty"`
		Conditions  []condition `json:"conditions,omitempty"`
		// ContainerStatuses: the first container's, as far as drawn.
		ContainerStatuses []containerStatus `json:"containerStatuses,omitempty"`
	} `json:"status"`
}

type condition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

type containerStatus struct {
	State struct {
		Terminated *terminated `json:"terminated,omitempty"`
	} `json:"state"`
}

type terminated struct {
	ExitCode int32  `json:"exitCode"`
	Reason   string `json:"reason,omitempty"`
}

// CompactLines is t as timeline.Lines writes it, with only what the
// reports draw: the Jobs' and pods' entries, each object cut down to the
// fields object holds, and a pod's change left out when none of those
// changed. A scale run's recording, 10,000 pods, is otherwise hundreds of
// megabytes in every report file and in the suite's memory.
func CompactLines(t timeline.Timeline) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	last := map[string]string{} // pod → its last compact object
	for _, e := range t {
		var o object
		switch obj := e.Object.(type) {
		case *corev1.Pod:
			o = podObject(obj)
		case *batchv1.Job:
			o = jobObject(obj)
		default:
			continue
		}
		data, err := json.Marshal(o)
		if err != nil {
			return "", err
		}
		if e.Kind == "Pod" {
			if e.Type == timeline.Modified && last[e.Name] == string(data) {
				continue
			}
			last[e.Name] = string(data)
		}
		if err := enc.Encode(timeline.Line{Time: e.Time, Type: e.Type, Kind: e.Kind, Name: e.Name, Object: data}); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

func podObject(p *corev1.Pod) object {
	var o object
	if p.DeletionTimestamp != nil {
		o.Metadata.DeletionTimestamp = &p.DeletionTimestamp.Time
	}
	o.Metadata.CreationTimestamp = p.CreationTimestamp.Time
	if ix, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]; ok {
		o.Metadata.Annotations = map[string]string{batchv1.JobCompletionIndexAnnotation: ix}
	}
	o.Status.Phase = string(p.Status.Phase)
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			o.Status.Conditions = append(o.Status.Conditions, condition{Type: string(c.Type), Status: string(c.Status)})
		}
	}
	if len(p.Status.ContainerStatuses) > 0 {
		var cs containerStatus
		if t := p.Status.ContainerStatuses[0].State.Terminated; t != nil {
			cs.State.Terminated = &terminated{ExitCode: t.ExitCode, Reason: t.Reason}
		}
		o.Status.ContainerStatuses = []containerStatus{cs}
	}
	return o
}

func jobObject(j *batchv1.Job) object {
	var o object
	o.Metadata.CreationTimestamp = j.CreationTimestamp.Time
	st := j.Status
	o.Status.Active, o.Status.Ready, o.Status.Terminating, o.Status.Failed, o.Status.Succeeded = st.Active, st.Ready, st.Terminating, st.Failed, st.Succeeded
	for _, c := range st.Conditions {
		o.Status.Conditions = append(o.Status.Conditions, condition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason})
	}
	return o
}

func parseTimeline(lines string) ([]Event, error) {
	parsed, err := timeline.ParseLines(lines)
	if err != nil {
		return nil, err
	}
	var out []Event
	for _, l := range parsed {
		var o object
		if err := json.Unmarshal(l.Object, &o); err != nil {
			return nil, fmt.Errorf("timeline %s %s: %w", l.Kind, l.Name, err)
		}
		e := Event{Time: l.Time, Type: string(l.Type), Kind: l.Kind, Name: l.Name}
		st := o.Status
		switch l.Kind {
		case "Pod":
			e.Phase, e.Deleting, e.Created = st.Phase, o.Metadata.DeletionTimestamp != nil, o.Metadata.CreationTimestamp
			e.Index = o.Metadata.Annotations["batch.kubernetes.io/job-completion-index"]
			for _, c := range st.Conditions {
				if c.Type == "Ready" {
					e.PodReady = c.Status == "True"
				}
			}
			if len(st.ContainerStatuses) > 0 {
				if t := st.ContainerStatuses[0].State.Terminated; t != nil {
					e.ExitCode, e.Reason = &t.ExitCode, t.Reason
				}
			}
		case "Job":
			e.Active, e.Failed, e.Succeeded = st.Active, st.Failed, st.Succeeded
			if st.Ready != nil {
				e.Ready = *st.Ready
			}
			if st.Terminating != nil {
				e.Terminating = *st.Terminating
			}
			for _, c := range st.Conditions {
				if c.Status == "True" {
					e.Conditions = append(e.Conditions, c.Type)
				}
			}
		default:
			continue
		}
		out = append(out, e)
	}
	return out, nil
}
