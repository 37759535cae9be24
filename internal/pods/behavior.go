// Package pods models what a Job's pod does — how long it runs, how it exits,
// how it answers SIGTERM, when it becomes ready — once, for both worlds: on a
// real kubelet it renders as a busybox shell script with a trap, on jobconform's
// kwok nodes as annotations that the project's kwok Stages read (see stages.go).
// The same scenario therefore means the same thing on kind and on the local
// provider.
package pods

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

// Annotation keys read by the kwok stages. A key with a suffix ".<index>"
// overrides the plain key for the pod of that completion index.
const (
	Prefix             = "pod.jobconform.io/"
	AnnRunSeconds      = Prefix + "run-seconds"         // absent: runs until stopped
	AnnExitCode        = Prefix + "exit-code"           // exit code when the run ends
	AnnSIGTERMSeconds  = Prefix + "sigterm-seconds"     // time the SIGTERM trap needs
	AnnSIGTERMExitCode = Prefix + "sigterm-exit-code"   // exit code the trap ends with
	AnnReadyAfter      = Prefix + "ready-after-seconds" // ContainersReady after this long
	AnnFailures        = Prefix + "failures"            // runs that exit with exit-code before the rest exit 0
	// AnnExitCodeOf + a container's name: the exit code of a container
	// other than the first (Behavior.Containers, Behavior.Init).
	AnnExitCodeOf = Prefix + "exit-code-of-"
)

// MainContainer is the name of the pod's first container when the template
// names none.
const MainContainer = "main"

// StateVolume is the emptyDir where a real container counts its runs
// (Behavior.Failures): a container restarted in place keeps its pod's volumes.
const StateVolume = "jobconform-state"

// CompletionIndexAnnotation is set by Job controllers on pods of Indexed Jobs.
const CompletionIndexAnnotation = "batch.kubernetes.io/job-completion-index"

// Image runs the behaviour script on real kubelets.
var Image = "busybox:1.36"

// DefaultSIGTERMExitCode is what a shell that traps SIGTERM conventionally exits with.
const DefaultSIGTERMExitCode = 143

// Behavior is what a pod's container does. The zero value runs until it is
// stopped, exits 143 at once on SIGTERM and is ready as soon as it runs.
type Behavior struct {
	// Run is how long the container runs before it exits by itself; nil: forever.
	Run *time.Duration
	// ExitCode is the code it exits with after Run.
	ExitCode int32
	// Failures, when above 0, limits ExitCode to the container's first
	// Failures runs in its pod: later runs (restarts in place under
	// restartPolicy OnFailure) exit 0. 0: every run exits with ExitCode.
	Failures int32
	// SIGTERMDelay is how long the SIGTERM trap needs before exiting. When the
	// pod's grace period runs out first, the container is killed (exit 137).
	SIGTERMDelay time.Duration
	// SIGTERMExitCode is the trap's exit code; nil: 143.
	SIGTERMExitCode *int32
	// ReadyAfter delays ContainersReady after the container starts.
	ReadyAfter time.Duration
	// Gates are readiness gate condition types: the pod is Ready only once
	// every one of them is True (Pod Ready++), whoever sets them.
	Gates []corev1.PodConditionType
	// ByIndex overrides the behaviour for the pods of some completion indexes
	// (Indexed Jobs). Gates, Containers and Init are per pod template and
	// cannot vary by index.
	ByIndex map[int]Behavior
	// Containers are main containers beside the first: each runs as the
	// first does (its run time, its SIGTERM trap, per index too) and exits
	// with its own code. A pod with one fails when any container exits
	// non-zero; restartPolicy Never only (kwok's stages restart a pod's
	// containers together, a kubelet each on its own).
	Containers []Container
	// Init are init containers, run in order before the main ones: each
	// exits at once with its code; a non-zero one fails the pod before
	// its main containers start (restartPolicy Never only), as a kubelet
	// does — its status then says the init container's exit code, and the
	// main containers never ran.
	Init []Container
	// Sidecars are restartable init containers (restartPolicy Always),
	// started after Init: each runs beside the main containers until they
	// have ended, then is stopped (SIGTERM) and exits with its ExitCode,
	// the code of its trap — what a kubelet does, whose pod's phase reads
	// the main containers alone. Their ends come after the main
	// containers': upstream's finish time of a pod is the last of them.
	Sidecars []Container
}

// Container is a container of a pod other than its first: its name and the
// code it exits with.
type Container struct {
	Name     string
	ExitCode int32
}

