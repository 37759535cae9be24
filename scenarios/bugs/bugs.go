// Package bugs lists the known upstream bugs of the built-in Job controller
// (and of the apiserver's Job validation, which every controller meets, and
// of the dispatchers jobconform judges, Kueue's MultiKueue) that break a
// promise jobconform checks, each with the releases it affects,
// learned by running there (or reading that release's source). A run on an
// affected release still fails: the verdict names the bug, so a user sees at
// once "your release has bug X, fixed in Y". Steps (knownBugs in a scenario)
// and invariants (Invariant.KnownBugs) refer to bugs by ID.
package bugs

import (
	"fmt"
	"sort"
	"strings"

	"github.com/jobconform/jobconform/internal/yamltypes"
)

// Bug is one upstream bug.
type Bug struct {
	// ID is the upstream issue, e.g. kubernetes/kubernetes#139428, or a
	// short name where none was found.
	ID string
	// Releases is a constraint like "<1.36.3" (yamltypes.Applies): over
	// Kubernetes releases, or over the Controller's own releases.
	Releases string
	// Controller is the controller under test that has the bug, named as
	// --controllers names it: "" is the built-in Job controller.
	Controller string
	// Read is the day (YYYY-MM-DD) the upstream state — its issue, its
	// fix, the releases that have it — was last read: a statement about
	// the world holds as of a date.
	Read string
	// Apiserver: the bug is the apiserver's (its validation of a Job's
	// status writes), so every controller judged on an affected release
	// meets it, not only the built-in.
	Apiserver bool
	// What goes wrong and where, and which releases fixed it.
	What string
	// Fields are the fields of the differential verdict (scenarios/oracle:
	// "status.active", a prefix ending in ".", a family such as
	// "pods.later") the bug changes in the built-in's run of a scenario it
	// breaks, learned by running the catalog at an affected release: such a
	// run is still the oracle for every other field, and a difference in
	// these is excused by the bug, named. None: not learned, and a run it
	// broke is no oracle at all.
	Fields []string
}

