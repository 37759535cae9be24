package scenarios

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

const valid = `
name: ok
description: d
features: [podReplacementPolicy]
job: {parallelism: 1, completions: 1, podReplacementPolicy: Failed}
pods: {run: 2s, exitCode: 1, sigterm: {delay: 5s}, byIndex: {"1": {run: forever}}}
steps:
- await: {active: 1, conditions: [FailureTarget/BackoffLimitExceeded]}
- act: {kind: deletePod, index: 0}
  versions: ">=1.32.0"
`

func TestParseValid(t *testing.T) {
	s, err := Parse([]byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	if *s.Job.PodReplacementPolicy != batchv1.Failed || s.Steps[1].Act.Kind != ActDeletePod || *s.Steps[1].Act.Index != 0 {
		t.Fatalf("parsed %+v", s)
	}
	b, err := s.Pods.Behavior()
	if err != nil || b.SIGTERMDelay.Seconds() != 5 || b.ByIndex[1].Run != nil {
		t.Fatalf("behaviour %+v, %v", b, err)
	}
}

func TestParseErrorsSayWhatAndWhere(t *testing.T) {
	cases := map[string]string{
		"unknown field":     strings.Replace(valid, "description: d", "descripton: d", 1),
		"unknown feature":   strings.Replace(valid, "[podReplacementPolicy]", "[speed]", 1),
		"bad action":        strings.Replace(valid, "kind: deletePod", "kind: explode", 1),
		"bad condition":     strings.Replace(valid, "FailureTarget/Backoff", "Finished/Backoff", 1),
		"bad duration":      strings.Replace(valid, "run: 2s", "run: two seconds", 1),
		"bad version":       strings.Replace(valid, ">=1.32.0", "~>1.32", 1),
		"no steps":          valid[:strings.Index(valid, "steps:")],
		"await and act":     strings.Replace(valid, "- act: {kind: deletePod, index: 0}", "- act: {kind: deletePod}\n  await: {active: 1}", 1),
		"exit code forever": strings.Replace(valid, "run: 2s, exitCode: 1", "exitCode: 1", 1),
		"bad chaos":         strings.Replace(valid, "- act: {kind: deletePod, index: 0}", "- chaos: {evict: {mode: most}}", 1),
	}
	want := map[string]string{
		"unknown field": "descripton", "unknown feature": `"speed" is not one of`, "bad action": `act.kind "explode"`,
		"bad condition": `condition "Finished/BackoffLimitExceeded"`, "bad duration": "run \"two seconds\"",
		"bad version": "~>1.32", "no steps": "steps:", "await and act": "exactly one of await, awaitGone, act or chaos",
		"exit code forever": "needs a finite run", "bad chaos": `steps[1]: chaos: mode "most"`,
	}
	for name, doc := range cases {
		_, err := Parse([]byte(doc))
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if !strings.Contains(err.Error(), want[name]) {
			t.Errorf("%s: error %q does not mention %q", name, err, want[name])
		}
	}
}

func TestApplies(t *testing.T) {
	if _, err := Applies("<1.34.10 ||", "v1.34.0"); err == nil {
		t.Error("an empty alternative must be an error")
	}
	for _, c := range []struct {
		constraint, v string
		want          bool
	}{
		{"", "v1.31.0", true}, {">=1.32.0", "v1.31.14", false}, {">=1.32.0", "v1.37.1", true},
		{">=1.31.0 <1.34.0", "v1.34.3", false}, {">=1.31.0, <1.34.0", "v1.33.13", true}, {"=1.34.4", "v1.34.4", true},
		{"<1.34.10 || >=1.35.0 <1.35.8", "v1.34.12", false}, {"<1.34.10 || >=1.35.0 <1.35.8", "v1.35.6", true},
		{"<1.34.10 || >=1.35.0 <1.35.8", "v1.34.9", true}, {"<1.34.10 || >=1.35.0 <1.35.8", "v1.36.0", false},
	} {
		got, err := Applies(c.constraint, c.v)
		if err != nil || got != c.want {
			t.Errorf("Applies(%q, %s) = %v, %v; want %v", c.constraint, c.v, got, err, c.want)
		}
	}
}

func TestStatusPattern(t *testing.T) {
	s := batchv1.JobStatus{Active: 1, Ready: ptr.To[int32](1), Terminating: ptr.To[int32](0),
		Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded"}}}
	if ok, why := (StatusPattern{Active: ptr.To[int32](1), Conditions: []string{"FailureTarget/DeadlineExceeded"}}).Matches(s); !ok {
		t.Errorf("should match: %s", why)
	}
	if ok, why := (StatusPattern{Conditions: []string{"FailureTarget/BackoffLimitExceeded"}}).Matches(s); ok || !strings.Contains(why, "no condition") {
		t.Errorf("reason must matter: %v %s", ok, why)
	}
	if ok, _ := (StatusPattern{NotConditions: []string{"FailureTarget"}}).Matches(s); ok {
		t.Error("notConditions ignored")
	}
	if ok, why := (StatusPattern{Terminating: ptr.To[int32](0)}).Matches(batchv1.JobStatus{}); ok || why != "terminating is not reported" {
		t.Errorf("an unreported terminating must not match 0: %v %q", ok, why)
	}
	if ok, _ := (StatusPattern{Empty: true}).Matches(batchv1.JobStatus{}); !ok {
		t.Error("empty status")
	}
	// finished: Complete or Failed, not FailureTarget alone, nor a False one.
	for cond, want := range map[batchv1.JobConditionType]bool{batchv1.JobComplete: true, batchv1.JobFailed: true, batchv1.JobFailureTarget: false, batchv1.JobSuccessCriteriaMet: false} {
		for st, w := range map[corev1.ConditionStatus]bool{corev1.ConditionTrue: want, corev1.ConditionFalse: false} {
			got, _ := (StatusPattern{Finished: true}).Matches(batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: cond, Status: st}}})
			if got != w {
				t.Errorf("finished on %s=%s: %v, want %v", cond, st, got, w)
			}
		}
	}
}
