package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// Environment is what injectors need of a cluster provider and of the
// controller under test. suites/internal/harness implements it over any
// provider of internal/cluster that has the controls (local and kind).
type Environment interface {
	Client() kubernetes.Interface
	// LoseNode stops the kubelet of node (and of the nodes that go with it).
	LoseNode(ctx context.Context, node string) error
	// ReturnNode brings node back (re-registering it if its Node was deleted)
	// and waits until it is Ready.
	ReturnNode(ctx context.Context, node string) error
	// RestartController restarts the controller under test: crash kills it
	// first; gates, when not nil, replace its feature gates (empty: defaults).
	RestartController(ctx context.Context, crash bool, gates map[string]bool) error
	// RestartAPIServer restarts kube-apiserver and waits until it is healthy.
	RestartAPIServer(ctx context.Context, crash bool) error
	// StopController stops (crash: kills) the controller under test and
	// returns what starts it again (waiting until it is healthy).
	StopController(ctx context.Context, crash bool) (start func(context.Context) error, err error)
	// Lacks says why the environment cannot meet need ("" when it can).
	Lacks(need Need) string
}

// OutOfServiceTaint is the taint an operator puts on a node known to be down
// (non-graceful node shutdown, GA in Kubernetes 1.28).
var OutOfServiceTaint = corev1.Taint{Key: "node.kubernetes.io/out-of-service", Value: "nodeshutdown", Effect: corev1.TaintEffectNoExecute}

// Record is one action carried out: Log is deterministic for a seed (the
// action log); Effect names what it touched in this run.
type Record struct {
	// Start and Time: when the action began and when it was done.
	Start, Time time.Time
	Log         string
	Effect      string
	Err         error
	Action      Action
	// Experiment is the Chaos Mesh experiment that carried the action out,
	// as its status told it (nil: jobconform acted itself).
	Experiment *Experiment
}

// Injector carries out the actions of one scenario run on the pods of one Job.
type Injector struct {
	Env       Environment
	Namespace string
	Job       string
	// WaitTimeout bounds the wait for a pod to act on, for a node to go
	// NotReady and for a Chaos Mesh experiment; default 3 minutes.
	WaitTimeout time.Duration
	// ChaosMesh, when set, carries out pod-kills and pod-failures as Chaos
	// Mesh PodChaos experiments through this client; else (and for
	// container-kills) the injector acts itself, to the same effect.
	ChaosMesh dynamic.Interface
	// PauseImage is what a pod-failure runs in place of the containers when
	// the injector acts itself (Chaos Mesh has its own setting).
	PauseImage string

	rng     *rand.Rand
	seed    uint64
	mu      sync.Mutex
	records []Record
	lost    []string // nodes lost, in order
	touched []string // nodes drained or tainted, in order
	// priorityClass: the preemptor's PriorityClass was made by this run.
	priorityClass bool
	gatesSet      bool
	stepIndex     int
	// experiments counts the Chaos Mesh experiments submitted (their names);
	// experiment is the last one's, for once to record.
	experiments int
	experiment  *Experiment
	// startController starts the controller a controllerStop stopped.
	startController func(context.Context) error
}

// NewInjector makes an injector whose choices follow from seed.
func NewInjector(env Environment, namespace, job string, seed uint64) *Injector {
	return &Injector{Env: env, Namespace: namespace, Job: job, seed: seed, rng: rand.New(rand.NewPCG(seed, 0x6a6f62636f6e66))}
}

// Seed is the seed the injector's choices follow from.
func (in *Injector) Seed() uint64 { return in.seed }

// Records are the actions carried out so far.
func (in *Injector) Records() []Record {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]Record(nil), in.records...)
}

// ActionLog is the deterministic log: one line per action.
func (in *Injector) ActionLog() []string {
	var out []string
	for _, r := range in.Records() {
		out = append(out, r.Log)
	}
	return out
}

func (in *Injector) record(r Record) {
	in.mu.Lock()
	defer in.mu.Unlock()
	r.Time = time.Now()
	in.records = append(in.records, r)
}

