package scenarios

import (
	"maps"
	"slices"
	"testing"
)

// Each refusal allows the counts of the events its retries make, and
// nothing else; a scenario's own reason wins over the derived one.
func TestRetryTimed(t *testing.T) {
	act := func(kind string, refuse ...string) Step { return Step{Act: &Action{Kind: kind, Refuse: refuse}} }
	for _, c := range []struct {
		steps []Step
		want  []string
	}{
		{nil, nil},
		{[]Step{act(ActSuspend), act(ActResume)}, nil},
		{[]Step{act(ActRefusePods), act(ActAllowPods)}, []string{"events.Warning/FailedCreate"}},
		{[]Step{act(ActRefusePodChanges), act(ActAllowPodChanges)}, []string{"events.Warning/FailedDelete"}},
		{[]Step{act(ActRefusePodChanges, RefuseJobStatus)}, []string{"events.Normal/Resumed", "events.Normal/Suspended"}},
		{[]Step{act(ActRefusePodChanges, RefusePods, RefuseJobStatus), act(ActRefusePods)},
			[]string{"events.Normal/Resumed", "events.Normal/Suspended", "events.Warning/FailedCreate", "events.Warning/FailedDelete"}},
	} {
		s := &Scenario{Steps: c.steps}
		if got := slices.Sorted(maps.Keys(s.RetryTimed())); !slices.Equal(got, c.want) {
			t.Errorf("%v: allowed %v, want %v", c.steps, got, c.want)
		}
	}
	s := &Scenario{Steps: []Step{act(ActRefusePods)}, Oracle: Oracle{Differ: map[string]string{"events.Warning/FailedCreate": "own", "status.failed": "x"}}}
	if a := s.Allowed(); a["events.Warning/FailedCreate"] != "own" || a["status.failed"] != "x" || len(a) != 2 {
		t.Errorf("Allowed = %v", a)
	}
	if a := (&Scenario{}).Allowed(); a != nil {
		t.Errorf("nothing allowed: %v", a)
	}
}
