package pods

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/itchyny/gojq"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// jq evaluates program on pod the way kwok does: pod as JSON, first result.
func jq(t *testing.T, program string, pod *corev1.Pod) any {
	t.Helper()
	q, err := gojq.Parse(program)
	if err != nil {
		t.Fatalf("parse jq: %v", err)
	}
	code, err := gojq.Compile(q)
	if err != nil {
		t.Fatalf("compile jq: %v", err)
	}
	data, _ := json.Marshal(pod)
	var v any
	_ = json.Unmarshal(data, &v)
	it := code.Run(v)
	out, ok := it.Next()
	if !ok {
		t.Fatalf("jq gave no result")
	}
	if err, isErr := out.(error); isErr {
		t.Fatalf("jq error: %v", err)
	}
	return out
}

func state(t *testing.T, pod *corev1.Pod) string {
	t.Helper()
	s, ok := jq(t, StateExpression(), pod).(string)
	if !ok {
		t.Fatalf("state is not a string")
	}
	return s
}

// delay is the stage delay kwok would compute now for the pod's state.
func delay(t *testing.T, pod *corev1.Pod) time.Duration {
	t.Helper()
	expr := DelayExpression(state(t, pod))
	if expr == "" {
		return 0
	}
	s := jq(t, expr, pod).(string)
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("delay %q: %v", s, err)
	}
	return d
}

type podOpt func(*corev1.Pod)

func newPod(b Behavior, opts ...podOpt) *corev1.Pod {
	tmpl := corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}}
	b.Apply(&tmpl)
	p := &corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
	p.Spec.NodeName = "kwok-g0-n0"
	for _, o := range opts {
		o(p)
	}
	return p
}

// running: started seconds ago, ContainersReady cr, Ready as given.
func running(startedAgo time.Duration, cr, ready bool) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.ContainersReady, Status: boolCond(cr)},
			{Type: corev1.PodReady, Status: boolCond(ready)},
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name:  "main",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Now().Add(-startedAgo))}},
		}}
	}
}

// exitedWith: the container terminated with code, the phase still Running
// (the kubelet's first update after an exit).
func exitedWith(code int32) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.ContainersReady, Status: corev1.ConditionFalse},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse},
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{
			Name:  "main",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}},
		}}
	}
}

// sidecarRunning and sidecarEnded: the status of a sidecar (an init
// container that restarts always).
func sidecarRunning(name string) podOpt {
	return func(p *corev1.Pod) {
		p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, corev1.ContainerStatus{Name: name,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}})
	}
}

func sidecarEnded(name string) podOpt {
	return func(p *corev1.Pod) {
		p.Status.InitContainerStatuses = append(p.Status.InitContainerStatuses, corev1.ContainerStatus{Name: name,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}})
	}
}

func deleted(ago time.Duration, grace int64) podOpt {
	return func(p *corev1.Pod) {
		dt := metav1.NewTime(time.Now().Add(-ago).Add(time.Duration(grace) * time.Second))
		p.DeletionTimestamp = &dt
		p.DeletionGracePeriodSeconds = &grace
	}
}

func condition(t corev1.PodConditionType, s bool) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: boolCond(s)})
	}
}

func phase(ph corev1.PodPhase) podOpt { return func(p *corev1.Pod) { p.Status.Phase = ph } }

func boolCond(b bool) corev1.ConditionStatus {
	if b {
		return corev1.ConditionTrue
	}
	return corev1.ConditionFalse
}

func TestStateMachine(t *testing.T) {
	gate := corev1.PodConditionType("example.com/gate")
	cases := []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"new pod starts", newPod(Succeed(2 * time.Second)), "start"},
		{"running with a run time exits", newPod(Succeed(2*time.Second), running(0, true, true)), "exit"},
		{"running forever has nothing to do", newPod(RunForever(), running(0, true, true)), "running"},
		{"Ready wrong is fixed first", newPod(Succeed(2*time.Second), running(0, true, false)), "ready"},
		{"gate not set keeps Ready False", newPod(RunForever().WithGates(gate), running(0, true, false)), "running"},
		{"gate False keeps Ready False", newPod(RunForever().WithGates(gate), running(0, true, false), condition(gate, false)), "running"},
		{"gate flips True: Ready re-evaluated", newPod(RunForever().WithGates(gate), running(0, true, false), condition(gate, true)), "ready"},
		{"gate flips back False: Ready re-evaluated", newPod(RunForever().WithGates(gate), running(0, true, true), condition(gate, false)), "ready"},
		{"ready-after pending", newPod(RunForever().WithReadyAfter(3*time.Second), running(0, false, false)), "containers-ready"},
		{"ready-after beyond the run: exit first", newPod(Succeed(time.Second).WithReadyAfter(5*time.Second), running(0, false, false)), "exit"},
		{"deleted while running terminates", newPod(RunForever().TrapSIGTERM(5*time.Second, 143), running(0, true, true), deleted(0, 30)), "terminate"},
		{"force-deleted running pod: no more status", newPod(RunForever(), running(0, true, true), deleted(0, 0)), "forced"},
		{"deleted terminal pod is removed", newPod(Succeed(0), phase(corev1.PodFailed), deleted(0, 30)), "remove"},
		{"terminal pod stays", newPod(Succeed(0), phase(corev1.PodSucceeded)), "done"},
		{"deleted before start aborts", newPod(Succeed(0), deleted(0, 30)), "abort"},
		{"OnFailure: the container exits first", newPod(Fail(3), running(0, true, true), func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure }), "exit"},
		{"OnFailure non-zero exit waits to restart", newPod(Fail(3), exitedWith(3), func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure }), "backoff"},
		{"OnFailure zero exit completes", newPod(Succeed(0), exitedWith(0), func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure }), "finish"},
		{"Never: an exited container ends the pod", newPod(Fail(3), exitedWith(3)), "finish"},
		{"Never: the main containers ended, a sidecar runs: stopped first", newPod(Fail(3), exitedWith(3), sidecarRunning("proxy")), "stop-sidecars"},
		{"the sidecars stopped: the pod ends", newPod(Succeed(0), exitedWith(0), sidecarEnded("proxy")), "finish"},
		{"OnFailure: a sidecar runs on while the container restarts", newPod(Fail(3), exitedWith(3), sidecarRunning("proxy"), func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure }), "backoff"},
		{"OnFailure: a deleted pod does not restart", newPod(Fail(3), exitedWith(3), deleted(0, 30), func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure }), "finish"},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := state(t, tc.pod); got != tc.want {
				t.Fatalf("state = %q, want %q", got, tc.want)
			}
		})
		seen[tc.want] = true
	}
	for _, s := range States() {
		if !seen[s] && s != "resume" {
			t.Errorf("state %q has a stage but no case here", s)
		}
	}
}