// Do carries out the action of scenario step step, repeating it as its
// schedule says; a Random action runs its whole plan.
func (in *Injector) Do(ctx context.Context, step int, a Action) error {
	if err := a.Validate(); err != nil {
		return err
	}
	if a.Random != nil {
		plan := Expand(*a.Random, in.rng)
		for i, p := range plan {
			if err := pause(ctx, p.Pause); err != nil {
				return err
			}
			point := fmt.Sprintf("step %d plan %d/%d after %s", step, i+1, len(plan), p.Pause)
			if err := in.once(ctx, point, p.Action); errors.Is(err, ErrJobFinished) {
				// A soak's Job may finish before its plan on a loaded
				// machine: what is left of the plan has nothing to act on.
				return nil
			} else if err != nil {
				return err
			}
		}
		return nil
	}
	offsets, err := scheduleTimes(a.Schedule, a.Times, time.Now())
	if err != nil {
		return err
	}
	start := time.Now()
	for i, off := range offsets {
		if err := pause(ctx, time.Until(start.Add(off))); err != nil {
			return err
		}
		point := fmt.Sprintf("step %d", step)
		if len(offsets) > 1 {
			point += fmt.Sprintf(" repetition %d/%d", i+1, len(offsets))
		}
		if err := in.once(ctx, point, a); err != nil {
			return err
		}
	}
	return nil
}

func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// once carries out one action. Its random choices come from one draw of the
// injector's stream, so the stream (and every later action) does not depend
// on how many pods there were to choose from.
func (in *Injector) once(ctx context.Context, point string, a Action) error {
	draw := in.rng.Uint64()
	local := rand.New(rand.NewPCG(draw, 0))
	log := fmt.Sprintf("%s: %s", point, a.Describe())
	start := time.Now()
	in.experiment = nil
	effect, err := in.apply(ctx, a, local)
	failed := err
	if errors.Is(err, ErrJobFinished) {
		effect, failed = "not done: "+err.Error(), nil // no harness failure: nothing left to disturb
	}
	in.record(Record{Start: start, Log: log, Effect: effect, Err: failed, Action: a, Experiment: in.experiment})
	if err != nil {
		return fmt.Errorf("%s: %w", log, err)
	}
	return nil
}

func (in *Injector) apply(ctx context.Context, a Action, rng *rand.Rand) (string, error) {
	c := in.Env.Client()
	switch {
	case a.PodChaos != nil:
		targets, err := in.choose(ctx, Selection{Mode: a.PodChaos.Mode, Value: a.PodChaos.Value}, rng, nil)
		if err != nil {
			return "", err
		}
		effect := describe(targets)
		in.experiment, err = in.podChaos(ctx, *a.PodChaos, targets)
		if in.experiment != nil {
			effect += " by Chaos Mesh's PodChaos " + in.experiment.Name
		}
		return effect, err
	case a.Evict != nil:
		targets, err := in.choose(ctx, *a.Evict, rng, nil)
		if err != nil {
			return "", err
		}
		for _, p := range targets {
			if err := EvictPod(ctx, c, &p); err != nil {
				return describe(targets), err
			}
		}
		return describe(targets), nil
	case a.Preempt != nil:
		return in.preempt(ctx, *a.Preempt, rng)
	case a.Drain != nil:
		return in.drain(ctx, *a.Drain, rng)
	case a.Taint != nil:
		return in.taintNodes(ctx, *a.Taint, rng)
	case a.NodeLoss != nil:
		return in.loseNodes(ctx, *a.NodeLoss, rng)
	case a.OutOfService != nil:
		return in.shutDownNodes(ctx, *a.OutOfService)
	case a.NodeReturn != nil:
		return in.returnNodes(ctx)
	case a.ReadinessGate != nil:
		return in.flipGates(ctx, *a.ReadinessGate, rng)
	case a.FeatureGates != nil:
		in.gatesSet = true
		return "controller restarted with " + formatGates(a.FeatureGates), in.Env.RestartController(ctx, false, a.FeatureGates)
	case a.ControllerRestart != nil:
		return "controller restarted", in.Env.RestartController(ctx, a.ControllerRestart.Crash, nil)
	case a.APIServerRestart != nil:
		return "kube-apiserver restarted", in.Env.RestartAPIServer(ctx, a.APIServerRestart.Crash)
	case a.ControllerStop != nil:
		if in.startController != nil {
			return "", fmt.Errorf("the controller is already stopped: start it (controllerStart) first")
		}
		start, err := in.Env.StopController(ctx, a.ControllerStop.Crash)
		if err != nil {
			return "", err
		}
		if d := a.ControllerStop.For.Duration; d > 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				in.startController = start // Close starts it
				return "controller stopped", ctx.Err()
			}
			return fmt.Sprintf("controller stopped for %s, started", d), start(ctx)
		}
		in.startController = start
		return "controller stopped", nil
	case a.ControllerStart != nil:
		if in.startController == nil {
			return "", fmt.Errorf("the controller is not stopped: stop it (controllerStop) first")
		}
		start := in.startController
		in.startController = nil
		return "controller started", start(ctx)
	}
	return "", fmt.Errorf("empty action")
}