// RunFor is a pod that runs d and then exits with code.
func RunFor(d time.Duration, code int32) Behavior { return Behavior{Run: &d, ExitCode: code} }

// Succeed is a pod that runs d and exits 0.
func Succeed(d time.Duration) Behavior { return RunFor(d, 0) }

// Fail is a pod that fails at once with code.
func Fail(code int32) Behavior { return RunFor(0, code) }

// RunForever is a pod that runs until it is stopped.
func RunForever() Behavior { return Behavior{} }

// TrapSIGTERM returns b with a SIGTERM trap that needs d and then exits with code.
func (b Behavior) TrapSIGTERM(d time.Duration, code int32) Behavior {
	b.SIGTERMDelay, b.SIGTERMExitCode = d, &code
	return b
}

// WithReadyAfter returns b becoming ContainersReady d after it starts.
func (b Behavior) WithReadyAfter(d time.Duration) Behavior {
	b.ReadyAfter = d
	return b
}

// WithGates returns b with readiness gates: never Ready until each is True.
func (b Behavior) WithGates(gates ...corev1.PodConditionType) Behavior {
	b.Gates = append(append([]corev1.PodConditionType(nil), b.Gates...), gates...)
	return b
}

// ForIndex returns b where the pod of completion index i behaves as o instead.
func (b Behavior) ForIndex(i int, o Behavior) Behavior {
	m := map[int]Behavior{}
	for k, v := range b.ByIndex {
		m[k] = v
	}
	o.ByIndex, o.Gates = nil, nil
	m[i] = o
	b.ByIndex = m
	return b
}

func (b Behavior) sigtermExit() int32 {
	if b.SIGTERMExitCode == nil {
		return DefaultSIGTERMExitCode
	}
	return *b.SIGTERMExitCode
}

// Validate reports values no kubelet could produce.
func (b Behavior) Validate() error {
	check := func(where string, x Behavior) error {
		if x.Run != nil && *x.Run < 0 {
			return fmt.Errorf("%srun time %s is negative", where, *x.Run)
		}
		if x.SIGTERMDelay < 0 || x.ReadyAfter < 0 {
			return fmt.Errorf("%sdurations must not be negative", where)
		}
		if x.Failures < 0 || (x.Failures > 0 && (x.Run == nil || x.ExitCode == 0)) {
			return fmt.Errorf("%sfailures %d needs a finite run that exits non-zero", where, x.Failures)
		}
		for _, c := range []int32{x.ExitCode, x.sigtermExit()} {
			if c < 0 || c > 255 {
				return fmt.Errorf("%sexit code %d is outside 0..255", where, c)
			}
		}
		return nil
	}
	if err := check("", b); err != nil {
		return err
	}
	for i, o := range b.ByIndex {
		if i < 0 {
			return fmt.Errorf("index %d is negative", i)
		}
		if err := check(fmt.Sprintf("index %d: ", i), o); err != nil {
			return err
		}
		if len(o.Containers)+len(o.Init)+len(o.Sidecars) > 0 {
			return fmt.Errorf("index %d: containers, init containers and sidecars are the pod template's, the same for every index", i)
		}
	}
	names := map[string]bool{MainContainer: true}
	for _, c := range slices.Concat(b.Containers, b.Init, b.Sidecars) {
		switch {
		case len(validation.IsDNS1123Label(c.Name)) > 0:
			return fmt.Errorf("container name %q: write a DNS label (lower-case letters, digits, dashes)", c.Name)
		case names[c.Name]:
			return fmt.Errorf("container name %q is used twice (the first container is %q)", c.Name, MainContainer)
		case c.ExitCode < 0 || c.ExitCode > 255:
			return fmt.Errorf("container %s: exit code %d is outside 0..255", c.Name, c.ExitCode)
		}
		names[c.Name] = true
	}
	return nil
}

// Fails tells whether some container but the first can fail the pod: a
// non-zero exit code of a container beside it or of an init container.
func (b Behavior) Fails() bool {
	return slices.ContainsFunc(slices.Concat(b.Containers, b.Init), func(c Container) bool { return c.ExitCode != 0 })
}