// The known bugs.
var (
	// StaleStatusDuringBackoff: manageJob returns active=0 while the
	// pod-failure backoff defers a replacement.
	StaleStatusDuringBackoff = Bug{
		ID:   "kubernetes/kubernetes#139428",
		Read: "2026-11-23",
		// Fixed by a patch of each minor: read in each release's
		// pkg/controller/job (manageJob's two backoff returns) and run there.
		Releases: "<1.34.10 || >=1.35.0 <=1.35.6 || >=1.36.0 <1.36.3",
		// The status fields it leaves stale (read in the source), and the
		// pods: learned on v1.36.2 (the conformance catalog, the built-in
		// twice, 2026-12-02), where elastic-indexed-scale-down-counting's
		// built-in, its active stale at 2, created and deleted a pod more
		// than the reference (pods.created 4 against 3, index 2 twice).
		Fields: []string{"status.active", "status.ready", "status.terminating", "status.failed",
			"pods.created", "pods.index", "pods.shape", "pods.later", "events.Normal/SuccessfulCreate",
			"events.Normal/SuccessfulDelete", "requests delete pods"},
		What: "while the pod-failure backoff defers a replacement, manageJob returns active=0, so the status write " +
			"(active=0 beside ready>0) is rejected by the apiserver from 1.32 on (written as it is on 1.31, whose validation is off) " +
			"and the status (active, terminating, failed) stays stale until the backoff ends; fixed by #139457 in v1.37.0, " +
			"cherry-picked to v1.36.3 (#139642), v1.34.10 (#139752) and 1.35 (#139751: in v1.35.8, not in v1.35.6; the module " +
			"proxy does not serve v1.35.7), never to 1.33 (#139753 closed unmerged) nor 1.31 and 1.32",
	}
	// ResumeStartTimeRejected: the resume's status write (startTime reset)
	// rejected by the apiserver once spec.suspend is already false.
	ResumeStartTimeRejected = Bug{
		ID:   "kubernetes/kubernetes#134521",
		Read: "2026-11-23",
		// Read in each release's pkg/registry/batch/job (isJobResuming) and run
		// on v1.32.5, v1.33.4, v1.34.1 (affected) and v1.33.13, v1.34.4 (fixed).
		// Since the awaits ignore the status from before the act, the resume's
		// await fails first there (the Job stays suspended; seen on v1.32.5).
		Releases: ">=1.32.0 <1.32.10 || >=1.33.0 <1.33.6 || >=1.34.0 <1.34.2",
		What: "on resume the controller resets status.startTime with Suspended=False, and the apiserver rejects the write " +
			"(\"startTime cannot be removed for unsuspended job\") because spec.suspend is already false: the Job stays " +
			"Suspended=True while the controller retries, recording a Resumed event at every attempt; fixed by #134769 in v1.35.0, " +
			"cherry-picked to v1.32.10 (#135128), v1.33.6 (#135129) and v1.34.2 (#135130) (v1.32.9, v1.33.5 and v1.34.1 lack it); " +
			"1.31 checks startTime this way only with JobManagedBy on (v1.31.4 with default gates passes)",
	}
	// DeadlineOnResume: the deadline counted from the startTime kept
	// through a suspension.
	DeadlineOnResume = Bug{
		ID:       "deadline-on-resume",
		Read:     "2026-11-28",
		Releases: "<1.36.0",
		What: "(no upstream issue found in a search of kubernetes/kubernetes issue threads, a stored subset, on the day read) a Job resumed after its deadline would have passed fails at once with DeadlineExceeded: the resume sync checks " +
			"pastActiveDeadline against the startTime kept through the suspension before it resets startTime (pkg/controller/job " +
			"syncJob); from v1.35 startTime is cleared on suspension where the MutableSchedulingDirectivesForSuspendedJobs gate is " +
			"on, which it is by default from v1.36.0",
	}
	// SuspendKilledPodFailsJob: a pod the suspension killed matches a
	// FailJob rule. Found by jobconform explore (seed 9, case 98).
	SuspendKilledPodFailsJob = Bug{
		ID:   "suspend-killed-pod-fails-job",
		Read: "2026-12-03",
		// Read in v1.31.14, v1.32.10, v1.33.13, v1.34.10, v1.35.8, v1.36.3
		// and v1.37.1 (pkg/controller/job: syncJob's getFailJobMessage,
		// deleteJobPods); run with the reproducer (scenarios/bugs/reproducers)
		// on v1.37.1 and v1.36.3, where the built-in failed it.
		Releases: "<=1.37.1",
		What: "(no upstream issue found in a search of kubernetes/kubernetes issue threads, a stored subset, on the day read; found by jobconform explore) " +
			"a Job with a podFailurePolicy FailJob rule that matches a SIGTERM's exit code (NotIn [0], a common rule) fails when suspended: " +
			"the suspension removes its pods' tracking finalizer and deletes them, but syncJob looks for a FailJob match with getFailJobMessage over every pod " +
			"still in the informer's cache, finalizer or not, so a pod killed by the suspension and seen Failed before its removal fails the Job " +
			"(FailureTarget and Failed, reason PodFailurePolicy, with status.failed 0); the counting (getNewFinishedPods) reads only pods that hold the finalizer. " +
			"A race on a bare kubelet (the killed pod sits Failed under a second before its removal, and the sync its update queues runs a second later: " +
			"a sync for another reason, such as the resume, must fall inside), certain where another finalizer holds the pod (the reproducer, scenarios/bugs/reproducers/suspend-killed-pod-fails-job.yaml, " +
			"failed on v1.37.1 and v1.36.3); read alike in every release from v1.31 to v1.37",
	}
)

// SuspendedZeroCompletionsRejected: the apiserver refuses Complete for a
// suspended Job that never started.
var SuspendedZeroCompletionsRejected = Bug{
	ID:   "kubernetes/kubernetes#132144",
	Read: "2026-11-26",
	// Read in each release's pkg/registry/batch/job/strategy.go
	// (isSuspendedWithZeroCompletions): v1.32.6 and v1.33.2 lack it,
	// v1.32.7, v1.33.3 and v1.34.0 have it, no 1.31 release (v1.31.14) does.
	// Run on v1.31.4 with JobManagedBy on: the reference controller fails.
	Releases:  "<1.32.7 || >=1.33.0 <1.33.3",
	Apiserver: true,
	What: "the strengthened status validation of JobManagedBy requires startTime of a finished Job, and a Job created " +
		"suspended with completions 0 never starts: the apiserver refuses its Complete condition (\"startTime is required for " +
		"finished job\") whichever controller writes it, and the Job stays with SuccessCriteriaMet alone; fixed by #132614 in " +
		"v1.34.0 (the rule skips a suspended Job of zero completions), cherry-picked to v1.32.7 (#132727) and v1.33.3 (#132728), " +
		"never to 1.31, where the validation is on only with the JobManagedBy gate (off by default: the built-in passes there)",
}

