// The steps of a scenario: awaits on the recording, acts, chaos.

package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/chaos"
	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/internal/recorder"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/bugs"
)

// stepper is what a scenario's steps act on and wait with.
type stepper struct {
	// client reaches the Job; pods the cluster its pods run on (a
	// dispatched Job's worker, else the same).
	client, pods kubernetes.Interface
	ns           string
	rec          *recorder.Recorder
	inj          *chaos.Injector
	// version is the cluster's release; builtIn tells whether the controller
	// under test is the built-in one, whose release's known bugs a failed
	// step names.
	version string
	builtIn bool
	// controller is the controller under test, whose own known bugs (at
	// its release) a failed step names too.
	controller Controller
	// finalizer is the controller's pod tracking finalizer (awaitGone).
	finalizer string
	// copy is the name the recording gives the worker's copy of a
	// dispatched Job ("" for others).
	copy string
	// job is the Job as the scenario made it (recreateJob makes it again);
	// current, when set, is the UID of the Job the steps follow: the
	// latest made under JobName.
	job     *batchv1.Job
	current *types.UID
}

// follows tells whether e is of the Job the steps follow (or of its copy):
// after recreateJob, not of the Job deleted. A dispatched Job's recording
// grafts the copy's metadata, UID included, onto the manager's Job
// (recorder.StartMirrored), and no dispatched run recreates its Job
// (NotAcrossClusters): there every entry of the name is followed.
func (sp stepper) follows(e recorder.Entry) bool {
	if e.Kind != "Job" || !sp.awaited(e.Name) {
		return false
	}
	return e.Name != JobName || sp.copy != "" || sp.current == nil || *sp.current == "" || e.Job().UID == *sp.current
}

// awaited tells whether an await is met by a status of the Job named name:
// the Job's, or a dispatched Job's copy on the worker. A dispatcher copies
// the newest status it has seen, so the manager's Job may skip one the copy
// held for milliseconds (seen: FailureTarget alone for 33 ms on the worker,
// shown with Failed on the manager 1.3 s later); the steps follow the Job
// controller's progress, and how the manager's Job shows it is the mirror
// invariants' (each status of the copy, or a later one, within
// invariants.MirrorWithin; never one the copy did not have; in order).
func (sp stepper) awaited(name string) bool {
	return name == JobName || (sp.copy != "" && name == sp.copy)
}

// runSteps runs the steps in order until one fails.
func (sp stepper) runSteps(ctx context.Context, steps []scenarios.Step) []StepResult {
	rec := sp.rec
	var out []StepResult
	// from is the first timeline entry an await may be satisfied by: the
	// previous await's match (two awaits in a row may be met by one status),
	// or, after an act or chaos, the Job's status as it stood when that began.
	// A status from before the step that changed the Job must not satisfy an
	// await of its outcome: "active 2, ready 2" after a resume was once met by
	// the Job's status from before the suspension.
	from := 0
	for i, st := range steps {
		if len(out) > 0 && out[len(out)-1].Skipped && steps[i-1].Act != nil && restAfter[steps[i-1].Act.Kind] != "" {
			// The rest was written for what the act could not do.
			out = append(out, StepResult{Index: i, What: "the rest", Skipped: true, Time: time.Now(), Message: restAfter[steps[i-1].Act.Kind]})
			break
		}
		if st.Await == nil && st.AwaitGone == nil {
			if e, ok := rec.Latest("Job", JobName); ok {
				from = e.Seq
			}
		}
		res, matched := sp.runStep(ctx, i, st, from)
		if matched >= 0 {
			from = matched
		}
		out = append(out, res)
		if !res.OK && !res.Skipped {
			break
		}
	}
	return out
}

// runStep runs step i; an await counts the timeline's entries from
// sequence number from on and also returns the entry that met it (-1 if none).
func (sp stepper) runStep(ctx context.Context, i int, st scenarios.Step, from int) (StepResult, int) {
	res := StepResult{Index: i, Time: time.Now(), What: describeStep(st)}
	if ok, _ := scenarios.Applies(st.Versions, sp.version); !ok {
		res.Skipped, res.Message = true, "not a promise of Kubernetes "+sp.version+" (step holds for "+st.Versions+")"
		return res, -1
	}
	switch {
	case st.Chaos != nil:
		if err := sp.inj.Do(ctx, i, *st.Chaos); err != nil {
			res.Message = "the harness could not inject it (no verdict on the controller): " + err.Error()
			return res, -1
		}
		res.OK = true
		return res, -1
	case st.Act != nil:
		return sp.runAct(ctx, res, *st.Act), -1
	}
	timeout := st.Timeout.Duration
	if timeout == 0 {
		timeout = time.Minute
	}
	if st.AwaitGone != nil {
		return sp.awaitGone(ctx, res, st, timeout)
	}
	return sp.await(ctx, res, st, from, timeout)
}

