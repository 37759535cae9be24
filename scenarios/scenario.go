// Package scenarios is the scenario model: a Job, what its pods do, a plan of
// steps (wait for a status, act on the Job or its pods) and the Kubernetes
// versions each expectation holds for. Scenarios are written in YAML (the
// catalog lives in scenarios/catalog) so users add them without Go. This
// package knows nothing of Ginkgo or of clusters; suites/ runs scenarios.
package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/jobconform/jobconform/chaos"
	"github.com/jobconform/jobconform/internal/pods"
	"github.com/jobconform/jobconform/internal/yamltypes"
	"github.com/jobconform/jobconform/scenarios/bugs"
)

// Features are the labels scenarios may carry (Ginkgo --label-filter).
var Features = []string{
	"podReplacementPolicy", "terminalConditions", "managedBy", "readiness", "podFailurePolicy",
	"backoff", "backoffPerIndex", "successPolicy", "suspend", "deadline", "elastic", "tracking",
	"deletion", "adoption", "metrics",
}

// Scenario is one catalog entry.
type Scenario struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Features    []string `json:"features"`
	// Versions limits the Kubernetes releases the scenario applies to, e.g. ">=1.32.0".
	Versions string `json:"versions,omitempty"`
	// Controllers limits the scenario to controllers of these names (builtin,
	// reference, ...), e.g. for gates only the reference controller can flip.
	Controllers []string `json:"controllers,omitempty"`
	// Nodes limits the scenario to clusters whose nodes are of this kind:
	// "kwok" for a Job of more pods than real kubelet nodes on one machine
	// can run side by side with the other scenarios.
	Nodes string `json:"nodes,omitempty"`
	// Serial runs the scenario alone on the shared cluster, after the others
	// (a Job of hundreds of pods slows the controllers beside it, and their
	// scenarios time what the controllers do).
	Serial bool `json:"serial,omitempty"`
	// Metrics compares the controller's job_controller_* counters, read before
	// the Job is created and after the run, with the recording
	// (metrics-agree). Counters are the controller's, not the Job's: the
	// scenario must be serial, and without chaos (a restart resets them).
	Metrics bool `json:"metrics,omitempty"`
	// ForeignManagedBy gives the Job a spec.managedBy no controller answers to:
	// the scenario checks that the controller under test leaves it alone.
	ForeignManagedBy bool `json:"foreignManagedBy,omitempty"`
	// Job is a batch/v1 JobSpec; the template gets restartPolicy Never and the
	// pod behaviour's container unless it says otherwise.
	Job  batchv1.JobSpec `json:"job"`
	Pods PodBehavior     `json:"pods"`
	// Steps run in order; a step that is not met within its timeout fails the run.
	Steps []Step `json:"steps"`
	// Timeout bounds the whole run; default 3m.
	Timeout Duration `json:"timeout,omitempty"`
	// ReadyWithin holds status.ready to following the pods' readiness this
	// fast (the ready-follows invariant); unset: not checked.
	ReadyWithin Duration `json:"readyWithin,omitempty"`
	// Oracle says what the differential verdict (scenarios/oracle) may not
	// hold another controller to: each field that may differ from the
	// built-in's run, and why.
	Oracle Oracle `json:"oracle,omitempty"`

	File string `json:"-"` // where it was loaded from
}

// Oracle is a scenario's allowances in the differential verdict.
type Oracle struct {
	// Differ maps a compared field ("status.failed", "conditions",
	// "events.Normal/SuccessfulDelete", "pods.created", "pods.shape", or a
	// prefix ending in ".": "events.") to the reason it may differ between
	// two correct controllers in this scenario (timing the scenario cannot
	// fix). A reason is required: an allowance is a claim, read by a reviewer.
	Differ map[string]string `json:"differ,omitempty"`
	// MayLose maps an event field ("events.Normal/Suspended") to why a
	// correct controller may never have sent it in this scenario: events
	// are best-effort, and a controller killed right after a write loses
	// those it had not yet sent. Differ allows an event's count to differ,
	// never whether it was recorded at all; MayLose allows that too.
	MayLose map[string]string `json:"mayLose,omitempty"`
}

