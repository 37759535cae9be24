// Deliberate bugs: each a realistic mistake of a Job controller's author,
// switched on with reference-controller --inject-fault=NAME, so that the
// harness can show it catches a controller that breaks a promise (make
// mutate runs the suites against each). Never set them in earnest.

package controller

import (
	"fmt"
	"sort"
	"strings"
)

// Fault names one deliberate bug.
type Fault string

// The faults, each with the promise it breaks (Catalog).
const (
	FaultReplaceTerminating      Fault = "replace-terminating"
	FaultEarlyTerminal           Fault = "early-terminal"
	FaultStaleStartTime          Fault = "stale-start-time"
	FaultBuiltInFinalizer        Fault = "builtin-finalizer"
	FaultNoFinalizer             Fault = "no-finalizer"
	FaultCompletionAtTarget      Fault = "completion-time-at-target"
	FaultNoTerminalEvent         Fault = "no-terminal-event"
	FaultDoubleTerminalEvent     Fault = "double-terminal-event"
	FaultNoTerminatingCount      Fault = "no-terminating-count"
	FaultReadyCountsTerminated   Fault = "ready-counts-terminating"
	FaultBackoffLimitOffByOne    Fault = "backoff-limit-off-by-one"
	FaultCountIgnored            Fault = "count-ignored-failures"
	FaultIgnoreFailJob           Fault = "ignore-failjob-rule"
	FaultNoSuspendedCondition    Fault = "no-suspended-condition"
	FaultNoDeadline              Fault = "no-deadline"
	FaultIgnoreSuccessPolicy     Fault = "ignore-success-policy"
	FaultGlobalBackoffPerIndex   Fault = "global-backoff-per-index"
	FaultNoFailedIndexes         Fault = "no-failed-indexes"
	FaultWrongDeadlineReason     Fault = "wrong-deadline-reason"
	FaultReadyNeverSet           Fault = "ready-never-set"
	FaultKeepFinalizers          Fault = "keep-finalizers"
	FaultNoResumeReplacement     Fault = "no-resume-replacement"
	FaultConstantBackoff         Fault = "constant-backoff"
	FaultNoBackoff               Fault = "no-backoff"
	FaultUnfinalizeFirst         Fault = "unfinalize-before-record"
	FaultFailedWithoutTarget     Fault = "failed-without-target"
	FaultDeadlineFromCreation    Fault = "deadline-from-creation"
	FaultNoSuspendEvents         Fault = "no-suspend-events"
	FaultCountSuspendedPods      Fault = "count-suspended-pods"
	FaultActiveCountsTerminating Fault = "active-counts-terminating"
	FaultNoIndexHostname         Fault = "no-index-hostname"
	FaultOwnerWithoutBlock       Fault = "owner-without-block"
	FaultNoReleaseOnDeletion     Fault = "no-release-on-deletion"
	FaultWorkQueueRefill         Fault = "work-queue-refill"
	FaultStaleTemplate           Fault = "stale-template"
	FaultBackoffLimitFirst       Fault = "backoff-limit-first"
	FaultPerIndexOnly            Fault = "per-index-only"
	FaultDeadlineFirst           Fault = "deadline-first"
	FaultSuccessFirst            Fault = "success-first"
	FaultLastRuleWins            Fault = "last-rule-wins"
	FaultNotInAsIn               Fault = "notin-as-in"
	FaultFailedIndexFailsJob     Fault = "failed-index-fails-job"
	FaultKeepRemovedSuccesses    Fault = "keep-removed-successes"
	FaultNoScaleDown             Fault = "no-scale-down"
	FaultAdoptWithoutFinalizer   Fault = "adopt-without-finalizer"
	FaultNoRelease               Fault = "no-release"
	FaultStealPods               Fault = "steal-pods"
	FaultKeepBadIndexes          Fault = "keep-bad-indexes"
	FaultStaleIndexFailureCount  Fault = "stale-index-failure-count"
	FaultFinishedMetricAtTarget  Fault = "finished-metric-at-target"
	FaultStartSuspendedOnRestart Fault = "start-suspended-on-restart"
	FaultReleaseFailedAtOnce     Fault = "release-failed-at-once"
	FaultRemoveReadyFirst        Fault = "remove-ready-first"
	FaultKeepBackoffOnRecreate   Fault = "keep-backoff-on-recreate"
	FaultManagedByAtEnqueueOnly  Fault = "managed-by-at-enqueue-only"
	FaultPolicySkipsDeleted      Fault = "policy-skips-deleted"
)

