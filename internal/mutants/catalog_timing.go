package mutants

// timingMutants are faults whose every value is right and only a time is
// wrong, or a value wrong only for a moment, which a bound alone may not
// catch (issue #70): a backoff off by half either way, a transition time
// kept, status.ready too high for a few seconds.
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
	{Name: "ready-high-for-a-moment", Suite: "conformance", Labels: "readiness",
		Breaks: "counts a pod ready for 3 s after its Ready condition last changed, whatever its status (upstream counts Ready=True alone): status.ready too high for a moment as a pod starts or turns unready, right again after",
		Edits: []Edit{
			{"pods.go", "\treturn c != nil && c.Status == corev1.ConditionTrue\n}", "\treturn c != nil && (c.Status == corev1.ConditionTrue || time.Since(c.LastTransitionTime.Time) < 3*time.Second)\n}"},
			// Every Job looked at again 3 s on: the moment passes, and
			// status.ready is right again (a fault that stays wrong is
			// caught by any await; this one is wrong only for a moment).
			{"sync.go", "\tneedsFlush := suspendChanged || active != job.Status.Active", "\tc.queue.AddAfter(key, 3*time.Second)\n\tneedsFlush := suspendChanged || active != job.Status.Active"},
		}},
}