// Duration is a time.Duration written as "5s" or "1m30s" in YAML (one type
// for scenarios and their chaos steps).
type Duration = yamltypes.Duration

// PodBehavior is pods.Behavior in YAML.
type PodBehavior struct {
	// Run is how long the container runs ("forever" or empty: until stopped).
	Run      string `json:"run,omitempty"`
	ExitCode int32  `json:"exitCode,omitempty"`
	// Failures: only the container's first Failures runs in a pod exit
	// with ExitCode, later ones (restarts in place, OnFailure) exit 0.
	Failures int32 `json:"failures,omitempty"`
	SIGTERM  *struct {
		Delay    Duration `json:"delay"`
		ExitCode *int32   `json:"exitCode,omitempty"`
	} `json:"sigterm,omitempty"`
	ReadyAfter Duration                  `json:"readyAfter,omitempty"`
	Gates      []corev1.PodConditionType `json:"gates,omitempty"`
	ByIndex    map[string]PodBehavior    `json:"byIndex,omitempty"`
	// Containers are main containers beside the first ("main"): each runs
	// as it does and exits with its own code. Under restartPolicy Never.
	Containers []ContainerBehavior `json:"containers,omitempty"`
	// InitContainers run in order before the main ones, each exiting at
	// once with its code: a non-zero one fails the pod before its main
	// containers start (restartPolicy Never when one is non-zero).
	InitContainers []ContainerBehavior `json:"initContainers,omitempty"`
	// Sidecars are restartable init containers, started after the init
	// containers: each runs beside the main ones until they have ended,
	// then is stopped and exits with its exitCode (its SIGTERM trap's).
	Sidecars []ContainerBehavior `json:"sidecars,omitempty"`
}

// ContainerBehavior is a container other than the first: its name and
// the code it exits with.
type ContainerBehavior struct {
	Name     string `json:"name"`
	ExitCode int32  `json:"exitCode,omitempty"`
}

// Behavior converts to the pod builder's model.
func (p PodBehavior) Behavior() (pods.Behavior, error) {
	b := pods.RunForever()
	if p.Run != "" && p.Run != "forever" {
		d, err := time.ParseDuration(p.Run)
		if err != nil {
			return b, fmt.Errorf("run %q: write a duration like 2s, or forever", p.Run)
		}
		b = pods.RunFor(d, p.ExitCode)
	} else if p.ExitCode != 0 {
		return b, fmt.Errorf("exitCode %d needs a finite run", p.ExitCode)
	}
	b.Failures = p.Failures
	if p.SIGTERM != nil {
		code := int32(pods.DefaultSIGTERMExitCode)
		if p.SIGTERM.ExitCode != nil {
			code = *p.SIGTERM.ExitCode
		}
		b = b.TrapSIGTERM(p.SIGTERM.Delay.Duration, code)
	}
	b = b.WithReadyAfter(p.ReadyAfter.Duration).WithGates(p.Gates...)
	for _, c := range p.Containers {
		b.Containers = append(b.Containers, pods.Container{Name: c.Name, ExitCode: c.ExitCode})
	}
	for _, c := range p.InitContainers {
		b.Init = append(b.Init, pods.Container{Name: c.Name, ExitCode: c.ExitCode})
	}
	for _, c := range p.Sidecars {
		b.Sidecars = append(b.Sidecars, pods.Container{Name: c.Name, ExitCode: c.ExitCode})
	}
	for ix, o := range p.ByIndex {
		var i int
		if _, err := fmt.Sscanf(ix, "%d", &i); err != nil || fmt.Sprint(i) != ix {
			return b, fmt.Errorf("byIndex key %q is not an index", ix)
		}
		if len(o.Gates)+len(o.ByIndex)+len(o.Containers)+len(o.InitContainers)+len(o.Sidecars) > 0 {
			return b, fmt.Errorf("byIndex %s: gates, containers, initContainers, sidecars and byIndex belong to the whole template", ix)
		}
		ob, err := o.Behavior()
		if err != nil {
			return b, fmt.Errorf("byIndex %s: %w", ix, err)
		}
		b = b.ForIndex(i, ob)
	}
	return b, b.Validate()
}