// RecreatedJobBackoff: a Job recreated under a deleted one's name waits
// out the deleted one's pod-failure backoff.
var RecreatedJobBackoff = Bug{
	ID:   "kubernetes/kubernetes#132042",
	Read: "2026-11-26",
	// Read in each release's pkg/controller/job (the deleteJob handler):
	// v1.31.9, v1.32.6 and v1.33.2 lack the removal, v1.31.12, v1.32.7,
	// v1.33.3 and v1.34.0 have it; the proxy serves neither v1.31.10 nor
	// v1.31.11, so the 1.31 boundary is the first release read with it.
	Releases: "<1.31.12 || >=1.32.0 <1.32.7 || >=1.33.0 <1.33.3",
	What: "the pod-failure backoff is kept per Job name and dropped only when a sync finds no Job of that name: a Job deleted " +
		"and created again at once (as JobSet restarts its Jobs) waits out its predecessor's backoff before its first pod, up to " +
		"10 minutes; fixed by #132109 (the deleteJob handler removes the record) in v1.34.0, cherry-picked to v1.33.3 and v1.32.7, " +
		"and to 1.31 by v1.31.12 (v1.31.9 lacks it; v1.31.10 and v1.31.11 could not be read here). It shows only when the " +
		"controller syncs the deleted Job's name after its successor reached its cache: v1.31.4 and v1.32.5 passed " +
		"recreate-after-failures-no-backoff here, their idle workers syncing the name at once (upstream's test deletes more " +
		"Jobs than the controller has workers); a controller that keeps the record by name whatever happens fails it every time",
}

// Kueue's MultiKueue (--controllers multikueue), over Kueue releases: read
// in v0.17.0's source and run there (docs/dispatchers.md).
var (
	// MultiKueueManualSelector: the copy refused by the worker's apiserver.
	MultiKueueManualSelector = Bug{
		ID:         "multikueue-manual-selector",
		Controller: "multikueue",
		Read:       "2026-11-28",
		Releases:   "<=0.17.0",
		What: "(no upstream issue found in a search of kubernetes-sigs/kueue issue threads, a stored subset, on the day read) MultiKueue's batch/Job adapter drops spec.selector from the copy it creates on the worker " +
			"(SyncJob in pkg/controller/jobs/job/job_multikueue_adapter.go, \"drop the selector\"), so a Job with manualSelector: true " +
			"is refused by the worker's apiserver (spec.selector: Required value) at every retry and never runs",
	}
	// MultiKueueOrphanPropagation: the orphan policy does not reach the copy.
	// Gate states read at Kueue's tags v0.17.0–v0.17.8 and v0.18.0–v0.18.1
	// (pkg/features/kube_features.go).
	MultiKueueOrphanPropagation = Bug{
		ID:         "kubernetes-sigs/kueue#15488",
		Controller: "multikueue",
		Read:       "2026-11-28",
		Releases:   "<=0.17.0",
		What: "a Job deleted with propagationPolicy Orphan leaves its pods on the worker owned by the copy: MultiKueue later " +
			"deletes the copy in the background and its pods with it, or, when Kueue misses the orphaned Workload " +
			"(kubernetes-sigs/kueue#1789: the garbage collector drops the Workload's owner reference before the Job goes, and " +
			"Kueue's job-gone clean-up finds Workloads by that reference), keeps the copy running and replacing pods with no Job " +
			"left on the manager; both seen on v0.17.0. Upstream: #15488 (opened 2026-09-11, open when read) investigates worker " +
			"clean-up after --cascade=orphan on the manager. The #1789 fix (#11596, cherry-picked as #11689) is behind the gate " +
			"FinishOrphanedWorkloads: alpha and off by default in v0.17.4–v0.17.8, Beta and on by default from v0.18.0; only " +
			"v0.17.0 was run here",
	}
	// MultiKueueWorkerTTL: a finished Job run again when the worker's TTL
	// removes its copy first. PRs read 2026-12-07: #14734 (main), #14827
	// and #14828 (the 0.18 and 0.19 backports), #15126.
	MultiKueueWorkerTTL = Bug{
		ID:         "kubernetes-sigs/kueue#14734",
		Controller: "multikueue",
		Read:       "2026-12-07",
		Releases:   "<=0.17.0",
		What: "MultiKueue copies the Job's ttlSecondsAfterFinished to the worker's copy, whose TTL-after-finished controller " +
			"can remove the finished copy before MultiKueue brings its end back: the manager's Job never shows it, and " +
			"MultiKueue, finding no copy, dispatches the Job again (seen on v0.17.0 with ttlSecondsAfterFinished 0, 2 runs of 2: " +
			"a new copy a second after the first completed, the manager's Job never Complete). Fixed by #14734 behind the gate " +
			"MultiKueueBatchJobClearingTTLSecondsAfterFinishedOnWorkerCluster, which #15126 made alpha and off by default, " +
			"as the backports to 0.18 (#14827) and 0.19 (#14828) have it; only v0.17.0 was run here",
	}
)

