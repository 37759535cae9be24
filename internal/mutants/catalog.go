package mutants

import "slices"

// catalog: each mutant's Suite and Labels select the scenarios that
// exercise the code it breaks (the chaos suite's for the promises that show
// only when the controller is down while two things happen). The edits are
// written against controller/ as it is: each Old is a fragment found once in
// its file (tabs and all), each New what the author of the broken controller
// wrote instead.
var catalog = slices.Concat(checkedMutants, containerMutants, timingMutants, oracleMutants)

// checkedMutants are the faults the invariants or the scenarios' steps
// name (some caught by the differential verdict too).
var checkedMutants = []Mutant{
	{Name: "replace-terminating", Suite: "conformance", Labels: "podReplacementPolicy",
		Breaks: "creates replacements while pods still terminate, even under podReplacementPolicy Failed",
		Edits: []Edit{
			{"sync.go", "if c.onlyReplaceFailed(job) {\n\t\tholding = st.terminating", "if false {\n\t\tholding = st.terminating"},
			{"sync.go", "if c.onlyReplaceFailed(st.job) {", "if false {"},
		}},
	{Name: "early-terminal", Suite: "conformance", Labels: "terminalConditions",
		Breaks: "writes Failed/Complete as soon as every finished pod is counted, without waiting for terminating pods (reporting none)",
		Edits: []Edit{
			// As a controller that does not track terminating pods would
			// (the apiserver refuses terminating>0 with a terminal condition).
			{"tracking_utils.go", "if st.terminating > 0 {\n\t\treturn false\n\t}", "if st.terminating > 0 {\n\t\tst.job.Status.Terminating = ptr.To[int32](0)\n\t}"},
		}},
	{Name: "forget-failed-indexes", Suite: "conformance", Labels: "backoffPerIndex",
		Breaks: "rebuilds failedIndexes from the failed pods it still tracks, so an index leaves the list once its pod's finalizer is released",
		Edits:  []Edit{{"indexed_job_utils.go", "prev = parseIndexes(*job.Status.FailedIndexes, completions)", `prev = parseIndexes("", completions)`}}},
	{Name: "scale-down-by-creation", Suite: "conformance", Labels: "elastic",
		Breaks: "ranks the pods a scale-down removes by creation alone: not by when they became ready, nor, among equals, by index",
		Edits: []Edit{
			{"pods.go", "if isIndexed(job) {\n\t\t// Upstream ranks", "if false {\n\t\t// Upstream ranks"},
			{"pods.go", "if podReady(a) {\n\t\tif ta, tb", "if false {\n\t\tif ta, tb"},
		}},
	{Name: "stale-start-time", Suite: "conformance", Labels: "suspend",
		Breaks: "keeps startTime across a suspension and a resume (neither clears nor resets it)",
		Edits: []Edit{
			{"sync.go", "job.Status.StartTime = nil", ""},
			{"sync.go", "job.Status.StartTime = ptr.To(metav1.NewTime(now))", ""},
		}},
	{Name: "builtin-finalizer", Suite: "conformance", Labels: "tracking",
		Breaks: "tracks its pods with the built-in's reserved batch.kubernetes.io/job-tracking finalizer",
		Edits: []Edit{
			{"controller.go", "c.finalizer = TrackingFinalizer", "c.finalizer = batchv1.JobTrackingFinalizer"},
		}},
	{Name: "no-finalizer", Suite: "conformance", Labels: "tracking",
		Breaks: "creates pods without a tracking finalizer",
		Edits: []Edit{
			{"sync.go", "pod := newPod(job, ix, c.finalizer)", `pod := newPod(job, ix, "")`},
			{"pods.go", `meta["finalizers"] = []string{c.finalizer}`, ""},
		}},
	{Name: "completion-time-at-target", Suite: "conformance", Labels: "terminalConditions || successPolicy",
		Breaks: "sets completionTime to SuccessCriteriaMet's time instead of Complete's",
		Edits: []Edit{
			{"tracking_utils.go", "st.job.Status.CompletionTime = ptr.To(condition(st.job, batchv1.JobComplete).LastTransitionTime)",
				"st.job.Status.CompletionTime = ptr.To(condition(st.job, batchv1.JobComplete).LastTransitionTime)\n\t\tif sc := condition(st.job, batchv1.JobSuccessCriteriaMet); sc != nil {\n\t\t\tst.job.Status.CompletionTime = ptr.To(sc.LastTransitionTime)\n\t\t}"},
		}},
	{Name: "no-terminal-event", Suite: "conformance", Labels: "terminalConditions",
		Breaks: "records no event when the Job finishes",
		Edits: []Edit{
			{"tracking_utils.go", "c.recordFinished(job, st.finished)", ""},
		}},
	{Name: "double-terminal-event", Suite: "conformance", Labels: "terminalConditions",
		Breaks: "records the terminal event twice",
		Edits: []Edit{
			{"tracking_utils.go", "c.recordFinished(job, st.finished)", "c.recordFinished(job, st.finished)\n\t\t\tc.recordFinished(job, st.finished)"},
		}},
	{Name: "no-terminating-count", Suite: "conformance", Labels: "podReplacementPolicy",
		Breaks: "reports status.terminating as 0 whatever terminates",
		Edits: []Edit{
			{"sync.go", "want = ptr.To(n)", "want = ptr.To[int32](0)"},
		}},
	{Name: "terminating-refreshed-every-9s", Suite: "conformance", Labels: "podReplacementPolicy",
		Breaks: "counts terminating pods at most every 9s: status writes in between carry the last count",
		Edits: []Edit{
			{"sync.go", "// setTerminating writes status.terminating unless", "var terminatingCounted sync.Map // job UID → when its terminating pods were last counted\n\n// setTerminating writes status.terminating unless"},
			{"sync.go", "\tchanged := !ptr.Equal(want, job.Status.Terminating)\n\tjob.Status.Terminating = want", "\tif at, ok := terminatingCounted.Load(job.UID); ok && c.clock.Since(at.(time.Time)) < 9*time.Second && job.Status.Terminating != nil {\n\t\treturn false\n\t}\n\tterminatingCounted.Store(job.UID, c.clock.Now())\n\tchanged := !ptr.Equal(want, job.Status.Terminating)\n\tjob.Status.Terminating = want"},
		}},
	{Name: "ready-counts-terminating", Suite: "conformance", Labels: "readiness",
		Breaks: "counts ready pods that are terminating in status.ready",
		Edits: []Edit{
			{"sync.go", "st.terminating++", "st.terminating++\n\t\t\tif podReady(p) {\n\t\t\t\tst.ready++\n\t\t\t}"},
		}},
	{Name: "backoff-limit-off-by-one", Suite: "conformance", Labels: "backoff",
		Breaks: "fails the Job when failed reaches backoffLimit instead of exceeding it",
		Edits: []Edit{
			{"sync.go", "case st.failed > *job.Spec.BackoffLimit || pastBackoffLimitOnFailure(job, st.pods):",
				"case st.failed > *job.Spec.BackoffLimit || pastBackoffLimitOnFailure(job, st.pods) || (st.failed == *job.Spec.BackoffLimit && st.failed > 0):"},
		}},
	{Name: "count-ignored-failures", Suite: "conformance", Labels: "podFailurePolicy",
		Breaks: "counts failures a podFailurePolicy Ignore rule matches",
		Edits: []Edit{
			{"pod_failure_policy.go", "return nil, false, &action", "count := batchv1.PodFailurePolicyActionCount\n\t\t\treturn nil, true, &count"},
		}},
	{Name: "ignore-failjob-rule", Suite: "conformance", Labels: "podFailurePolicy",
		Breaks: "ignores podFailurePolicy FailJob rules (counts the failure instead)",
		Edits: []Edit{
			{"pod_failure_policy.go", "return &msg, true, &action", "_, count := msg, batchv1.PodFailurePolicyActionCount\n\t\t\treturn nil, true, &count"},
		}},
	{Name: "no-suspended-condition", Suite: "conformance", Labels: "suspend",
		Breaks: "suspends (deletes the pods) without the Suspended condition",
		Edits: []Edit{
			// The condition is set but not flushed: it reaches the apiserver
			// only with a write made for another reason.
			{"sync.go", `changed := setCondition(job, batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended", now)`,
				`changed := setCondition(job, batchv1.JobSuspended, corev1.ConditionTrue, "JobSuspended", "Job suspended", now)` + "\n\t\tif true {\n\t\t\treturn false\n\t\t}"},
		}},
	{Name: "no-deadline", Suite: "conformance", Labels: "deadline",
		Breaks: "never enforces activeDeadlineSeconds",
		Edits: []Edit{
			{"sync.go", "if job.Spec.ActiveDeadlineSeconds == nil || job.Status.StartTime == nil || suspended(job) {", "if true {"},
		}},
	{Name: "ignore-success-policy", Suite: "conformance", Labels: "successPolicy",
		Breaks: "ignores successPolicy (waits for every completion)",
		Edits: []Edit{
			{"sync.go", "st.succeededIndexes); met {", "st.succeededIndexes); met && false {"},
		}},
	{Name: "global-backoff-per-index", Suite: "conformance", Labels: "backoffPerIndex",
		Breaks: "applies backoffLimitPerIndex to the whole Job (fails it after that many failures in all)",
		Edits: []Edit{
			{"sync.go", "case st.failed > *job.Spec.BackoffLimit || pastBackoffLimitOnFailure(job, st.pods):",
				"case st.failed > *job.Spec.BackoffLimit || pastBackoffLimitOnFailure(job, st.pods) || (hasBackoffLimitPerIndex(job) && st.failed > *job.Spec.BackoffLimitPerIndex):"},
		}},
	{Name: "no-failed-indexes", Suite: "conformance", Labels: "backoffPerIndex",
		Breaks: "never reports status.failedIndexes",
		Edits: []Edit{
			{"tracking_utils.go", "failedIndexes = ptr.To(st.failedIdx.String())", "failedIndexes = nil"},
		}},
	{Name: "wrong-deadline-reason", Suite: "conformance", Labels: "deadline",
		Breaks: "gives a passed deadline the reason BackoffLimitExceeded",
		Edits: []Edit{
			{"sync.go", `batchv1.JobReasonDeadlineExceeded, "Job was active`, `batchv1.JobReasonBackoffLimitExceeded, "Job was active`},
		}},
	{Name: "ready-never-set", Suite: "conformance", Labels: "readiness",
		Breaks: "never writes status.ready",
		Edits: []Edit{
			{"sync.go", "job.Status.Ready = ptr.To(st.ready)", "job.Status.Ready = nil"},
		}},
	{Name: "keep-finalizers", Suite: "conformance", Labels: "tracking || terminalConditions || successPolicy",
		Breaks: "keeps the tracking finalizer on pods the Job deletes when it finishes",
		Edits: []Edit{
			{"tracking_utils.go", "toUnfinalize = append(toUnfinalize, p)",
				"if st.finished != nil && p.Status.Phase != corev1.PodSucceeded && !failed {\n\t\t\tcontinue\n\t\t}\n\t\ttoUnfinalize = append(toUnfinalize, p)"},
		}},
	{Name: "no-resume-replacement", Suite: "conformance", Labels: "suspend",
		Breaks: "does not create pods again after a resume",
		Edits: []Edit{
			// Once suspended, never create pods again (they come back in the
			// very sync that resumes, before Suspended=False is written).
			{"sync.go", "parallelism := ptr.Deref(job.Spec.Parallelism, 1)",
				"for _, cond := range job.Status.Conditions {\n\t\tif cond.Type == batchv1.JobSuspended {\n\t\t\treturn active, nil\n\t\t}\n\t}\n\tparallelism := ptr.Deref(job.Spec.Parallelism, 1)"},
		}},
	{Name: "constant-backoff", Suite: "conformance", Labels: "backoff",
		Breaks: "waits 10s before every replacement: the pod-failure backoff never doubles",
		Edits: []Edit{
			{"sync.go", "if wait := st.backoff.remaining(c.clock.Now()); wait > 0 {",
				"backoff := st.backoff\n\t\tbackoff.failuresAfterLastSuccess = min(backoff.failuresAfterLastSuccess, 1)\n\t\tif wait := backoff.remaining(c.clock.Now()); wait > 0 {"},
		}},
	{Name: "no-backoff", Suite: "conformance", Labels: "backoff",
		Breaks: "replaces failed pods at once, with no pod-failure backoff",
		Edits: []Edit{
			{"sync.go", "if wait := st.backoff.remaining(c.clock.Now()); wait > 0 {", "if wait := st.backoff.remaining(c.clock.Now()); wait > 0 && false {"},
		}},
	{Name: "unfinalize-before-record", Suite: "conformance", Labels: "tracking || terminalConditions",
		Breaks: "removes a finished pod's tracking finalizer before the status write that records it (a crash between the two loses the pod)",
		Edits: []Edit{
			{"tracking_utils.go", "var rmErr error", "var rmErr error\n\trmErr = c.removeFinalizers(ctx, key, toUnfinalize, withFinalizer)\n\ttoUnfinalize = nil"},
		}},
	{Name: "unfinalize-despite-refused-status", Suite: "conformance", Labels: "tracking",
		Breaks: "removes finished pods' tracking finalizers even when the status write that records them was refused (nothing holds their count)",
		Edits: []Edit{
			{"tracking_utils.go", "return fmt.Errorf(\"adding uncounted pods to status: %w\", err)",
				"_ = c.removeFinalizers(ctx, key, toUnfinalize, withFinalizer)\n\t\t\treturn fmt.Errorf(\"adding uncounted pods to status: %w\", err)"},
		}},
	{Name: "failed-without-target", Suite: "conformance", Labels: "terminalConditions",
		Breaks: "skips the interim FailureTarget condition and writes Failed alone once the pods are gone",
		Edits: []Edit{
			{"tracking_utils.go", "if condition(job, batchv1.JobFailureTarget) == nil {", "if false {"},
		}},
	{Name: "deadline-from-creation", Suite: "conformance", Labels: "deadline",
		Breaks: "counts activeDeadlineSeconds from the Job's creation, not from its (resumed) start",
		Edits: []Edit{
			{"sync.go", "return c.clock.Since(job.Status.StartTime.Time) >= ", "return c.clock.Since(job.CreationTimestamp.Time) >= "},
		}},
	{Name: "no-suspend-events", Suite: "conformance", Labels: "suspend",
		Breaks: "records no Suspended or Resumed event",
		Edits: []Edit{
			{"sync.go", `st.events = append(st.events, event{corev1.EventTypeNormal, "Suspended", "Job suspended"})`, ""},
			{"sync.go", `st.events = append(st.events, event{corev1.EventTypeNormal, "Resumed", "Job resumed"})`, ""},
		}},
	{Name: "count-suspended-pods", Suite: "conformance", Labels: "suspend",
		Breaks: "counts the pods a suspension deletes as failures (and backs off after the resume)",
		Edits: []Edit{
			{"sync.go", "c.deletePods(ctx, key, job, st.active, true)", "c.deletePods(ctx, key, job, st.active, false)"},
		}},
	{Name: "active-counts-terminating", Suite: "conformance", Labels: "podReplacementPolicy",
		Breaks: "counts pods being deleted (not yet finished) in status.active",
		Edits: []Edit{
			{"sync.go", "needsFlush := suspendChanged ||",
				"for _, p := range pods {\n\t\tif podTerminating(p) {\n\t\t\tactive++\n\t\t}\n\t}\n\tneedsFlush := suspendChanged ||"},
		}},
	{Name: "no-index-hostname", Suite: "conformance", Labels: "backoffPerIndex || successPolicy",
		Breaks: "gives an Indexed Job's pods no hostname $(job-name)-$(index)",
		Edits: []Edit{
			{"sync.go", "pod := newPod(job, ix, c.finalizer)", "pod := newPod(job, ix, c.finalizer)\n\t\t\t\tpod.Spec.Hostname = \"\""},
		}},
	{Name: "index-env-from-annotation", Suite: "conformance", Labels: "backoffPerIndex || successPolicy",
		Breaks: "reads JOB_COMPLETION_INDEX from the index annotation, not the label the built-in uses (the same value: only the differential verdict sees it)",
		Edits: []Edit{
			{"pods.go", `FieldPath: fmt.Sprintf("metadata.labels['%s']"`, `FieldPath: fmt.Sprintf("metadata.annotations['%s']"`},
		}},
	{Name: "no-index-backoff", Suite: "conformance", Labels: "backoffPerIndex",
		Breaks: "with backoffLimitPerIndex, retries a failed index at once: no per-index pod-failure backoff",
		Edits: []Edit{
			{"sync.go", "indexes = c.indexesPastBackoff(key, st, indexes)", "_ = c.indexesPastBackoff"},
		}},
	{Name: "count-success-removals", Suite: "conformance", Labels: "successPolicy",
		Breaks: "counts the pods it deletes once a success policy is met as failed (upstream counts none of them)",
		Edits: []Edit{
			{"tracking_utils.go", "case failed || (st.finished != nil && st.finished.Type != batchv1.JobSuccessCriteriaMet):", "case failed || st.finished != nil:"},
		}},
	{Name: "over-create", Suite: "conformance", Labels: "podReplacementPolicy || backoff",
		Breaks: "creates one pod more than a NonIndexed Job needs whenever it creates, and deletes the surplus on the next sync",
		Edits: []Edit{
			{"sync.go", "diff = min(diff, int32(c.opts.MaxPodsPerSync))", "diff = min(diff+1, int32(c.opts.MaxPodsPerSync))"},
		}},
	{Name: "count-scale-down-deletions", Suite: "conformance", Labels: "elastic",
		Breaks: "deletes the pods a parallelism cut removes without releasing them first: they are counted failed, and a cut larger than backoffLimit fails the Job",
		Edits: []Edit{
			{"sync.go", "c.deletePods(ctx, key, job, victims, true)", "c.deletePods(ctx, key, job, victims, false)"},
		}},
	{Name: "no-retry-on-error", Suite: "conformance", Labels: "backoff",
		Breaks: "forgets a Job whose sync failed (a refused pod creation) instead of retrying it with the work queue's backoff",
		Edits: []Edit{
			{"controller.go", "utilruntime.HandleErrorWithContext(ctx, err, \"syncing Job\", \"key\", key)\n\tc.queue.AddRateLimited(key)", "utilruntime.HandleErrorWithContext(ctx, err, \"syncing Job\", \"key\", key)\n\tc.queue.Forget(key)"},
		}},
	{Name: "late-deadline", Suite: "conformance", Labels: "deadline",
		Breaks: "wakes a Job for its activeDeadlineSeconds 25s late: DeadlineExceeded comes late unless another event syncs the Job first",
		Edits: []Edit{
			{"sync.go", "c.queue.AddAfter(key, left)", "c.queue.AddAfter(key, left+25*time.Second)"},
		}},
	{Name: "completions-off-by-one", Suite: "conformance", Labels: "tracking",
		Breaks: "completes a Job one success short of its completions when no pod is active (between a failure and its replacement)",
		Edits: []Edit{
			{"sync.go", "complete = st.succeeded >= *job.Spec.Completions && active == 0", "complete = st.succeeded >= *job.Spec.Completions-1 && active == 0"},
		}},
	{Name: "success-count-off-by-one", Suite: "conformance", Labels: "successPolicy",
		Breaks: "meets a success policy's succeededCount one success short",
		Edits: []Edit{
			{"success_policy.go", "} else if rule.SucceededCount != nil && len(succeeded) >= int(*rule.SucceededCount) {", "} else if rule.SucceededCount != nil && len(succeeded) >= int(*rule.SucceededCount)-1 {"},
		}},
	{Name: "max-failed-indexes-off-by-one", Suite: "conformance", Labels: "backoffPerIndex",
		Breaks: "fails the Job with MaxFailedIndexesExceeded when the failed indexes reach maxFailedIndexes instead of exceeding it",
		Edits: []Edit{
			{"sync.go", "failed > int(*job.Spec.MaxFailedIndexes)", "failed > 0 && failed >= int(*job.Spec.MaxFailedIndexes)"},
		}},
	{Name: "per-index-limit-off-by-one", Suite: "conformance", Labels: "backoffPerIndex",
		Breaks: "fails an index when its failures reach backoffLimitPerIndex instead of exceeding it",
		Edits: []Edit{
			{"indexed_job_utils.go", "annotationInt(p, batchv1.JobIndexFailureCountAnnotation) >= *job.Spec.BackoffLimitPerIndex", "annotationInt(p, batchv1.JobIndexFailureCountAnnotation)+1 >= *job.Spec.BackoffLimitPerIndex"},
		}},
	{Name: "owner-without-block", Suite: "conformance", Labels: "tracking",
		Breaks: "owns its pods without blockOwnerDeletion (foreground deletion of the Job would not wait for them)",
		Edits: []Edit{
			{"sync.go", "pod := newPod(job, ix, c.finalizer)",
				"pod := newPod(job, ix, c.finalizer)\n\t\t\t\tfor i := range pod.OwnerReferences {\n\t\t\t\t\tpod.OwnerReferences[i].BlockOwnerDeletion = nil\n\t\t\t\t}"},
		}},
	{Name: "no-release-on-deletion", Suite: "conformance", Labels: "deletion",
		Breaks: "keeps the tracking finalizer on the pods of a Job that is gone (they stay Terminating)",
		Edits: []Edit{
			{"controller.go", "if !c.tracked(pod) {", "if !c.tracked(pod) || true {"},
		}},
	{Name: "highest-indexes-first", Suite: "conformance", Labels: "tracking",
		Breaks: "gives an Indexed Job's pending indexes their pods highest first, not lowest first",
		Edits: []Edit{
			{"sync.go", "for ix := 0; ix < int(*st.job.Spec.Completions) && len(out) < n; ix++ {",
				"for ix := int(*st.job.Spec.Completions) - 1; ix >= 0 && len(out) < n; ix-- {"},
		}},
	{Name: "work-queue-refill", Suite: "conformance", Labels: "tracking",
		Breaks: "keeps a work-queue Job (no completions) at parallelism after a pod has succeeded",
		Edits: []Edit{
			{"sync.go", "if st.succeeded > 0 {", "if false {"},
		}},
	{Name: "stale-template", Suite: "conformance", Labels: "suspend",
		Breaks: "creates pods from the pod template as it first saw it, ignoring changes made while the Job was suspended",
		Edits: []Edit{
			{"mutant_stale_template.go", "", staleTemplate},
			{"sync.go", "\tif jobFinished(job) {", "\tstaleTemplate(job)\n\tif jobFinished(job) {"},
			{"sync.go", "pod := newPod(job, ix, c.finalizer)", "pod := newPod(staleTemplate(job), ix, c.finalizer)"},
		}},
	{Name: "backoff-limit-first", Suite: "conformance", Labels: "podFailurePolicy",
		Breaks: "checks the backoff limit before the pod failure policy: a FailJob failure that also exhausts backoffLimit gets reason BackoffLimitExceeded",
		Edits: []Edit{
			{"sync.go", "} else if msg := c.failJobMessage(job, st.pods); msg != nil {",
				"} else if st.failed > *job.Spec.BackoffLimit {\n\t\t\tst.finished = c.newCondition(batchv1.JobFailureTarget, batchv1.JobReasonBackoffLimitExceeded, \"Job has reached the specified backoff limit\")\n\t\t} else if msg := c.failJobMessage(job, st.pods); msg != nil {"},
		}},
	{Name: "per-index-only", Suite: "conformance", Labels: "backoffPerIndex",
		Breaks: "with backoffLimitPerIndex, ignores the global backoffLimit",
		Edits: []Edit{
			{"sync.go", "case st.failed > *job.Spec.BackoffLimit || pastBackoffLimitOnFailure(job, st.pods):",
				"case (st.failed > *job.Spec.BackoffLimit && !hasBackoffLimitPerIndex(job)) || pastBackoffLimitOnFailure(job, st.pods):"},
		}},
	{Name: "deadline-first", Suite: "chaos", Labels: "deadline",
		Breaks: "checks the deadline before the backoff limit: a sync that sees both gives reason DeadlineExceeded",
		Edits: []Edit{
			{"sync.go", "case st.failed > *job.Spec.BackoffLimit || pastBackoffLimitOnFailure(job, st.pods):",
				"case c.pastActiveDeadline(job):\n\t\t\tst.finished = c.newCondition(batchv1.JobFailureTarget, batchv1.JobReasonDeadlineExceeded, \"Job was active longer than specified deadline\")\n\t\tcase st.failed > *job.Spec.BackoffLimit || pastBackoffLimitOnFailure(job, st.pods):"},
		}},
	{Name: "success-first", Suite: "chaos", Labels: "successPolicy",
		Breaks: "evaluates the success policy before any failure: a FailureTarget or a FailJob failure loses to a met successPolicy",
		Edits: []Edit{
			{"sync.go", "st.finished = condition(job, batchv1.JobSuccessCriteriaMet)",
				"st.finished = condition(job, batchv1.JobSuccessCriteriaMet)\n\tif st.finished == nil && isIndexed(job) {\n\t\t_, done := c.succeededIndexes(job, st.pods)\n\t\tif msg, met := matchSuccessPolicy(job.Spec.SuccessPolicy, int(*job.Spec.Completions), done); met {\n\t\t\tst.finished = c.newCondition(batchv1.JobSuccessCriteriaMet, batchv1.JobReasonSuccessPolicy, msg)\n\t\t}\n\t}"},
		}},
	{Name: "last-rule-wins", Suite: "conformance", Labels: "podFailurePolicy",
		Breaks: "applies the last matching pod failure policy rule instead of the first",
		Edits: []Edit{
			{"pod_failure_policy.go", "for i, rule := range policy.Rules {", "rules := slices.Clone(policy.Rules)\n\tslices.Reverse(rules)\n\tfor i, rule := range rules {"},
		}},
	{Name: "notin-as-in", Suite: "conformance", Labels: "podFailurePolicy",
		Breaks: "reads a pod failure policy's NotIn operator as In",
		Edits: []Edit{
			{"pod_failure_policy.go", "(req.Operator == batchv1.PodFailurePolicyOnExitCodesOpNotIn && !in)", "(req.Operator == batchv1.PodFailurePolicyOnExitCodesOpNotIn && in)"},
		}},
	{Name: "failed-index-fails-job", Suite: "conformance", Labels: "backoffPerIndex",
		Breaks: "fails the Job (FailedIndexes) as soon as one index fails, before the other indexes finish",
		Edits: []Edit{
			{"sync.go", "} else if failed > 0 && failed+len(st.succeededIndexes) >= completions {", "} else if _ = completions; failed > 0 {"},
		}},
	{Name: "keep-removed-successes", Suite: "conformance", Labels: "elastic",
		Breaks: "keeps counting the successes of indexes an elastic scale-down removed",
		Edits: []Edit{
			{"sync.go", "prev = parseIndexes(job.Status.CompletedIndexes, completions)", "prev = parseIndexes(job.Status.CompletedIndexes, 1<<31-1)"},
		}},
	{Name: "no-scale-down", Suite: "conformance", Labels: "elastic",
		Breaks: "never deletes pods above a lowered parallelism",
		Edits: []Edit{
			{"sync.go", "extra := max(active-want, 0)", "extra := max(active-want, 0)\n\tif !isIndexed(job) && st.finished == nil {\n\t\textra = 0\n\t}"},
		}},
	{Name: "adopt-without-finalizer", Suite: "conformance", Labels: "adoption",
		Breaks: "adopts orphans without adding the tracking finalizer (their end may go uncounted)",
		Edits: []Edit{
			{"pods.go", `meta["finalizers"] = []string{c.finalizer}`, ""},
		}},
	{Name: "no-release", Suite: "conformance", Labels: "adoption",
		Breaks: "keeps owning pods whose labels no longer match the selector",
		Edits: []Edit{
			{"pods.go", "if job.DeletionTimestamp == nil {\n\t\t\tif err := c.releasePod(ctx, job, p); err != nil {", "if false {\n\t\t\tif err := c.releasePod(ctx, job, p); err != nil {"},
		}},
	{Name: "steal-pods", Suite: "conformance", Labels: "adoption",
		Breaks: "adopts matching pods that another object controls",
		Edits: []Edit{
			{"pods.go", "if metav1.GetControllerOf(p) != nil || p.DeletionTimestamp != nil {",
				"if ref := metav1.GetControllerOf(p); (ref != nil && ref.UID == job.UID) || p.DeletionTimestamp != nil {"},
			// A merge patch replaces the other controller's reference
			// instead of merging beside it.
			{"pods.go", "out, err := c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch",
				"out, err := c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch"},
		}},
	{Name: "keep-bad-indexes", Suite: "conformance", Labels: "adoption",
		Breaks: "removes pods with a duplicate, missing or out-of-range index only when there are too many pods",
		Edits: []Edit{
			{"pods.go", "if isIndexed(job) {\n\t\tkept := map[int]bool{}", "if false {\n\t\tkept := map[int]bool{}"},
		}},
	{Name: "stale-index-failure-count", Suite: "conformance", Labels: "backoffPerIndex",
		Breaks: "writes job-index-failure-count 0 on every pod (the annotation never counts the index's failures)",
		Edits: []Edit{
			{"sync.go", "count, ignored := c.nextIndexFailureCounts(job, st.delayed[ix])",
				"count, ignored := c.nextIndexFailureCounts(job, st.delayed[ix])\n\t\t\t\t\tcount, ignored = 0, 0"},
		}},
	{Name: "finished-metric-at-target", Suite: "conformance", Labels: "metrics",
		Breaks: "counts a Job as finished in job_controller_jobs_finished_total at FailureTarget or SuccessCriteriaMet too (twice in all)",
		Edits: []Edit{
			{"tracking_utils.go", "c.backoff.update(key, st.backoff)",
				"c.backoff.update(key, st.backoff)\n\t\tif interim {\n\t\t\tfor _, t := range []batchv1.JobConditionType{batchv1.JobFailureTarget, batchv1.JobSuccessCriteriaMet} {\n\t\t\t\tif cond := condition(job, t); cond != nil {\n\t\t\t\t\tc.recordJobFinished(job, cond)\n\t\t\t\t}\n\t\t\t}\n\t\t}"},
		}},
	{Name: "start-suspended-on-restart", Suite: "chaos", Labels: "suspend",
		Breaks: "after a restart, creates pods for the suspended Jobs it finds (spec.suspend is honoured only for Jobs created since it started)",
		Edits: []Edit{
			{"mutant_started.go", "", "package controller\n\nimport \"time\"\n\n// mutantStarted is when the process started.\nvar mutantStarted = time.Now()\n"},
			{"sync.go", "if suspended(job) {\n\t\t// Pods a suspension removes", "if suspended(job) && !job.CreationTimestamp.Time.Before(mutantStarted) {\n\t\t// Pods a suspension removes"},
		}},
	{Name: "release-failed-at-once", Suite: "conformance", Labels: "backoffPerIndex",
		Breaks: "with backoffLimitPerIndex, removes a failed pod's tracking finalizer at once instead of keeping it until the index's replacement exists",
		Edits: []Edit{
			{"tracking_utils.go", "st.delayed[completionIndex(p)] == p {", "st.delayed[completionIndex(p)] == p && false {"},
		}},
	{Name: "remove-ready-first", Suite: "conformance", Labels: "elastic",
		Breaks: "removes surplus pods most advanced first (ready before not ready, running before pending)",
		Edits: []Edit{
			{"pods.go", "return lessValuable(sorted[i], sorted[j])", "return lessValuable(sorted[j], sorted[i])"},
		}},
	{Name: "keep-backoff-on-recreate", Suite: "conformance", Labels: "deletion && backoff",
		Breaks: "forgets a Job's pod-failure backoff only when the Job finishes, not when it is deleted: a Job created again under its name waits out its predecessor's backoff before its first pod",
		Edits: []Edit{
			{"controller.go", "c.backoff.remove(jobKey(job))", ""},
			{"controller.go", "c.stale.forget(jobKey(job))", ""},
			{"controller.go", "c.backoff.remove(key)", ""},
		}},
	{Name: "managed-by-at-enqueue-only", Suite: "conformance", Labels: "deletion && managedBy",
		Breaks: "checks spec.managedBy only when it queues a Job, not when the sync runs: a sync queued for a Job runs on a Job delegated elsewhere created since under its name",
		Edits: []Edit{
			{"stale.go", "if !c.Manages(job) {", "if false {"},
		}},
	{Name: "policy-skips-deleted", Suite: "chaos", Labels: "podFailurePolicy",
		Breaks: "counts a failed pod that is being deleted as a plain failure, without its pod failure policy (its exit code's FailJob rule is missed)",
		Edits: []Edit{
			{"pod_failure_policy.go", "func matchFailurePolicy(policy *batchv1.PodFailurePolicy, pod *corev1.Pod) (*string, bool, *batchv1.PodFailurePolicyAction) {\n",
				"func matchFailurePolicy(policy *batchv1.PodFailurePolicy, pod *corev1.Pod) (*string, bool, *batchv1.PodFailurePolicyAction) {\n\tif pod.DeletionTimestamp != nil {\n\t\tpolicy = nil\n\t}\n"},
		}},
	// The mutants below prove coverage rows that no fault above is caught
	// by (docs/coverage.md, "faults caught").
	{Name: "complete-without-criteria", Suite: "conformance", Labels: "terminalConditions",
		Breaks: "skips the interim SuccessCriteriaMet condition and writes Complete alone once the pods are gone",
		Edits: []Edit{
			{"tracking_utils.go", "if condition(job, batchv1.JobSuccessCriteriaMet) == nil {", "if false {"},
		}},
	{Name: "failindex-as-count", Suite: "conformance", Labels: "podFailurePolicy && backoffPerIndex",
		Breaks: "reads a pod failure policy's FailIndex action as Count: the index is retried up to backoffLimitPerIndex",
		Edits: []Edit{
			{"indexed_job_utils.go", "if action != nil && *action == batchv1.PodFailurePolicyActionFailIndex {\n\t\t\treturn true", "if action != nil && *action == batchv1.PodFailurePolicyActionFailIndex {\n\t\t\tcount = true"},
		}},
	{Name: "max-failed-indexes-at-end", Suite: "conformance", Labels: "backoffPerIndex",
		Breaks: "checks maxFailedIndexes only once every index has finished, not as soon as one index too many has failed",
		Edits: []Edit{
			{"sync.go", "if job.Spec.MaxFailedIndexes != nil && failed > int(*job.Spec.MaxFailedIndexes) {",
				"if job.Spec.MaxFailedIndexes != nil && failed > int(*job.Spec.MaxFailedIndexes) && failed+len(st.succeededIndexes) >= completions {"},
		}},
	{Name: "suspend-keeps-pods", Suite: "conformance", Labels: "suspend",
		Breaks: "on suspension stops creating pods but leaves the running ones running",
		Edits: []Edit{
			{"sync.go", "ready, n, err := c.deletePods(ctx, key, job, st.active, true)", "ready, n, err := int32(0), int32(0), error(nil)"},
		}},
	{Name: "suspend-once-started", Suite: "conformance", Labels: "suspend",
		Breaks: "honours spec.suspend only for a Job that has started: a Job created suspended gets its pods",
		Edits: []Edit{
			{"sync.go", "\tif suspended(job) {\n\t\t// Pods a suspension removes", "\tif suspended(job) && job.Status.StartTime != nil {\n\t\t// Pods a suspension removes"},
		}},
	{Name: "onfailure-restarts-uncounted", Suite: "conformance", Labels: "backoff",
		Breaks: "counts no container restarts under restartPolicy OnFailure: a pod that keeps failing in place never fails the Job",
		Edits: []Edit{
			{"sync.go", "case st.failed > *job.Spec.BackoffLimit || pastBackoffLimitOnFailure(job, st.pods):", "case st.failed > *job.Spec.BackoffLimit:"},
		}},
	{Name: "onfailure-restarts-off-by-one", Suite: "conformance", Labels: "backoff",
		Breaks: "fails an OnFailure Job one container restart before backoffLimit",
		Edits: []Edit{
			{"sync.go", "return restarts >= *job.Spec.BackoffLimit", "return restarts >= *job.Spec.BackoffLimit-1"},
		}},
	{Name: "condition-flip-appends", Suite: "conformance", Labels: "suspend",
		Breaks: "updates a condition in place only while its status stays: a flip to True adds a second condition of the type, a flip to False is dropped",
		Edits: []Edit{
			{"sync.go", "\t\tc := &job.Status.Conditions[i]\n\t\tif c.Type != t {", "\t\tc := &job.Status.Conditions[i]\n\t\tif c.Type != t || c.Status != s {"},
		}},
	{Name: "no-adoption", Suite: "conformance", Labels: "adoption",
		Breaks: "never adopts an orphan pod that matches a Job's selector",
		Edits: []Edit{
			{"pods.go", "\t\tif metav1.GetControllerOf(p) != nil || p.DeletionTimestamp != nil {\n\t\t\tcontinue", "\t\tif true {\n\t\t\tcontinue"},
		}},
	{Name: "no-orphan-release-on-start", Suite: "chaos", Labels: "deletion",
		Breaks: "releases a deleted Job's pods only when it sees them change: a pod listed at start, its Job deleted while the controller was down, keeps the finalizer",
		Edits: []Edit{
			{"controller.go", "\t}\n\tc.releaseOrphan(pod)\n}", "\t}\n}"},
		}},
}

// staleTemplate is the stale-template mutant's memory of each Job's first
// pod template.
const staleTemplate = `package controller

import (
	"sync"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

var firstTemplates sync.Map

// staleTemplate is job with the pod template it had when first synced.
func staleTemplate(job *batchv1.Job) *batchv1.Job {
	first, _ := firstTemplates.LoadOrStore(job.UID, job.Spec.Template.DeepCopy())
	stale := job.DeepCopy()
	stale.Spec.Template = *first.(*corev1.PodTemplateSpec).DeepCopy()
	return stale
}
`