// Step is one step of the plan: exactly one of Await, Act or Chaos.
type Step struct {
	// Await waits until the Job status matches.
	Await *StatusPattern `json:"await,omitempty"`
	// AwaitGone waits until the Job is removed and its pods are gone or released.
	AwaitGone *GonePattern `json:"awaitGone,omitempty"`
	// Act disturbs the Job or its pods.
	Act *Action `json:"act,omitempty"`
	// Chaos injects a disruption (package chaos); such scenarios run in the chaos suite.
	Chaos *chaos.Action `json:"chaos,omitempty"`
	// Versions limits the step to some releases (version-aware expectations):
	// for behaviour that is no promise on other releases, never to excuse a bug.
	Versions string `json:"versions,omitempty"`
	// KnownBugs are IDs of scenarios/bugs (e.g. kubernetes/kubernetes#139428)
	// whose releases' built-in controller fails the step: it still fails
	// there, and says why.
	KnownBugs []string `json:"knownBugs,omitempty"`
	// Timeout bounds an await; default 60s.
	Timeout Duration `json:"timeout,omitempty"`
	// Holds, on an await, is how long the status must keep matching once it
	// does: a state that must last, such as no pod for a suspended Job
	// across a controller restart (the absence of a change can only be
	// asserted over a stated time).
	Holds Duration `json:"holds,omitempty"`
}

// StatusPattern is a partial Job status: every field given must match.
type StatusPattern struct {
	Active      *int32 `json:"active,omitempty"`
	Ready       *int32 `json:"ready,omitempty"`
	Terminating *int32 `json:"terminating,omitempty"`
	Succeeded   *int32 `json:"succeeded,omitempty"`
	Failed      *int32 `json:"failed,omitempty"`
	// Conditions lists condition types that must be True, e.g. FailureTarget,
	// optionally with a reason: FailureTarget/BackoffLimitExceeded.
	Conditions []string `json:"conditions,omitempty"`
	// NotConditions lists condition types that must not be True.
	NotConditions []string `json:"notConditions,omitempty"`
	// CompletedIndexes and FailedIndexes match status strings exactly.
	CompletedIndexes *string `json:"completedIndexes,omitempty"`
	FailedIndexes    *string `json:"failedIndexes,omitempty"`
	// Empty: the status is the empty JobStatus (nothing wrote it).
	Empty bool `json:"empty,omitempty"`
	// Finished: the Job has ended, Complete or Failed (whichever): what a
	// generated case (scenarios/explore) awaits, whose outcome no one wrote
	// down — the invariants and the differential verdict judge it.
	Finished bool `json:"finished,omitempty"`
}