func TestTimersAreAbsolute(t *testing.T) {
	// A pod that started 1.5s ago and runs 4s: exit about 2.5s (+ up to 1s rounding) from now.
	p := newPod(Succeed(4*time.Second), running(1500*time.Millisecond, true, true))
	d := delay(t, p)
	if d < 1500*time.Millisecond || d > 4*time.Second {
		t.Fatalf("exit delay %s, want within the rest of the 4s run (+1s rounding)", d)
	}
	// The same pod seen again later (any update) keeps the same deadline: less left.
	later := newPod(Succeed(4*time.Second), running(3500*time.Millisecond, true, true))
	if d2 := delay(t, later); d2 >= d {
		t.Fatalf("delay did not shrink as time passed: %s then %s", d, d2)
	}
}

func TestTerminationDelay(t *testing.T) {
	cases := []struct {
		name     string
		trap     time.Duration
		grace    int64
		ago      time.Duration
		min, max time.Duration
	}{
		{"trap shorter than grace", 5 * time.Second, 30, 0, 4 * time.Second, 6 * time.Second},
		{"trap longer than grace is cut at grace", 20 * time.Second, 3, 0, 2 * time.Second, 4 * time.Second},
		{"deadline kept across updates", 5 * time.Second, 30, 3 * time.Second, 1 * time.Second, 3 * time.Second},
		{"no trap exits at once", 0, 30, 0, -time.Second, time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newPod(RunForever().TrapSIGTERM(tc.trap, 143), running(10*time.Second, true, true), deleted(tc.ago, tc.grace))
			if got := state(t, p); got != "terminate" {
				t.Fatalf("state %q", got)
			}
			if d := delay(t, p); d < tc.min || d > tc.max {
				t.Fatalf("termination delay %s, want in [%s, %s]", d, tc.min, tc.max)
			}
		})
	}
}

func TestIndexOverride(t *testing.T) {
	b := Succeed(10*time.Second).ForIndex(1, Fail(42)).ForIndex(2, RunForever())
	idx := func(i string) podOpt {
		return func(p *corev1.Pod) { p.Annotations[CompletionIndexAnnotation] = i }
	}
	if got := jq(t, prelude+`num("exit-code"; "0")`, newPod(b, idx("1"))); got != 42 {
		t.Errorf("index 1 exit code = %v, want 42", got)
	}
	if got := jq(t, prelude+`num("exit-code"; "0")`, newPod(b, idx("0"))); got != 0 {
		t.Errorf("index 0 exit code = %v, want 0", got)
	}
	if got := state(t, newPod(b, idx("2"), running(0, true, true))); got != "running" {
		t.Errorf("index 2 (forever) state = %q, want running", got)
	}
	if got := state(t, newPod(b, running(0, true, true))); got != "exit" {
		t.Errorf("non-indexed pod state = %q, want exit", got)
	}
}

func TestKwokStagesAreYAML(t *testing.T) {
	docs := strings.Split(string(KwokStages()), "\n---\n")
	if len(docs) != len(stages) {
		t.Fatalf("%d documents for %d stages", len(docs), len(stages))
	}
	for _, d := range docs {
		var obj struct {
			Kind string
			Spec struct {
				Selector struct {
					MatchExpressions []struct {
						Key    string
						Values []string
					} `json:"matchExpressions"`
				}
				Delay *struct {
					DurationFrom struct {
						ExpressionFrom string `json:"expressionFrom"`
					} `json:"durationFrom"`
				}
				Next map[string]any
			}
		}
		if err := yaml.Unmarshal([]byte(d), &obj); err != nil {
			t.Fatalf("stage is not YAML: %v\n%s", err, d)
		}
		if obj.Kind != "Stage" || len(obj.Spec.Selector.MatchExpressions) != 1 || len(obj.Spec.Next) == 0 {
			t.Fatalf("malformed stage:\n%s", d)
		}
		if _, err := gojq.Parse(obj.Spec.Selector.MatchExpressions[0].Key); err != nil {
			t.Fatalf("selector is not jq: %v", err)
		}
		if obj.Spec.Delay != nil {
			if _, err := gojq.Parse(obj.Spec.Delay.DurationFrom.ExpressionFrom); err != nil {
				t.Fatalf("delay is not jq: %v", err)
			}
		}
	}
}