// annotations renders b's fields under the plain keys, or with the ".<index>"
// suffix for an override.
func (b Behavior) annotations(suffix string, into map[string]string) {
	if b.Run != nil {
		into[AnnRunSeconds+suffix] = seconds(*b.Run)
	}
	into[AnnExitCode+suffix] = strconv.Itoa(int(b.ExitCode))
	into[AnnSIGTERMSeconds+suffix] = seconds(b.SIGTERMDelay)
	into[AnnSIGTERMExitCode+suffix] = strconv.Itoa(int(b.sigtermExit()))
	into[AnnReadyAfter+suffix] = seconds(b.ReadyAfter)
	if b.Failures > 0 {
		into[AnnFailures+suffix] = strconv.Itoa(int(b.Failures))
	}
}

// Annotations is what the kwok stages read.
func (b Behavior) Annotations() map[string]string {
	out := map[string]string{}
	b.annotations("", out)
	for _, c := range slices.Concat(b.Containers, b.Init, b.Sidecars) {
		out[AnnExitCodeOf+c.Name] = strconv.Itoa(int(c.ExitCode))
	}
	for i, o := range b.ByIndex {
		if o.Run == nil {
			// An override that runs forever must hide a finite base run.
			out[AnnRunSeconds+"."+strconv.Itoa(i)] = "forever"
		}
		o.annotations("."+strconv.Itoa(i), out)
	}
	return out
}

// Apply makes the pods of tmpl behave as b: it sets the annotations, the
// readiness gates, and the first container's image, command and (when needed)
// readiness probe. Other fields of tmpl stay as they are.
func (b Behavior) Apply(tmpl *corev1.PodTemplateSpec) {
	if tmpl.Annotations == nil {
		tmpl.Annotations = map[string]string{}
	}
	for k, v := range b.Annotations() {
		tmpl.Annotations[k] = v
	}
	for _, g := range b.Gates {
		tmpl.Spec.ReadinessGates = append(tmpl.Spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: g})
	}
	if len(tmpl.Spec.Containers) == 0 {
		tmpl.Spec.Containers = []corev1.Container{{Name: MainContainer}}
	}
	c := &tmpl.Spec.Containers[0]
	if c.Image == "" {
		c.Image = Image
	}
	c.Command = []string{"sh", "-c", b.Script()}
	if b.countsRuns() {
		tmpl.Spec.Volumes = append(tmpl.Spec.Volumes, corev1.Volume{Name: StateVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: StateVolume, MountPath: "/jobconform"})
	}
	if b.needsProbe() {
		c.ReadinessProbe = &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/ready"}}},
			PeriodSeconds: 1,
		}
	}
	for _, x := range b.Containers {
		// Runs as the first (its probe too: the pod is ready when both are)
		// and exits with its own code.
		o := *c.DeepCopy()
		o.Name, o.Command, o.VolumeMounts = x.Name, []string{"sh", "-c", b.exitingWith(x.ExitCode).Script()}, nil
		tmpl.Spec.Containers = append(tmpl.Spec.Containers, o)
	}
	for _, x := range b.Init {
		tmpl.Spec.InitContainers = append(tmpl.Spec.InitContainers, corev1.Container{Name: x.Name, Image: c.Image,
			Command: []string{"sh", "-c", fmt.Sprintf("exit %d", x.ExitCode)}})
	}
	for _, x := range b.Sidecars {
		// PID 1 ignores SIGTERM unless trapped: without the trap the
		// kubelet would kill it only when the grace period ends.
		tmpl.Spec.InitContainers = append(tmpl.Spec.InitContainers, corev1.Container{Name: x.Name, Image: c.Image,
			RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
			Command:       []string{"sh", "-c", fmt.Sprintf("trap 'exit %d' TERM; while true; do sleep 3600 & wait $!; done", x.ExitCode)}})
	}
}

// exitingWith is b as a container beside the first runs it: the same run
// times, trap and readiness, every run exiting with code.
func (b Behavior) exitingWith(code int32) Behavior {
	x := Behavior{Run: b.Run, ExitCode: code, SIGTERMDelay: b.SIGTERMDelay, SIGTERMExitCode: b.SIGTERMExitCode, ReadyAfter: b.ReadyAfter}
	for i, o := range b.ByIndex {
		x = x.ForIndex(i, Behavior{Run: o.Run, ExitCode: code, SIGTERMDelay: o.SIGTERMDelay, SIGTERMExitCode: o.SIGTERMExitCode, ReadyAfter: o.ReadyAfter})
	}
	return x
}

// anyPod: f holds for b or for one of its per-index overrides.
func (b Behavior) anyPod(f func(Behavior) bool) bool {
	if f(b) {
		return true
	}
	for _, o := range b.ByIndex {
		if f(o) {
			return true
		}
	}
	return false
}