// Action kinds.
const (
	ActDeletePod = "deletePod" // delete one running pod (grace from the pod spec unless given)
	ActEvictPod  = "evictPod"  // evict one running pod through the Eviction API
	ActFinishPod = "finishPod" // make one running pod's process exit now (annotation; local provider); done once its end is seen
	ActSetGate   = "setGate"   // set a readiness-gate condition on one or all running pods
	ActSuspend   = "suspend"
	ActResume    = "resume"
	ActScale     = "scale" // set parallelism (and completions, for elastic Indexed Jobs)
	// ActDeleteJob deletes the Job with a propagation policy (default Background).
	ActDeleteJob = "deleteJob"
	// ActPatchTemplate merges labels, annotations, tolerations and a
	// nodeSelector into the pod template: allowed while a Job is suspended and has not started
	// (the scheduling directives a queue such as Kueue sets before it
	// admits the Job), refused by the apiserver once it runs.
	ActPatchTemplate = "patchTemplate"
	// ActOrphanPod removes the ownerReferences of one running pod (as
	// upstream's e2e adoption test does): the controller must adopt it again.
	ActOrphanPod = "orphanPod"
	// ActReleasePod removes from one running pod the labels the Job's
	// selector (matchLabels) matches on: the controller must release it.
	ActReleasePod = "releasePod"
	// ActCreatePod creates a pod from the Job's template, matching its
	// selector: with no owner (an orphan to adopt), or, with ownedByOther,
	// controlled by another object (a ConfigMap), which no Job may take over.
	ActCreatePod = "createPod"
	// ActRecreateJob deletes the Job (Background, or as Propagation says:
	// with Foreground once its pods are gone, with Orphan leaving them
	// running, released) and creates it again at
	// once under the same name, as the scenario first made it (with
	// foreignManagedBy, delegated to a manager that does not run): what
	// JobSet does on a restart. The new Job owes nothing to the old one's
	// state (its backoff, expectations, queued syncs); the steps after it
	// follow the new Job, and the invariants judge each Job on its own.
	ActRecreateJob = "recreateJob"
	// ActRefusePods makes the apiserver refuse every new pod of the
	// scenario's namespace (a ResourceQuota of 0 pods, as a full quota
	// does): the controller's creations fail and it must retry them;
	// ActAllowPods removes that quota.
	ActRefusePods = "refusePods"
	ActAllowPods  = "allowPods"
	// ActRefusePodChanges makes the apiserver refuse the controller's pod
	// deletions and updates (finalizer removals) in the scenario's
	// namespace (a ValidatingAdmissionPolicy matching the controller's
	// identity alone, as a webhook or an apiserver under a partial outage
	// does): its deletes and patches fail and it must retry them once
	// ActAllowPodChanges lifts it. The invariants' timing bounds hold from
	// RestartGrace after each of the two acts (a refusal is no controller
	// lag). Needs a pod in the namespace (the refusal is confirmed by a
	// dry-run deletion as the controller) and the controller's identity.
	// Action.Refuse widens it to the controller's writes of the Job's
	// status (jobs/status), or narrows it to those alone.
	ActRefusePodChanges = "refusePodChanges"
	ActAllowPodChanges  = "allowPodChanges"
)

// What awaitGone waits for of the pods once the Job is gone.
const (
	PodsGone     = "gone"     // every pod deleted
	PodsReleased = "released" // orphans stay: no pod is deleted, none keeps the tracking finalizer or a Job's controller reference
	PodsTerminal = "terminal" // every pod deleted or finished (Succeeded or Failed), whatever holds it: its end is there to be recorded
)