// describeStep is what a step's result says it was.
func describeStep(st scenarios.Step) string {
	switch {
	case st.Await != nil:
		return "await " + describePattern(*st.Await)
	case st.AwaitGone != nil:
		return "await the Job gone and its pods " + st.AwaitGone.Pods
	case st.Act != nil:
		return "act " + st.Act.Kind
	}
	return "chaos " + st.Chaos.Describe()
}

// restAfter are the acts whose skip skips the rest of the run (and the
// run: recreateSkipped), with why: a Job made again that is not the one
// asked for, a refusal that could not be made.
var restAfter = map[string]string{
	scenarios.ActRecreateJob:      "follows a recreation that did not make the Job asked for",
	scenarios.ActRefusePodChanges: "follows a refusal that could not be made",
}

// podsUser is the identity of the controller that deletes and patches the
// Job's pods: a dispatcher's worker's built-in controller, else the
// controller under test.
func (sp stepper) podsUser() string {
	if sp.controller.Dispatched {
		return kube.JobControllerUser
	}
	return sp.controller.User
}

// unknownIdentity is why the harness does not know podsUser ("" when it
// does): a controller it did not start; or a built-in controller that a
// cluster's kube-controller-manager runs under its own identity, not the
// job-controller service account (--use-service-account-credentials, as
// kubeadm, kind and the local provider set it), whose absence says so.
func (sp stepper) unknownIdentity(ctx context.Context) string {
	user := sp.podsUser()
	if user == "" {
		return "the harness knows it for the controllers it starts (--external-command) and the built-in"
	}
	if user != kube.JobControllerUser {
		return ""
	}
	_, err := sp.pods.CoreV1().ServiceAccounts("kube-system").Get(ctx, "job-controller", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "the cluster has no kube-system/job-controller service account, so its kube-controller-manager runs the Job controller under an identity of its own"
	}
	return ""
}

// runAct does an act; finishing a pod is done once its end is seen.
func (sp stepper) runAct(ctx context.Context, res StepResult, a scenarios.Action) StepResult {
	if a.Kind == scenarios.ActRecreateJob {
		skip, err := sp.recreate(ctx, a)
		if err != nil {
			res.Message = err.Error()
			return res
		}
		res.OK, res.Skipped, res.Message = skip == "", skip != "", skip
		return res
	}
	seen := len(sp.rec.Entries())
	switch a.Kind {
	case scenarios.ActRefusePodChanges, scenarios.ActAllowPodChanges:
		if why := sp.unknownIdentity(ctx); why != "" {
			// No verdict either way: the steps after it expect the refusal.
			res.Skipped, res.Message = true, "not applicable: "+a.Kind+" needs the identity the controller's requests carry: "+why
			return res
		}
		f := func(ctx context.Context, client kubernetes.Interface, ns, user string) error {
			return refusePodChanges(ctx, client, ns, user, a.Refusing())
		}
		if a.Kind == scenarios.ActAllowPodChanges {
			f = allowPodChanges
		}
		if err := f(ctx, sp.pods, sp.ns, sp.podsUser()); err != nil {
			res.Message = err.Error()
			return res
		}
		res.OK = true
		return res
	}
	if err := act(ctx, sp.client, sp.pods, sp.ns, a); err != nil {
		res.Message = err.Error()
		return res
	}
	if a.Kind == scenarios.ActFinishPod {
		// Done once a pod's end is seen (by the controller too, within a
		// watch's delay): the step after it acts on a Job whose
		// controller has the pod's end in hand (a sync queued for it).
		if _, err := sp.rec.WaitFrom(ctx, seen, 30*time.Second, "the pod's end", func(e recorder.Entry) bool {
			p := e.Pod()
			return p != nil && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed)
		}); err != nil {
			res.Message = "the pod told to finish did not end (no verdict on the controller): " + err.Error()
			return res
		}
	}
	res.OK = true
	return res
}

// notReached says why a wait ended unmet: the step's timeout, the
// scenario's own (shorter) one, or an interrupt (Ginkgo's, --fail-fast's),
// which is no timeout: a run stopped after 10s must not read "not reached
// within 4m0s".
func notReached(ctx context.Context, timeout time.Duration) (msg string, timedOut bool) {
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return "interrupted before it was reached", false
	case ctx.Err() != nil:
		return "not reached before the scenario's own timeout ran out", true // shorter than the step's
	}
	return fmt.Sprintf("not reached within %s", timeout), true
}

