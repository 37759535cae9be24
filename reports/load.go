// Package reports turns the suites' Ginkgo JSON reports (each spec carries its
// verdict and its timeline as report entries) into what people read: one
// self-contained HTML file (verdict matrix, a timeline per run drawn as SVG,
// replacement latencies) and a Markdown summary for CI job pages.
package reports

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// Report entry names under which each spec keeps its run (suites/harness
// attaches them, Load reads them).
const (
	EntryResult   = "jobconform.result"
	EntryTimeline = "jobconform.timeline"
)

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
}

// ChaosAction is one injected disruption.
type ChaosAction struct {
	Time   string `json:"time"`
	Log    string `json:"log"`
	Effect string `json:"effect,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Event is one recorded change, reduced to what the drawings need.
type Event struct {
	Time time.Time
	Type string // ADDED, MODIFIED, DELETED
	Kind string
	Name string
	// Pods: phase and whether it is being deleted.
	Phase    string
	Deleting bool
	Created  time.Time
	// Jobs: the counters and the True conditions.
	Active, Ready, Terminating, Failed, Succeeded int32
	Conditions                                    []string
}

// Violation is a broken invariant named in a failure line.
type Violation struct {
	Invariant string
	Clock     string // HH:MM:SS.mmm as printed
	Message   string
}

var violationRE = regexp.MustCompile(`^invariant (\S+) at (\d\d:\d\d:\d\d\.\d{3}) \([^)]*\): (.*)$`)

// Result is the machine-readable verdict attached to each spec's report.
type Result struct {
	Scenario   string   `json:"scenario"`
	Controller string   `json:"controller"`
	Version    string   `json:"version"`
	Features   []string `json:"features,omitempty"`
	Failures   []string `json:"failures,omitempty"`
	Skipped    string   `json:"skipped,omitempty"`
	Seconds    float64  `json:"seconds"`
	// Seed and Chaos: the chaos seed and the actions carried out (chaos suite).
	Seed  uint64        `json:"seed,omitempty"`
	Chaos []ChaosAction `json:"chaos,omitempty"`
}

type rawEvent struct {
	Time   time.Time `json:"time"`
	Type   string    `json:"type"`
	Kind   string    `json:"kind"`
	Name   string    `json:"name"`
	Object struct {
		Metadata struct {
			DeletionTimestamp *time.Time `json:"deletionTimestamp"`
			CreationTimestamp time.Time  `json:"creationTimestamp"`
		} `json:"metadata"`
		Status struct {
			Phase       string `json:"phase"`
			Active      int32  `json:"active"`
			Ready       *int32 `json:"ready"`
			Terminating *int32 `json:"terminating"`
			Failed      int32  `json:"failed"`
			Succeeded   int32  `json:"succeeded"`
			Conditions  []struct {
				Type   string `json:"type"`
				Status string `json:"status"`
				Reason string `json:"reason"`
			} `json:"conditions"`
		} `json:"status"`
	} `json:"object"`
}

// Load reads Ginkgo JSON report files and returns their runs, ordered by
// scenario, controller and version. Specs without a jobconform result (the
// harness's own checks) are kept with their Ginkgo verdict.
func Load(paths ...string) ([]Run, error) {
	var runs []Run
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var reports []types.Report
		if err := json.Unmarshal(data, &reports); err != nil {
			return nil, fmt.Errorf("%s: not a Ginkgo JSON report: %w", p, err)
		}
		for _, rep := range reports {
			for _, sr := range rep.SpecReports {
				if sr.LeafNodeType != types.NodeTypeIt {
					continue
				}
				r, err := runOf(rep.SuiteDescription, sr)
				if err != nil {
					return nil, fmt.Errorf("%s: %s: %w", p, sr.FullText(), err)
				}
				runs = append(runs, r)
			}
		}
	}
	sort.SliceStable(runs, func(i, j int) bool {
		a, b := runs[i], runs[j]
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		if a.Controller != b.Controller {
			return a.Controller < b.Controller
		}
		return a.Version < b.Version
	})
	return runs, nil
}

func runOf(suite string, sr types.SpecReport) (Run, error) {
	r := Run{Suite: suite, Spec: sr.FullText(), Scenario: sr.LeafNodeText, Seconds: sr.RunTime.Seconds(), Features: sr.Labels()}
	switch {
	case sr.State.Is(types.SpecStateSkipped):
		r.Verdict = "skip"
	case sr.State.Is(types.SpecStateFailureStates):
		r.Verdict = "FAIL"
	default:
		r.Verdict = "PASS"
	}
	for _, e := range sr.ReportEntries {
		var s string
		if err := json.Unmarshal([]byte(e.Value.AsJSON), &s); err != nil {
			continue // not one of ours
		}
		switch e.Name {
		case EntryResult:
			var res Result
			if err := json.Unmarshal([]byte(s), &res); err != nil {
				return r, fmt.Errorf("%s entry: %w", EntryResult, err)
			}
			r.Scenario, r.Controller, r.Version, r.Failures, r.Skipped, r.Seed, r.Chaos =
				res.Scenario, res.Controller, res.Version, res.Failures, res.Skipped, res.Seed, res.Chaos
			if len(res.Features) > 0 {
				r.Features = res.Features
			}
		case EntryTimeline:
			evs, err := parseTimeline(s)
			if err != nil {
				return r, err
			}
			r.Events = evs
		}
	}
	// The verdict is on the controller: a spec that passes because it caught a
	// controller broken on purpose still shows that controller failing.
	if r.Verdict == "PASS" && len(r.Failures) > 0 {
		r.Verdict = "FAIL"
	}
	if r.Verdict == "FAIL" && len(r.Failures) == 0 && sr.Failure.Message != "" {
		r.Failures = []string{sr.Failure.Message}
	}
	for _, f := range r.Failures {
		if m := violationRE.FindStringSubmatch(f); m != nil {
			r.Violations = append(r.Violations, Violation{Invariant: m[1], Clock: m[2], Message: m[3]})
		}
	}
	return r, nil
}

func parseTimeline(lines string) ([]Event, error) {
	var out []Event
	sc := bufio.NewScanner(strings.NewReader(lines))
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var raw rawEvent
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			return nil, fmt.Errorf("timeline line: %w", err)
		}
		e := Event{Time: raw.Time, Type: raw.Type, Kind: raw.Kind, Name: raw.Name}
		st := raw.Object.Status
		switch raw.Kind {
		case "Pod":
			e.Phase, e.Deleting, e.Created = st.Phase, raw.Object.Metadata.DeletionTimestamp != nil, raw.Object.Metadata.CreationTimestamp
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
	return out, sc.Err()
}