// Action is one disturbance.
type Action struct {
	Kind string `json:"kind"`
	// Index selects the pod of a completion index; default: the first
	// running pod. For createPod, the index the new pod carries.
	Index *int `json:"index,omitempty"`
	// All applies the action to every running pod.
	All bool `json:"all,omitempty"`
	// GracePeriod overrides the pod's grace period for deletePod.
	GracePeriod *int64 `json:"gracePeriod,omitempty"`
	// Finished: deletePod deletes a pod that has ended (Failed or
	// Succeeded), which its tracking finalizer keeps, not a running one.
	Finished bool `json:"finished,omitempty"`
	// Gate and Status for setGate.
	Gate   corev1.PodConditionType `json:"gate,omitempty"`
	Status corev1.ConditionStatus  `json:"status,omitempty"`
	// Parallelism and Completions for scale.
	Parallelism *int32 `json:"parallelism,omitempty"`
	Completions *int32 `json:"completions,omitempty"`
	// Propagation for deleteJob and recreateJob: Foreground, Background
	// (default) or Orphan.
	Propagation metav1.DeletionPropagation `json:"propagation,omitempty"`
	// Labels, Annotations, Tolerations and NodeSelector for patchTemplate.
	Labels       map[string]string   `json:"labels,omitempty"`
	Annotations  map[string]string   `json:"annotations,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	// OwnedByOther for createPod: the pod is controlled by another object.
	OwnedByOther bool `json:"ownedByOther,omitempty"`
	// ForeignManagedBy for recreateJob: the new Job's spec.managedBy names
	// a manager that does not run, so the controller under test must leave
	// it alone (a sync it queued for the old Job included).
	ForeignManagedBy bool `json:"foreignManagedBy,omitempty"`
	// Refused: the act must be refused by the apiserver as invalid (a
	// change it does not allow at this point of the Job's life).
	Refused bool `json:"refused,omitempty"`
	// Refuse for refusePodChanges: which of the controller's writes the
	// apiserver refuses — RefusePods (its pod deletions and updates: the
	// default), RefuseJobStatus (its writes of the Job's status, which
	// upstream makes before it removes a finished pod's finalizer), or both.
	Refuse []string `json:"refuse,omitempty"`
}

// What refusePodChanges refuses (Action.Refuse).
const (
	RefusePods      = "pods"
	RefuseJobStatus = "jobStatus"
)

// Refusing is what refusePodChanges a refuses: a.Refuse, or the pods'
// changes when it names nothing.
func (a Action) Refusing() []string {
	if len(a.Refuse) == 0 {
		return []string{RefusePods}
	}
	return a.Refuse
}

var actionKinds = []string{ActDeletePod, ActEvictPod, ActFinishPod, ActSetGate, ActSuspend, ActResume, ActScale, ActDeleteJob, ActPatchTemplate,
	ActOrphanPod, ActReleasePod, ActCreatePod, ActRecreateJob, ActRefusePods, ActAllowPods, ActRefusePodChanges, ActAllowPodChanges}

// GonePattern is what awaitGone waits for: the Job removed from the API,
// and its pods as Pods says (PodsGone, PodsReleased or PodsTerminal).
type GonePattern struct {
	Pods string `json:"pods"`
}

// ChaosActions are the actions of the scenario's chaos steps, in order.
func (s *Scenario) ChaosActions() []chaos.Action {
	var out []chaos.Action
	for _, st := range s.Steps {
		if st.Chaos != nil {
			out = append(out, *st.Chaos)
		}
	}
	return out
}

// HasChaos tells whether the scenario injects chaos (and so needs the chaos suite).
func (s *Scenario) HasChaos() bool {
	for _, st := range s.Steps {
		if st.Chaos != nil {
			return true
		}
	}
	return false
}

// Acts tells whether one of the scenario's steps is an act of kind.
func (s *Scenario) Acts(kind string) bool {
	return slices.ContainsFunc(s.Steps, func(st Step) bool { return st.Act != nil && st.Act.Kind == kind })
}

// Names are the scenarios' names, in their order.
func Names(ss []*Scenario) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

// ForController tells whether the scenario applies to the controller named name.
func (s *Scenario) ForController(name string) bool {
	return len(s.Controllers) == 0 || slices.Contains(s.Controllers, name)
}

// Applies tells whether a version constraint ("" = always) admits release v
// (yamltypes.Applies).
func Applies(constraint, v string) (bool, error) { return yamltypes.Applies(constraint, v) }

// Load reads every *.yaml (or *.yml) scenario of fsys, validating each;
// errors name the file and field.
func Load(fsys fs.FS) ([]*Scenario, error) {
	files, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, err
	}
	yml, err := fs.Glob(fsys, "*.yml")
	if err != nil {
		return nil, err
	}
	files = append(files, yml...)
	sort.Strings(files)
	var out []*Scenario
	names := map[string]string{}
	var errs []string
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		got, ferrs := ParseFile(data, f, names)
		for _, err := range ferrs {
			errs = append(errs, f+": "+err.Error())
		}
		for _, s := range got {
			s.File = path.Base(f)
		}
		out = append(out, got...)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid scenarios:\n  %s", strings.Join(errs, "\n  "))
	}
	return out, nil
}

// ParseFile reads the scenario documents of one file (separated by ---),
// named file in errors. names maps the scenario names seen so far to where
// (a run refuses one name twice) and gains this file's. Errors come one per
// document that is wrong; the scenarios are the documents that are not.
func ParseFile(data []byte, file string, names map[string]string) ([]*Scenario, []error) {
	var out []*Scenario
	var errs []error
	docs := bytes.Split(data, []byte("\n---\n"))
	for i, doc := range docs {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		where, prefix := file, ""
		if len(docs) > 1 {
			where, prefix = fmt.Sprintf("%s (document %d)", file, i+1), fmt.Sprintf("document %d: ", i+1)
		}
		s, err := Parse(doc)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s%w", prefix, err))
			continue
		}
		if prev, dup := names[s.Name]; dup {
			errs = append(errs, fmt.Errorf("%sscenario name %q is also used in %s", prefix, s.Name, prev))
			continue
		}
		names[s.Name] = where
		out = append(out, s)
	}
	return out, errs
}

// Parse reads one scenario document (unknown fields are errors) and validates it.
func Parse(doc []byte) (*Scenario, error) {
	var s Scenario
	if err := yaml.UnmarshalStrict(doc, &s); err != nil {
		return nil, decodeError(err)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

var (
	decodePrefix = regexp.MustCompile(`^(error converting YAML to JSON: |error unmarshaling JSON: )?(while decoding JSON: )?(json: )?`)
	typeMismatch = regexp.MustCompile(`cannot unmarshal (\w+) into Go struct field \w+\.(\S+) of type (\S+)`)
)

// decodeError says what the YAML decoder found without its layers of
// prefixes, and names a mistyped field the way the file spells it.
func decodeError(err error) error {
	msg := decodePrefix.ReplaceAllString(err.Error(), "")
	msg = typeMismatch.ReplaceAllString(msg, "field $2: got a $1, want a value of type $3")
	return errors.New(msg)
}

// Validate reports the first thing wrong, naming the field and what is allowed.
func (s *Scenario) Validate() error {
	if s.Name == "" || strings.ContainsAny(s.Name, " /") {
		return fmt.Errorf("name %q: give a name of letters, digits and dashes", s.Name)
	}
	if len(s.Features) == 0 {
		return fmt.Errorf("%s: features: name at least one of %v", s.Name, Features)
	}
	for field, why := range s.Oracle.Differ {
		if strings.TrimSpace(why) == "" {
			return fmt.Errorf("%s: oracle.differ[%q]: say why two correct controllers may differ there", s.Name, field)
		}
	}
	for field, why := range s.Oracle.MayLose {
		switch {
		case !strings.HasPrefix(field, "events."):
			return fmt.Errorf("%s: oracle.mayLose[%q]: only events may be lost (events.Type/Reason); other fields go in oracle.differ", s.Name, field)
		case strings.TrimSpace(why) == "":
			return fmt.Errorf("%s: oracle.mayLose[%q]: say why a correct controller may never have sent it", s.Name, field)
		}
	}
	for _, f := range s.Features {
		if !slices.Contains(Features, f) {
			return fmt.Errorf("%s: features: %q is not one of %v", s.Name, f, Features)
		}
	}
	if _, err := Applies(s.Versions, "v1.31.0"); err != nil {
		return fmt.Errorf("%s: %w", s.Name, err)
	}
	b, err := s.Pods.Behavior()
	if err != nil {
		return fmt.Errorf("%s: pods: %w", s.Name, err)
	}
	if rp := s.Job.Template.Spec.RestartPolicy; rp != "" && rp != corev1.RestartPolicyNever && (len(b.Containers) > 0 || b.Fails()) {
		// kwok's stages restart a pod's containers together; a kubelet
		// restarts each on its own, and sums no longer agree.
		return fmt.Errorf("%s: pods: containers beside the first, or an init container that exits non-zero, need restartPolicy Never (the job's template has %s)", s.Name, rp)
	}
	if ptr.Deref(s.Job.Parallelism, 1) < 0 || ptr.Deref(s.Job.Completions, 1) < 0 {
		return fmt.Errorf("%s: job: parallelism and completions must not be negative", s.Name)
	}
	if s.Metrics && (!s.Serial || s.HasChaos()) {
		return fmt.Errorf("%s: metrics: true needs serial: true and no chaos step (the counters are the controller's: another Job or a restart would move them)", s.Name)
	}
	if s.Nodes != "" && s.Nodes != "kwok" && s.Nodes != "kubelet" {
		return fmt.Errorf("%s: nodes %q: use kwok or kubelet, or leave it out (any nodes)", s.Name, s.Nodes)
	}
	if len(s.Steps) == 0 {
		return fmt.Errorf("%s: steps: give at least one await (what the run must reach)", s.Name)
	}
	for i, st := range s.Steps {
		where := fmt.Sprintf("%s: steps[%d]", s.Name, i)
		n := 0
		for _, set := range []bool{st.Await != nil, st.AwaitGone != nil, st.Act != nil, st.Chaos != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			return fmt.Errorf("%s: give exactly one of await, awaitGone, act or chaos", where)
		}
		if st.Chaos != nil {
			if err := st.Chaos.Validate(); err != nil {
				return fmt.Errorf("%s: chaos: %w", where, err)
			}
		}
		if _, err := Applies(st.Versions, "v1.31.0"); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if err := bugs.Check(st.KnownBugs); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if st.Act != nil {
			if !slices.Contains(actionKinds, st.Act.Kind) {
				return fmt.Errorf("%s: act.kind %q is not one of %v", where, st.Act.Kind, actionKinds)
			}
			if st.Act.Kind == ActSetGate && (st.Act.Gate == "" || (st.Act.Status != corev1.ConditionTrue && st.Act.Status != corev1.ConditionFalse)) {
				return fmt.Errorf("%s: setGate needs gate and status True or False", where)
			}
			if st.Act.Kind == ActScale && st.Act.Parallelism == nil && st.Act.Completions == nil {
				return fmt.Errorf("%s: scale needs parallelism or completions", where)
			}
			patches := len(st.Act.Labels) + len(st.Act.Annotations) + len(st.Act.Tolerations) + len(st.Act.NodeSelector)
			if st.Act.Kind == ActPatchTemplate && patches == 0 {
				return fmt.Errorf("%s: patchTemplate needs labels, annotations, tolerations or nodeSelector", where)
			}
			if (patches > 0) != (st.Act.Kind == ActPatchTemplate) {
				return fmt.Errorf("%s: labels, annotations, tolerations and nodeSelector are patchTemplate's", where)
			}
			if st.Act.OwnedByOther && st.Act.Kind != ActCreatePod {
				return fmt.Errorf("%s: ownedByOther is createPod's", where)
			}
			if st.Act.Finished && st.Act.Kind != ActDeletePod {
				return fmt.Errorf("%s: finished is deletePod's", where)
			}
			if st.Act.ForeignManagedBy && st.Act.Kind != ActRecreateJob {
				return fmt.Errorf("%s: foreignManagedBy is recreateJob's", where)
			}
			if st.Act.Kind == ActRecreateJob && s.Metrics {
				return fmt.Errorf("%s: a scenario that recreates its Job cannot judge metrics (the counters would add up two Jobs)", where)
			}
			if len(st.Act.Refuse) > 0 && st.Act.Kind != ActRefusePodChanges {
				return fmt.Errorf("%s: refuse is refusePodChanges'", where)
			}
			for _, r := range st.Act.Refuse {
				if r != RefusePods && r != RefuseJobStatus {
					return fmt.Errorf("%s: refuse %q is not %s or %s", where, r, RefusePods, RefuseJobStatus)
				}
			}
			if st.Act.Refused && st.Act.Kind != ActPatchTemplate && st.Act.Kind != ActScale {
				return fmt.Errorf("%s: refused is for patchTemplate and scale", where)
			}
			switch p := st.Act.Propagation; {
			case p != "" && st.Act.Kind != ActDeleteJob && st.Act.Kind != ActRecreateJob:
				return fmt.Errorf("%s: propagation is deleteJob's and recreateJob's", where)
			case p != "" && p != metav1.DeletePropagationForeground && p != metav1.DeletePropagationBackground && p != metav1.DeletePropagationOrphan:
				return fmt.Errorf("%s: propagation %q is not Foreground, Background or Orphan", where, p)
			}
		}
		if st.Holds.Duration < 0 || (st.Holds.Duration > 0 && st.Await == nil) {
			return fmt.Errorf("%s: holds applies to an await, as a positive duration (how long its status must keep matching)", where)
		}
		if st.AwaitGone != nil && !slices.Contains([]string{PodsGone, PodsReleased, PodsTerminal}, st.AwaitGone.Pods) {
			return fmt.Errorf("%s: awaitGone.pods %q is not %s, %s or %s", where, st.AwaitGone.Pods, PodsGone, PodsReleased, PodsTerminal)
		}
		if st.Await != nil {
			for _, c := range append(append([]string(nil), st.Await.Conditions...), st.Await.NotConditions...) {
				t, _, _ := strings.Cut(c, "/")
				if !slices.Contains(conditionTypes, t) {
					return fmt.Errorf("%s: condition %q is not one of %v (optionally /Reason)", where, c, conditionTypes)
				}
			}
		}
	}
	return nil
}

var conditionTypes = []string{
	string(batchv1.JobFailureTarget), string(batchv1.JobFailed), string(batchv1.JobSuccessCriteriaMet),
	string(batchv1.JobComplete), string(batchv1.JobSuspended),
}

// Matches tells whether a Job status matches the pattern, and if not, why.
func (p StatusPattern) Matches(s batchv1.JobStatus) (bool, string) {
	if p.Empty {
		empty := s.Active == 0 && s.Succeeded == 0 && s.Failed == 0 && s.StartTime == nil && len(s.Conditions) == 0 &&
			s.Ready == nil && s.Terminating == nil && s.UncountedTerminatedPods == nil && s.CompletedIndexes == ""
		if !empty {
			return false, "status is not empty"
		}
	}
	num := func(name string, want *int32, got int32) string {
		if want != nil && *want != got {
			return fmt.Sprintf("%s=%d, want %d", name, got, *want)
		}
		return ""
	}
	for _, miss := range []string{
		num("active", p.Active, s.Active),
		num("ready", p.Ready, ptr.Deref(s.Ready, 0)),
		num("terminating", p.Terminating, ptr.Deref(s.Terminating, 0)),
		num("succeeded", p.Succeeded, s.Succeeded),
		num("failed", p.Failed, s.Failed),
	} {
		if miss != "" {
			return false, miss
		}
	}
	if p.Terminating != nil && s.Terminating == nil {
		return false, "terminating is not reported"
	}
	if p.CompletedIndexes != nil && *p.CompletedIndexes != s.CompletedIndexes {
		return false, fmt.Sprintf("completedIndexes=%q, want %q", s.CompletedIndexes, *p.CompletedIndexes)
	}
	if p.FailedIndexes != nil && *p.FailedIndexes != ptr.Deref(s.FailedIndexes, "") {
		return false, fmt.Sprintf("failedIndexes=%q, want %q", ptr.Deref(s.FailedIndexes, ""), *p.FailedIndexes)
	}
	if p.Finished && !hasCondition(s, string(batchv1.JobComplete)) && !hasCondition(s, string(batchv1.JobFailed)) {
		return false, "neither Complete nor Failed"
	}
	for _, c := range p.Conditions {
		if !hasCondition(s, c) {
			return false, "no condition " + c
		}
	}
	for _, c := range p.NotConditions {
		if hasCondition(s, c) {
			return false, "unexpected condition " + c
		}
	}
	return true, ""
}

func hasCondition(s batchv1.JobStatus, spec string) bool {
	t, reason, withReason := strings.Cut(spec, "/")
	for _, c := range s.Conditions {
		if string(c.Type) == t && c.Status == corev1.ConditionTrue && (!withReason || c.Reason == reason) {
			return true
		}
	}
	return false
}