// await waits for the Job's status to match st.Await within timeout, then,
// with st.Holds, for it to keep matching that long; it returns the entry
// that met it (-1 if none).
func (sp stepper) await(ctx context.Context, res StepResult, st scenarios.Step, from int, timeout time.Duration) (StepResult, int) {
	var lastWhy string
	met, err := sp.rec.WaitFrom(ctx, from, timeout, res.What, func(e recorder.Entry) bool {
		if !sp.follows(e) || e.Type == recorder.Deleted {
			return false
		}
		ok, why := st.Await.Matches(e.Job().Status)
		if !ok {
			lastWhy = why
		}
		return ok
	})
	if err != nil {
		bug := sp.knownBug(st.KnownBugs)
		res.Message, res.TimedOut = notReached(ctx, timeout)
		res.Message += fmt.Sprintf(" (last status: %s)", lastWhy) + bug
		res.KnownBug = bug != ""
		return res, -1
	}
	if hold := st.Holds.Duration; hold > 0 {
		// Met; now it must not stop matching for hold.
		broke, err := sp.rec.WaitFrom(ctx, met.Seq+1, hold, res.What+" to stop holding", func(e recorder.Entry) bool {
			if e.Kind != "Job" || e.Name != met.Name {
				return false
			}
			if e.Type == recorder.Deleted {
				lastWhy = "the Job was deleted"
				return true
			}
			ok, why := st.Await.Matches(e.Job().Status)
			lastWhy = why
			return !ok
		})
		switch {
		case err == nil:
			res.Message = fmt.Sprintf("held only %s of %s: %s", broke.Time.Sub(met.Time).Round(100*time.Millisecond), hold, lastWhy)
			return res, -1
		case errors.Is(ctx.Err(), context.Canceled):
			res.Message = fmt.Sprintf("interrupted while the status had to hold for %s", hold)
			return res, -1
		case ctx.Err() != nil:
			res.Message = fmt.Sprintf("the scenario's timeout ran out while the status had to hold for %s", hold)
			res.TimedOut = true
			return res, -1
		}
		res.What += fmt.Sprintf(", holding %s", hold)
	}
	res.OK = true
	return res, met.Seq
}

// knownBug names, for a failed step, the first of the known bugs ids that
// the controller under test has at its release: the built-in's at the
// cluster's release, another's (Kueue's) at its own; or that the cluster's
// apiserver has, whichever the controller ("" if none).
func (sp stepper) knownBug(ids []string) string {
	if bug, ok := bugs.OfApiserver(ids, sp.version); ok {
		return " — " + bug.Describe(sp.version)
	}
	if sp.builtIn {
		if bug, ok := bugs.Of(ids, sp.version); ok {
			return " — " + bug.Describe(sp.version)
		}
	}
	if r := sp.controller.Release; r != "" {
		if bug, ok := bugs.OfController(ids, sp.controller.Name, r); ok {
			return " — " + bug.Describe(r)
		}
	}
	return ""
}