// countsRuns: some pod must count its container's runs (Failures).
func (b Behavior) countsRuns() bool { return b.anyPod(func(x Behavior) bool { return x.Failures > 0 }) }

func (b Behavior) needsProbe() bool {
	return b.anyPod(func(x Behavior) bool { return x.ReadyAfter > 0 })
}

// Script is the busybox shell program that behaves as b on a real kubelet.
// sh runs as PID 1, which ignores SIGTERM unless trapped, so the trap is
// always set; "sleep & wait" lets the trap run while the main sleep goes on.
func (b Behavior) Script() string {
	vars := func(x Behavior) string {
		run := ""
		if x.Run != nil {
			run = seconds(*x.Run)
		}
		return fmt.Sprintf("run=%s; code=%d; fails=%d; tdelay=%s; tcode=%d; ready=%s",
			shellWord(run), x.ExitCode, x.Failures, seconds(x.SIGTERMDelay), x.sigtermExit(), seconds(x.ReadyAfter))
	}
	var s strings.Builder
	s.WriteString(vars(b) + "\n")
	if len(b.ByIndex) > 0 {
		var idx []int
		for i := range b.ByIndex {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		s.WriteString("case \"${JOB_COMPLETION_INDEX:-}\" in\n")
		for _, i := range idx {
			fmt.Fprintf(&s, "%d) %s;;\n", i, vars(b.ByIndex[i]))
		}
		s.WriteString("esac\n")
	}
	if b.countsRuns() {
		// The n-th run of the container in this pod (the volume outlives
		// restarts in place): runs past the failures exit 0.
		s.WriteString(`if [ "$fails" -gt 0 ]; then n=$(cat /jobconform/runs 2>/dev/null || echo 0); echo $((n + 1)) > /jobconform/runs; if [ "$n" -ge "$fails" ]; then code=0; fi; fi
`)
	}
	s.WriteString(`trap 'sleep "$tdelay"; exit "$tcode"' TERM
if [ "$ready" = 0 ]; then touch /tmp/ready; else (sleep "$ready"; touch /tmp/ready) & fi
if [ -n "$run" ]; then sleep "$run" & wait $!; exit "$code"; fi
while true; do sleep 3600 & wait $!; done
`)
	return s.String()
}

func shellWord(s string) string {
	if s == "" {
		return "''"
	}
	return s
}

// seconds renders d as decimal seconds ("2", "0.5"), the form both busybox
// sleep and the stages' jq read.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// Target says how pods meet the nodes that run them. kwok nodes read only the
// annotations, so the zero value changes nothing; a real kubelet runs the
// script in Image.
type Target struct {
	// Image replaces the busybox image (a local image on nodes that pull nothing).
	Image string
	// PullPolicy, when set, is every container's imagePullPolicy.
	PullPolicy corev1.PullPolicy
	// HostNetwork puts pods on the node's network (nodes with no pod network).
	HostNetwork bool
	// PauseImage is what a pod-failure runs in place of the containers: an
	// image the nodes hold ("" on kwok nodes, which run no image).
	PauseImage string
}

// Adapt makes the pods of tmpl runnable on t's nodes. Nothing it changes is
// read by a Job controller.
func (t Target) Adapt(tmpl *corev1.PodTemplateSpec) {
	if t.HostNetwork {
		tmpl.Spec.HostNetwork = true
	}
	for _, c := range slices.Concat(ptrs(tmpl.Spec.InitContainers), ptrs(tmpl.Spec.Containers)) {
		if t.Image != "" && c.Image == Image {
			c.Image = t.Image
		}
		if t.PullPolicy != "" {
			c.ImagePullPolicy = t.PullPolicy
		}
	}
}

// ptrs are pointers to each of cs, to change them in place.
func ptrs(cs []corev1.Container) []*corev1.Container {
	out := make([]*corev1.Container, len(cs))
	for i := range cs {
		out[i] = &cs[i]
	}
	return out
}

// NewJob returns a Job of parallelism = completions = n whose pods behave as b,
// with restartPolicy Never and backoffLimit 6 unless changed afterwards.
func NewJob(name string, n int32, b Behavior) *batchv1.Job {
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{
			Parallelism:  ptr.To(n),
			Completions:  ptr.To(n),
			BackoffLimit: ptr.To[int32](6),
			Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever},
			},
		},
	}
	b.Apply(&job.Spec.Template)
	return job
}