// Close undoes what outlives a run: a stopped controller starts, lost nodes
// return, drained and tainted nodes are restored, changed feature gates go
// back to the defaults, the preemptor's PriorityClass goes. Call it even
// when the run failed or was interrupted (with a context of its own).
func (in *Injector) Close(ctx context.Context) error {
	var errs []error
	if start := in.startController; start != nil {
		in.startController = nil
		errs = append(errs, start(ctx))
	}
	if len(in.lost) > 0 || len(in.touched) > 0 {
		if _, err := in.returnNodes(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if in.priorityClass {
		in.priorityClass = false
		errs = append(errs, deletePriorityClass(ctx, in.Env.Client()))
	}
	if in.gatesSet {
		in.gatesSet = false
		errs = append(errs, in.Env.RestartController(ctx, false, map[string]bool{}))
	}
	return errors.Join(errs...)
}

// candidates are the Job's running pods in a stable order: by completion
// index, then creation, then name.
func (in *Injector) candidates(ctx context.Context, sel Selection, keep func(*corev1.Pod) bool) ([]corev1.Pod, error) {
	list, err := in.Env.Client().CoreV1().Pods(in.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		ref := metav1.GetControllerOf(&p)
		if ref == nil || ref.Kind != "Job" || ref.Name != in.Job {
			continue
		}
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		ix := p.Annotations[batchv1.JobCompletionIndexAnnotation]
		if sel.Index != nil && ix != strconv.Itoa(*sel.Index) {
			continue
		}
		if keep != nil && !keep(&p) {
			continue
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		ai, aerr := strconv.Atoi(a.Annotations[batchv1.JobCompletionIndexAnnotation])
		bi, berr := strconv.Atoi(b.Annotations[batchv1.JobCompletionIndexAnnotation])
		if aerr == nil && berr == nil && ai != bi {
			return ai < bi
		}
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	return out, nil
}

// ErrJobFinished: the action needed a running pod of the Job, and the Job
// had finished (Complete or Failed), so none would come.
var ErrJobFinished = errors.New("the Job had finished: no running pod to act on")

// choose waits (up to WaitTimeout) for running pods of the Job and picks
// among them as the selection says; it fails at once with ErrJobFinished
// when there are none and the Job has finished.
func (in *Injector) choose(ctx context.Context, sel Selection, rng *rand.Rand, keep func(*corev1.Pod) bool) ([]corev1.Pod, error) {
	var pool []corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, in.waitTimeout(), true, func(ctx context.Context) (bool, error) {
		var err error
		if pool, err = in.candidates(ctx, sel, keep); err != nil || len(pool) > 0 {
			return len(pool) > 0, err
		}
		job, err := in.Env.Client().BatchV1().Jobs(in.Namespace).Get(ctx, in.Job, metav1.GetOptions{})
		if err != nil {
			return false, nil // judged again at the next poll
		}
		for _, c := range job.Status.Conditions {
			if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
				return false, ErrJobFinished
			}
		}
		return false, nil
	})
	if errors.Is(err, ErrJobFinished) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("no running pod of Job %s/%s to act on within %s: %w", in.Namespace, in.Job, in.waitTimeout(), err)
	}
	n, err := sel.count(len(pool), rng.IntN)
	if err != nil {
		return nil, err
	}
	rng.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	picked := pool[:n]
	sort.Slice(picked, func(i, j int) bool { return picked[i].Name < picked[j].Name })
	return picked, nil
}

func (in *Injector) waitTimeout() time.Duration {
	if in.WaitTimeout > 0 {
		return in.WaitTimeout
	}
	return 3 * time.Minute
}

// describe names pods by index when they have one (stable across runs).
func describe(ps []corev1.Pod) string {
	var names []string
	for _, p := range ps {
		n := p.Name
		if ix, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]; ok {
			n += " (index " + ix + ")"
		}
		if p.Spec.NodeName != "" {
			n += " on " + p.Spec.NodeName
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		return "no pod selected"
	}
	return strings.Join(names, ", ")
}

func (in *Injector) isLost(node string) bool {
	for _, n := range in.lost {
		if n == node {
			return true
		}
	}
	return false
}

func (in *Injector) loseNodes(ctx context.Context, nl NodeLoss, rng *rand.Rand) (string, error) {
	c := in.Env.Client()
	targets, err := in.choose(ctx, nl.Selection, rng, func(p *corev1.Pod) bool { return p.Spec.NodeName != "" && !in.isLost(p.Spec.NodeName) })
	if err != nil {
		return "", err
	}
	var nodes []string
	for _, p := range targets {
		if !slices.Contains(nodes, p.Spec.NodeName) {
			nodes = append(nodes, p.Spec.NodeName)
		}
	}
	effect := "lost " + strings.Join(nodes, ", ") + " under " + describe(targets)
	for _, n := range nodes {
		if err := in.Env.LoseNode(ctx, n); err != nil {
			return effect, fmt.Errorf("lose node %s: %w", n, err)
		}
		in.lost = append(in.lost, n)
	}
	if nl.DeletePods {
		for _, p := range targets {
			if err := DeletePod(ctx, c, &p, nil); err != nil {
				return effect, err
			}
		}
		effect += "; pods deleted"
	}
	return effect, nil
}

// shutDownNodes waits until every lost node is NotReady, then taints it
// out-of-service or deletes its Node.
func (in *Injector) shutDownNodes(ctx context.Context, sd NodeShutdown) (string, error) {
	if len(in.lost) == 0 {
		return "", fmt.Errorf("no node is lost: lose one first (nodeLoss)")
	}
	for _, n := range in.lost {
		if err := in.waitNotReady(ctx, n); err != nil {
			return "", err
		}
		var err error
		if sd.DeleteNodes {
			err = in.Env.Client().CoreV1().Nodes().Delete(ctx, n, metav1.DeleteOptions{})
		} else {
			err = in.taint(ctx, n, true)
		}
		if err != nil {
			return "", fmt.Errorf("node %s: %w", n, err)
		}
	}
	if sd.DeleteNodes {
		return "deleted Node " + strings.Join(in.lost, ", ") + " once NotReady", nil
	}
	return "tainted " + strings.Join(in.lost, ", ") + " out-of-service once NotReady", nil
}

// waitNotReady waits until the node lifecycle controller has marked node
// not Ready (its grace period after the last heartbeat).
func (in *Injector) waitNotReady(ctx context.Context, node string) error {
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, in.waitTimeout(), true, func(ctx context.Context) (bool, error) {
		n, err := in.Env.Client().CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status != corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("node %s still Ready %s after losing it (node-monitor-grace-period of kube-controller-manager?): %w", node, in.waitTimeout(), err)
	}
	return nil
}

func (in *Injector) taint(ctx context.Context, node string, on bool) error {
	nodes := in.Env.Client().CoreV1().Nodes()
	return retryConflict(ctx, func() error {
		n, err := nodes.Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var taints []corev1.Taint
		for _, t := range n.Spec.Taints {
			if t.Key != OutOfServiceTaint.Key {
				taints = append(taints, t)
			}
		}
		if on {
			taints = append(taints, OutOfServiceTaint)
		}
		n.Spec.Taints = taints
		_, err = nodes.Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
}

func retryConflict(ctx context.Context, f func() error) error {
	for {
		err := f()
		if !apierrors.IsConflict(err) {
			return err
		}
		if err := pause(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

func (in *Injector) returnNodes(ctx context.Context) (string, error) {
	lost, touched := in.lost, in.touched
	var errs []error
	if err := in.restoreNodes(ctx); err != nil {
		errs = append(errs, err)
	}
	for _, n := range lost {
		if err := in.taint(ctx, n, false); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("untaint %s: %w", n, err))
		}
		if err := in.Env.ReturnNode(ctx, n); err != nil {
			errs = append(errs, fmt.Errorf("return node %s: %w", n, err))
		}
	}
	in.lost = nil
	var did []string
	if len(lost) > 0 {
		did = append(did, "returned "+strings.Join(lost, ", "))
	}
	if len(touched) > 0 {
		did = append(did, "restored "+strings.Join(touched, ", ")+" (cordons and taints of the run undone)")
	}
	if len(did) == 0 {
		return "no node was lost, drained or tainted", errors.Join(errs...)
	}
	return strings.Join(did, "; "), errors.Join(errs...)
}

func (in *Injector) flipGates(ctx context.Context, g GateFlip, rng *rand.Rand) (string, error) {
	targets, err := in.choose(ctx, g.Selection, rng, nil)
	if err != nil {
		return "", err
	}
	var set []string
	for _, p := range targets {
		status := g.Status
		if status == "" {
			status = corev1.ConditionTrue
			for _, c := range p.Status.Conditions {
				if c.Type == g.Gate && c.Status == corev1.ConditionTrue {
					status = corev1.ConditionFalse
				}
			}
		}
		if err := SetPodCondition(ctx, in.Env.Client(), &p, g.Gate, status); err != nil {
			return strings.Join(set, ", "), err
		}
		set = append(set, fmt.Sprintf("%s=%s", describe([]corev1.Pod{p}), status))
	}
	if len(set) == 0 {
		return "no pod selected", nil
	}
	return strings.Join(set, ", "), nil
}
