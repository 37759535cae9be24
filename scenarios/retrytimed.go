package scenarios

import (
	"maps"
	"slices"
)

// Why the counts of events a refusal makes are allowed to differ between
// two correct controllers: how many times a controller retries a refused
// write is its retry timing (its work queue's backoff, its resyncs), which
// no scenario can fix. That it records them at all is still compared: the
// oracle allows an event's count to differ, never 0 against one above.
const (
	whyRefusedCreates = "each refused creation " + whyRetried
	whyRefusedDeletes = "each refused deletion " + whyRetried
	whyRetried        = "is an event, and how many the controller tries while refused depends on its retry timing (that it records them is compared)"
	whyAnnouncedAgain = "announced again at each retry of a refused status write by a controller that records the event before the write (upstream's syncJob, v1.36.3 and v1.37.1), once by one that records it after: how many is its retry timing (that each is announced is compared)"
)

// RetryTimed are the compared fields whose counts s's refusals make the
// controller's retry timing, each with why: FailedCreate where new pods
// are refused (refusePods), FailedDelete where its pod changes are, and
// Suspended and Resumed where its status writes are (refusePodChanges).
// Derived from the steps, so a scenario cannot forget them and a shrunk
// one loses them with its refusal (seen: pod-deletions-refused-past-deadline,
// the built-in 8 FailedDelete, the reference 6).
func (s *Scenario) RetryTimed() map[string]string {
	out := map[string]string{}
	for _, st := range s.Steps {
		switch {
		case st.Act == nil:
		case st.Act.Kind == ActRefusePods:
			out["events.Warning/FailedCreate"] = whyRefusedCreates
		case st.Act.Kind == ActRefusePodChanges:
			if slices.Contains(st.Act.Refusing(), RefusePods) {
				out["events.Warning/FailedDelete"] = whyRefusedDeletes
			}
			if slices.Contains(st.Act.Refusing(), RefuseJobStatus) {
				out["events.Normal/Suspended"] = whyAnnouncedAgain
				out["events.Normal/Resumed"] = whyAnnouncedAgain
			}
		}
	}
	return out
}

// Allowed is what the oracle lets differ in s: its own oracle.differ, and
// what its refusals make retry timing (RetryTimed; the scenario's own
// reason wins where both name a field).
func (s *Scenario) Allowed() map[string]string {
	out := s.RetryTimed()
	maps.Copy(out, s.Oracle.Differ)
	if len(out) == 0 {
		return nil
	}
	return out
}
