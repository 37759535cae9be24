package mutants

// oracleMutants are the faults no invariant names, each written for one of
// the differential verdict's comparisons (docs/oracle.md): only the
// comparison with the built-in's run catches them.
var oracleMutants = []Mutant{
	{Name: "label-the-job", Suite: "conformance", Labels: "tracking",
		Breaks: "labels each Job it writes the status of (jobconform.io/synced=true), through the status write itself (the apiserver keeps a Job's metadata changes there): metadata a Job controller must not write; no invariant names it, the differential verdict's job.* fields do",
		Edits: []Edit{
			{"sync.go", "\tout, err := c.client.BatchV1().Jobs(job.Namespace).UpdateStatus(ctx, job, metav1.UpdateOptions{})\n",
				"\tif job.Labels == nil {\n\t\tjob.Labels = map[string]string{}\n\t}\n\tjob.Labels[\"jobconform.io/synced\"] = \"true\"\n" +
					"\tout, err := c.client.BatchV1().Jobs(job.Namespace).UpdateStatus(ctx, job, metav1.UpdateOptions{})\n"},
		}},
	{Name: "reworded-backoff-message", Suite: "conformance", Labels: "backoff",
		Breaks: "words the BackoffLimitExceeded condition and event otherwise than upstream (\"Job failed: too many pod failures\"): the reason is right, the message a user's alert matches is not; no invariant names it, the differential verdict's messages.* fields do",
		Edits: []Edit{
			{"sync.go", `batchv1.JobReasonBackoffLimitExceeded, "Job has reached the specified backoff limit")`, `batchv1.JobReasonBackoffLimitExceeded, "Job failed: too many pod failures")`},
		}},
	{Name: "probe-time-unset", Suite: "conformance", Labels: "terminalConditions",
		Breaks: "adds its conditions without a lastProbeTime (upstream writes it with the lastTransitionTime): a timestamp left unset; no invariant names it, the differential verdict's times.* fields do",
		Edits: []Edit{
			{"sync.go", "Reason: reason, Message: message, LastProbeTime: t0, LastTransitionTime: t0})", "Reason: reason, Message: message, LastTransitionTime: t0})"},
		}},
	{Name: "annotate-released-pods", Suite: "conformance", Labels: "tracking",
		Breaks: "annotates each pod it releases (jobconform.io/counted=true) in the patch that removes its tracking finalizer: a write to a pod after its creation that upstream never makes; no invariant names it, the differential verdict's pods.later fields do",
		Edits: []Edit{
			{"pods.go", "\t\t\"$deleteFromPrimitiveList/finalizers\": []string{c.finalizer},\n",
				"\t\t\"$deleteFromPrimitiveList/finalizers\": []string{c.finalizer},\n\t\t\"annotations\": map[string]string{\"jobconform.io/counted\": \"true\"},\n"},
		}},
	{Name: "background-pod-deletes", Suite: "conformance", Labels: "suspend || backoff || deadline",
		Breaks: "deletes its pods with propagationPolicy Background (upstream sends no options): a request other than upstream's that changes nothing a pod shows; no invariant names it, the differential verdict's requests fields do",
		Edits: []Edit{
			{"sync.go", "metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}}", "metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}, PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}"},
		}},
	{Name: "grace-period-cut", Suite: "conformance", Labels: "podReplacementPolicy || suspend || deadline",
		Breaks: "deletes its pods with a grace period of 1 s (upstream sends none: each pod's own terminationGracePeriodSeconds): a pod that traps SIGTERM is killed before its trap ends; issue #70's grace period cut on deletion",
		Edits: []Edit{
			{"sync.go", "metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}}", "metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}, GracePeriodSeconds: ptr.To[int64](1)}"},
		}},
	{Name: "late-after-resume", Suite: "conformance", Labels: "suspend",
		Breaks: "creates a resumed Job's pods 12 s after the resume (upstream creates them in the sync the resume queues): late, within every await; first-pods-on-time does not judge a Job once suspended, the differential verdict's delays (clock.go, the built-in run twice) do",
		Edits: []Edit{
			{"sync.go", "\tif !hasBackoffLimitPerIndex(job) {\n\t\tif wait := st.backoff.remaining(c.clock.Now()); wait > 0 {\n",
				// The resume's own sync sees Suspended still True (manageJob
				// runs before updateSuspended writes it False): wait 12 s from
				// there, and from the False condition's time after.
				"\tfor _, cond := range job.Status.Conditions {\n\t\tif cond.Type == batchv1.JobSuspended {\n\t\t\twait := 12 * time.Second\n" +
					"\t\t\tif cond.Status == corev1.ConditionFalse {\n\t\t\t\twait = cond.LastTransitionTime.Add(wait).Sub(c.clock.Now())\n\t\t\t}\n" +
					"\t\t\tif wait > 0 {\n\t\t\t\tc.queue.AddAfter(key, wait)\n\t\t\t\treturn active, errors.Join(errs...)\n\t\t\t}\n\t\t}\n\t}\n" +
					"\tif !hasBackoffLimitPerIndex(job) {\n\t\tif wait := st.backoff.remaining(c.clock.Now()); wait > 0 {\n"},
		}},
}