// All is every known bug, by ID.
var All = map[string]Bug{}

func init() {
	for _, b := range []Bug{StaleStatusDuringBackoff, ResumeStartTimeRejected, DeadlineOnResume, SuspendKilledPodFailsJob, SuspendedZeroCompletionsRejected, RecreatedJobBackoff,
		MultiKueueManualSelector, MultiKueueOrphanPropagation, MultiKueueWorkerTTL} {
		All[b.ID] = b
	}
}

// In returns the IDs of the known bugs that text (a verdict's line)
// names as Describe does, in the order of All's IDs.
func In(text string) []string {
	var out []string
	for _, id := range IDs() {
		if strings.Contains(text, "("+id+", releases ") {
			out = append(out, id)
		}
	}
	return out
}

// IDs are All's IDs, sorted.
func IDs() []string {
	out := make([]string, 0, len(All))
	for id := range All {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Affects tells whether release v has the bug.
func (b Bug) Affects(v string) bool {
	ok, err := yamltypes.Applies(b.Releases, v)
	return err == nil && ok && v != ""
}

// Describe is the bug as a verdict on release v (of Kubernetes, or of the
// bug's Controller) names it.
func (b Bug) Describe(v string) string {
	of := "Kubernetes"
	if b.Controller == "multikueue" {
		of = "Kueue"
	}
	return fmt.Sprintf("known upstream bug of %s %s (%s, releases %s): %s", of, v, b.ID, b.Releases, b.What)
}

// Of returns the first of the bugs named by ids that the built-in Job
// controller of Kubernetes release v has.
func Of(ids []string, v string) (Bug, bool) {
	return OfController(ids, "", v)
}

// OfApiserver returns the first of the bugs named by ids that the
// apiserver of Kubernetes release v has: every controller judged there
// meets it.
func OfApiserver(ids []string, v string) (Bug, bool) {
	return first(ids, v, func(b Bug) bool { return b.Apiserver })
}

// OfController returns the first of the bugs named by ids that controller
// ("" the built-in) has at its release v.
func OfController(ids []string, controller, v string) (Bug, bool) {
	return first(ids, v, func(b Bug) bool { return b.Controller == controller })
}

// first returns the first of the bugs named by ids that is whose and
// affects release v.
func first(ids []string, v string, whose func(Bug) bool) (Bug, bool) {
	for _, id := range ids {
		if b, ok := All[id]; ok && whose(b) && b.Affects(v) {
			return b, true
		}
	}
	return Bug{}, false
}

// Check reports an ID that names no known bug.
func Check(ids []string) error {
	for _, id := range ids {
		if _, ok := All[id]; !ok {
			return fmt.Errorf("knownBugs: %q is not a known bug (scenarios/bugs: %s)", id, strings.Join(IDs(), "; "))
		}
	}
	return nil
}

// Markdown is the page of the known bugs (docs/bugs.md), by ID.
func Markdown() string {
	ids := IDs()
	var b strings.Builder
	b.WriteString("# Known upstream bugs\n\n" +
		"Generated from `scenarios/bugs` by `jobconform bugs --out docs/bugs.md`; a test fails when it is stale.\n\n" +
		"The built-in Job controller of these releases (or, where the controller is named, that controller at its own\n" +
		"releases; where the apiserver is named, whatever controller runs there) breaks a promise jobconform checks. A run there still\n" +
		"fails — no release is exempted — and its verdict names the bug. Each bug's releases were read in\n" +
		"that release's source and its boundaries run on both sides (see [the release matrix](matrix.md)).\n")
	for _, id := range ids {
		bug := All[id]
		title := "`" + bug.ID + "`"
		if owner, num, ok := strings.Cut(bug.ID, "#"); ok {
			title = fmt.Sprintf("[%s](https://github.com/%s/issues/%s)", bug.ID, owner, num)
		}
		releases := "Releases"
		if bug.Apiserver {
			releases = "In the apiserver: every controller judged on these releases meets it. Releases"
		}
		if bug.Controller == "multikueue" {
			releases = "Controller: Kueue's MultiKueue (`--controllers multikueue`). Kueue releases"
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s: `%s`. Upstream state last read: %s.\n\n%s\n", title, releases, bug.Releases, bug.Read, bug.What)
		if len(bug.Fields) > 0 {
			fmt.Fprintf(&b, "\nThe differential verdict still compares with a built-in run it broke, but for the fields it changes: `%s`.\n", strings.Join(bug.Fields, "`, `"))
		}
	}
	return b.String()
}
