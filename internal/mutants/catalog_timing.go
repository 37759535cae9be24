package mutants

// timingMutants are faults whose every value is right and only a time is
// wrong, which a bound alone may not catch (issue #70): a backoff off by
// half either way, a transition time kept.
var timingMutants = []Mutant{
	{Name: "backoff-halved", Suite: "conformance", Labels: "backoff",
		Breaks: "backs off 5s·2ⁿ⁻¹ before replacing a failed pod, where upstream waits 10s·2ⁿ⁻¹",
		Edits: []Edit{
			{"backoff_utils.go", "\td := DefaultPodFailureBackoff\n\tfor i := int32(1); i < r.failuresAfterLastSuccess; i++ {", "\td := DefaultPodFailureBackoff / 2\n\tfor i := int32(1); i < r.failuresAfterLastSuccess; i++ {"},
		}},
	{Name: "backoff-one-and-a-half", Suite: "conformance", Labels: "backoff",
		Breaks: "backs off 15s·2ⁿ⁻¹ before replacing a failed pod, where upstream waits 10s·2ⁿ⁻¹",
		Edits: []Edit{
			{"backoff_utils.go", "\td := DefaultPodFailureBackoff\n\tfor i := int32(1); i < r.failuresAfterLastSuccess; i++ {", "\td := DefaultPodFailureBackoff * 3 / 2\n\tfor i := int32(1); i < r.failuresAfterLastSuccess; i++ {"},
		}},
	{Name: "stale-transition-on-flip-back", Suite: "conformance", Labels: "suspend",
		Breaks: "moves a condition's lastTransitionTime when it turns False but not when it turns True again: a Job suspended a second time shows the time of its resume",
		Edits: []Edit{
			{"sync.go", "\t\tif c.Status != s {\n\t\t\tc.LastTransitionTime = metav1.NewTime(now)", "\t\tif c.Status != s && s == corev1.ConditionFalse {\n\t\t\tc.LastTransitionTime = metav1.NewTime(now)"},
		}},
}