// Catalog says what each fault breaks.
var Catalog = map[Fault]string{
	FaultReplaceTerminating:      "creates replacements while pods still terminate, even under podReplacementPolicy Failed",
	FaultEarlyTerminal:           "writes Failed/Complete as soon as every finished pod is counted, without waiting for terminating pods (reporting none)",
	FaultStaleStartTime:          "keeps startTime across a suspension and a resume (neither clears nor resets it)",
	FaultBuiltInFinalizer:        "tracks its pods with the built-in's reserved batch.kubernetes.io/job-tracking finalizer",
	FaultNoFinalizer:             "creates pods without a tracking finalizer",
	FaultCompletionAtTarget:      "sets completionTime to SuccessCriteriaMet's time instead of Complete's",
	FaultNoTerminalEvent:         "records no event when the Job finishes",
	FaultDoubleTerminalEvent:     "records the terminal event twice",
	FaultNoTerminatingCount:      "reports status.terminating as 0 whatever terminates",
	FaultReadyCountsTerminated:   "counts ready pods that are terminating in status.ready",
	FaultBackoffLimitOffByOne:    "fails the Job when failed reaches backoffLimit instead of exceeding it",
	FaultCountIgnored:            "counts failures a podFailurePolicy Ignore rule matches",
	FaultIgnoreFailJob:           "ignores podFailurePolicy FailJob rules (counts the failure instead)",
	FaultNoSuspendedCondition:    "suspends (deletes the pods) without the Suspended condition",
	FaultNoDeadline:              "never enforces activeDeadlineSeconds",
	FaultIgnoreSuccessPolicy:     "ignores successPolicy (waits for every completion)",
	FaultGlobalBackoffPerIndex:   "applies backoffLimitPerIndex to the whole Job (fails it after that many failures in all)",
	FaultNoFailedIndexes:         "never reports status.failedIndexes",
	FaultWrongDeadlineReason:     "gives a passed deadline the reason BackoffLimitExceeded",
	FaultReadyNeverSet:           "never writes status.ready",
	FaultKeepFinalizers:          "keeps the tracking finalizer on pods the Job deletes when it finishes",
	FaultNoResumeReplacement:     "does not create pods again after a resume",
	FaultConstantBackoff:         "waits 10s before every replacement: the pod-failure backoff never doubles",
	FaultNoBackoff:               "replaces failed pods at once, with no pod-failure backoff",
	FaultUnfinalizeFirst:         "removes a finished pod's tracking finalizer before the status write that records it (a crash between the two loses the pod)",
	FaultFailedWithoutTarget:     "skips the interim FailureTarget condition and writes Failed alone once the pods are gone",
	FaultDeadlineFromCreation:    "counts activeDeadlineSeconds from the Job's creation, not from its (resumed) start",
	FaultNoSuspendEvents:         "records no Suspended or Resumed event",
	FaultCountSuspendedPods:      "counts the pods a suspension deletes as failures (and backs off after the resume)",
	FaultActiveCountsTerminating: "counts pods being deleted (not yet finished) in status.active",
	FaultNoIndexHostname:         "gives an Indexed Job's pods no hostname $(job-name)-$(index)",
	FaultOwnerWithoutBlock:       "owns its pods without blockOwnerDeletion (foreground deletion of the Job would not wait for them)",
	FaultBackoffLimitFirst:       "checks the backoff limit before the pod failure policy: a FailJob failure that also exhausts backoffLimit gets reason BackoffLimitExceeded",
	FaultPerIndexOnly:            "with backoffLimitPerIndex, ignores the global backoffLimit",
	FaultDeadlineFirst:           "checks the deadline before the backoff limit: a sync that sees both gives reason DeadlineExceeded",
	FaultSuccessFirst:            "evaluates the success policy before any failure: a FailureTarget or a FailJob failure loses to a met successPolicy",
	FaultLastRuleWins:            "applies the last matching pod failure policy rule instead of the first",
	FaultNotInAsIn:               "reads a pod failure policy's NotIn operator as In",
	FaultFailedIndexFailsJob:     "fails the Job (FailedIndexes) as soon as one index fails, before the other indexes finish",
	FaultKeepRemovedSuccesses:    "keeps counting the successes of indexes an elastic scale-down removed",
	FaultNoScaleDown:             "never deletes pods above a lowered parallelism",
	FaultAdoptWithoutFinalizer:   "adopts orphans without adding the tracking finalizer (their end may go uncounted)",
	FaultNoRelease:               "keeps owning pods whose labels no longer match the selector",
	FaultStealPods:               "adopts matching pods that another object controls",
	FaultKeepBadIndexes:          "removes pods with a duplicate, missing or out-of-range index only when there are too many pods",
	FaultStaleIndexFailureCount:  "writes job-index-failure-count 0 on every pod (the annotation never counts the index's failures)",
	FaultFinishedMetricAtTarget:  "counts a Job as finished in job_controller_jobs_finished_total at FailureTarget or SuccessCriteriaMet too (twice in all)",
	FaultStartSuspendedOnRestart: "after a restart, creates pods for the suspended Jobs it finds (spec.suspend is honoured only for Jobs created since it started)",
	FaultReleaseFailedAtOnce:     "with backoffLimitPerIndex, removes a failed pod's tracking finalizer at once instead of keeping it until the index's replacement exists",
	FaultRemoveReadyFirst:        "removes surplus pods most advanced first (ready before not ready, running before pending)",
	FaultPolicySkipsDeleted:      "counts a failed pod that is being deleted as a plain failure, without its pod failure policy (its exit code's FailJob rule is missed)",
	FaultManagedByAtEnqueueOnly:  "checks spec.managedBy only when it queues a Job, not when the sync runs: a sync queued for a Job runs on a Job delegated elsewhere created since under its name",
	FaultKeepBackoffOnRecreate:   "forgets a Job's pod-failure backoff only when the Job finishes, not when it is deleted: a Job created again under its name waits out its predecessor's backoff before its first pod",
	FaultStaleTemplate:           "creates pods from the pod template as it first saw it, ignoring changes made while the Job was suspended",
	FaultWorkQueueRefill:         "keeps a work-queue Job (no completions) at parallelism after a pod has succeeded",
	FaultNoReleaseOnDeletion:     "keeps the tracking finalizer on the pods of a Job that is gone (they stay Terminating)",
}

// Faults lists the catalog's names, sorted.
func Faults() []Fault {
	var out []Fault
	for f := range Catalog {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// FaultSet is the faults a controller runs with.
type FaultSet map[Fault]bool

// Has tells whether f is on.
func (s FaultSet) Has(f Fault) bool { return s[f] }

// Set turns on a fault by name (a flag.Value's Set).
func (s FaultSet) Set(name string) error {
	if _, ok := Catalog[Fault(name)]; !ok {
		var names []string
		for _, f := range Faults() {
			names = append(names, string(f))
		}
		return fmt.Errorf("unknown fault %q: use one of %s", name, strings.Join(names, ", "))
	}
	s[Fault(name)] = true
	return nil
}

// String lists the faults that are on.
func (s FaultSet) String() string {
	var names []string
	for f := range s {
		names = append(names, string(f))
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}