// awaitGone waits until the Job has been removed from the API and its pods
// are gone, or released (none deleted since the deletion began, none keeping
// the controller's tracking finalizer or a Job's reference), or terminal
// (deleted or finished, held or not), as the step says.
// The whole recording counts: a pod's state is its last entry.
func (sp stepper) awaitGone(ctx context.Context, res StepResult, st scenarios.Step, timeout time.Duration) (StepResult, int) {
	g := *st.AwaitGone
	pods := map[string]*corev1.Pod{}
	jobGone, deleting := false, false
	var deletedOrphans []string // released pods must stay: deleted once the Job's deletion began
	why := "the Job is not gone"
	met, err := sp.rec.WaitFrom(ctx, 0, timeout, res.What, func(e recorder.Entry) bool {
		switch {
		case e.Kind == "Job" && e.Name == JobName:
			if !sp.follows(e) {
				return false // a Job deleted before a recreateJob
			}
			jobGone = jobGone || e.Type == recorder.Deleted
			deleting = deleting || jobGone || e.Job().DeletionTimestamp != nil
		case e.Kind == "Pod" && e.Type == recorder.Deleted:
			if deleting && g.Pods == scenarios.PodsReleased {
				deletedOrphans = append(deletedOrphans, e.Name)
			}
			delete(pods, e.Name)
		case e.Kind == "Pod":
			pods[e.Name] = e.Pod()
		default:
			return false
		}
		if !jobGone {
			return false
		}
		if len(deletedOrphans) > 0 {
			why = fmt.Sprintf("the Job is gone; its pods were to stay, orphaned, but were deleted: %s", strings.Join(deletedOrphans, ", "))
			return false
		}
		var left []string
		for name, p := range pods {
			// Released: no tracking finalizer, and no Job controls it
			// (the garbage collector removed the deleted Job's reference).
			owned := slices.ContainsFunc(p.OwnerReferences, func(r metav1.OwnerReference) bool { return r.Kind == "Job" && ptr.Deref(r.Controller, false) })
			switch g.Pods {
			case scenarios.PodsTerminal:
				if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
					left = append(left, name)
				}
			case scenarios.PodsGone:
				left = append(left, name)
			default:
				if slices.Contains(p.Finalizers, sp.finalizer) || owned {
					left = append(left, name)
				}
			}
		}
		sort.Strings(left)
		why = fmt.Sprintf("the Job is gone; pods not %s: %s", g.Pods, strings.Join(left, ", "))
		return len(left) == 0
	})
	if err != nil {
		bug := sp.knownBug(st.KnownBugs)
		res.Message, res.TimedOut = notReached(ctx, timeout)
		res.Message += fmt.Sprintf(" (%s)", why) + bug
		res.KnownBug = bug != ""
		return res, -1
	}
	res.OK = true
	return res, met.Seq
}

// recreate deletes the Job (Background, or with a.Propagation) and creates
// it again under its name once free, as the scenario made it (delegated to AbsentManager with
// foreignManagedBy); the steps then follow the new Job. It returns why the
// rest is no promise when the apiserver dropped the spec.managedBy asked
// for (JobManagedBy off).
func (sp stepper) recreate(ctx context.Context, a scenarios.Action) (string, error) {
	propagation := cmp.Or(a.Propagation, metav1.DeletePropagationBackground)
	if err := sp.client.BatchV1().Jobs(sp.ns).Delete(ctx, JobName, metav1.DeleteOptions{PropagationPolicy: &propagation}); err != nil {
		return "", fmt.Errorf("delete the Job: %w", err)
	}
	// Foreground: the name is free once the garbage collector has deleted
	// the pods, each with its grace and trap, and the controller has let
	// them go (their tracking finalizers).
	within := 30 * time.Second
	if propagation == metav1.DeletePropagationForeground {
		within = 3 * time.Minute
	}
	job := sp.job.DeepCopy()
	if a.ForeignManagedBy {
		job.Spec.ManagedBy = ptr.To(AbsentManager)
	}
	var created *batchv1.Job
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, within, true, func(ctx context.Context) (bool, error) {
		var err error
		created, err = sp.client.BatchV1().Jobs(sp.ns).Create(ctx, job, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return false, nil // the old Job is not removed yet
		}
		return err == nil, err
	})
	if err != nil {
		return "", fmt.Errorf("create the Job again: %w", err)
	}
	*sp.current = created.UID
	if job.Spec.ManagedBy != nil && created.Spec.ManagedBy == nil {
		return fmt.Sprintf("Kubernetes %s dropped spec.managedBy of the new Job (its JobManagedBy feature gate is off, as by default before 1.32): no delegation to judge", sp.version), nil
	}
	return "", nil
}

func describePattern(p scenarios.StatusPattern) string {
	var parts []string
	add := func(name string, v *int32) {
		if v != nil {
			parts = append(parts, fmt.Sprintf("%s=%d", name, *v))
		}
	}
	add("active", p.Active)
	add("ready", p.Ready)
	add("terminating", p.Terminating)
	add("succeeded", p.Succeeded)
	add("failed", p.Failed)
	if p.CompletedIndexes != nil {
		parts = append(parts, "completedIndexes="+orQuoted(*p.CompletedIndexes))
	}
	if p.FailedIndexes != nil {
		parts = append(parts, "failedIndexes="+orQuoted(*p.FailedIndexes))
	}
	for _, c := range p.Conditions {
		parts = append(parts, c)
	}
	for _, c := range p.NotConditions {
		parts = append(parts, "!"+c)
	}
	if p.Empty {
		parts = append(parts, "empty status")
	}
	if p.Finished {
		parts = append(parts, "finished")
	}
	return strings.Join(parts, " ")
}

// orQuoted is an index list as written, or "" for none: an empty value
// read as nothing at all in a step's description.
func orQuoted(list string) string {
	if list == "" {
		return `""`
	}
	return list
}
