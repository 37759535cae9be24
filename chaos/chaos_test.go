package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chaos-mesh/chaos-mesh/api/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

func TestSelectionCountFollowsChaosMesh(t *testing.T) {
	never := func(int) int { panic("no draw expected") }
	for _, tc := range []struct {
		sel  Selection
		n    int
		want int
	}{
		{Selection{}, 5, 1},
		{Selection{Mode: v1alpha1.OneMode}, 0, 0},
		{Selection{Mode: v1alpha1.AllMode}, 5, 5},
		{Selection{Mode: v1alpha1.FixedMode, Value: "2"}, 5, 2},
		{Selection{Mode: v1alpha1.FixedMode, Value: "9"}, 5, 5},
		{Selection{Mode: v1alpha1.FixedPercentMode, Value: "50"}, 5, 2}, // floor(2.5)
		{Selection{Mode: v1alpha1.FixedPercentMode, Value: "100"}, 3, 3},
	} {
		got, err := tc.sel.count(tc.n, never)
		if err != nil || got != tc.want {
			t.Errorf("%+v of %d: got %d, %v; want %d", tc.sel, tc.n, got, err, tc.want)
		}
	}
	// random-max-percent draws the percentage in [0, value].
	got, _ := Selection{Mode: v1alpha1.RandomMaxPercentMode, Value: "80"}.count(10, func(n int) int {
		if n != 81 {
			t.Errorf("drew from [0,%d), want [0,81)", n)
		}
		return 55
	})
	if got != 5 {
		t.Errorf("55%% of 10 = %d, want 5", got)
	}
	for _, bad := range []Selection{{Mode: "most"}, {Mode: v1alpha1.FixedMode, Value: "x"}, {Mode: v1alpha1.FixedPercentMode, Value: "101"}} {
		if err := bad.validate(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

func TestScheduleTimes(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	got, err := scheduleTimes("@every 3s", 3, start)
	if err != nil || !reflect.DeepEqual(got, []time.Duration{0, 3 * time.Second, 6 * time.Second}) {
		t.Fatalf("@every 3s ×3 = %v, %v", got, err)
	}
	if _, err := scheduleTimes("@every 3s", 0, start); err == nil || !strings.Contains(err.Error(), "needs times") {
		t.Fatalf("schedule without times: %v", err)
	}
	if _, err := scheduleTimes("", 2, start); err == nil || !strings.Contains(err.Error(), "needs a schedule") {
		t.Fatalf("times without schedule: %v", err)
	}
	if _, err := scheduleTimes("every three seconds", 2, start); err == nil {
		t.Fatal("bad schedule accepted")
	}
}

func TestValidateNamesTheField(t *testing.T) {
	for yml, want := range map[string]string{
		`{}`:                          "exactly one of",
		`{evict: {}, nodeReturn: {}}`: "exactly one of",
		`{podChaos: {action: pod-failure, mode: one}}`:       "podChaos.duration",
		`{podChaos: {action: pod-explode, mode: one}}`:       "use pod-kill, pod-failure or container-kill",
		`{evict: {mode: most}}`:                              "mode \"most\"",
		`{readinessGate: {mode: all}}`:                       "readinessGate.gate",
		`{readinessGate: {gate: g, status: Maybe}}`:          "readinessGate.status",
		`{random: {actions: 2, menu: [pod-kill, teleport]}}`: "random.menu: \"teleport\"",
		`{random: {actions: 2, menu: [readiness-gate]}}`:     "random.gate",
		`{outOfService: {}, nodeReturn: {}}`:                 "exactly one of",
		`{evict: {mode: one}, schedule: "@every 2s"}`:        "needs times",
	} {
		var a Action
		if err := yaml.UnmarshalStrict([]byte(yml), &a); err != nil {
			t.Fatalf("%s: %v", yml, err)
		}
		err := a.Validate()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one mentioning %q", yml, err, want)
		}
	}
	var ok Action
	if err := yaml.UnmarshalStrict([]byte(`{podChaos: {action: pod-kill, mode: fixed, value: "2", gracePeriod: 30}, schedule: "@every 3s", times: 2}`), &ok); err != nil {
		t.Fatal(err)
	}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid action: %v", err)
	}
	if d := ok.Describe(); d != `pod-kill mode=fixed value=2 gracePeriod=30 schedule="@every 3s" times=2` {
		t.Fatalf("Describe = %q", d)
	}
}

func TestExpandIsSeeded(t *testing.T) {
	r := Random{Actions: 12, Menu: RandomMenu, Gate: "g", MinPause: Duration{Duration: time.Second}, MaxPause: Duration{Duration: 4 * time.Second}}
	plan := func(seed uint64) []string {
		var out []string
		for _, p := range Expand(r, rand.New(rand.NewPCG(seed, 1))) {
			out = append(out, fmt.Sprintf("%s %s", p.Pause, p.Action.Describe()))
		}
		return out
	}
	a, b, c := plan(7), plan(7), plan(8)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("same seed, different plans:\n%v\n%v", a, b)
	}
	if reflect.DeepEqual(a, c) {
		t.Fatal("seeds 7 and 8 gave the same plan")
	}
	kinds := map[string]bool{}
	for i, line := range a {
		kinds[strings.Fields(line)[1]] = true
		if strings.Contains(line, " node-loss") && (i+1 >= len(a) || !strings.Contains(a[i+1], "node-return")) {
			t.Fatalf("node loss not followed by a return: %v", a)
		}
	}
	if len(kinds) < 3 {
		t.Fatalf("12 draws from %d kinds gave only %v", len(RandomMenu), kinds)
	}
}

// fakeEnv records what the injector asked of the provider.
type fakeEnv struct {
	client kubernetes.Interface
	calls  []string
	lacks  map[Need]string
}

func (f *fakeEnv) Client() kubernetes.Interface { return f.client }
func (f *fakeEnv) LoseNode(_ context.Context, n string) error {
	f.calls = append(f.calls, "lose "+n)
	return nil
}
func (f *fakeEnv) ReturnNode(_ context.Context, n string) error {
	f.calls = append(f.calls, "return "+n)
	return nil
}
func (f *fakeEnv) RestartController(_ context.Context, crash bool, gates map[string]bool) error {
	f.calls = append(f.calls, fmt.Sprintf("restart crash=%t gates=%v", crash, gates))
	return nil
}
func (f *fakeEnv) StopController(_ context.Context, crash bool) (func(context.Context) error, error) {
	f.calls = append(f.calls, fmt.Sprintf("stop crash=%t", crash))
	return func(context.Context) error { f.calls = append(f.calls, "start"); return nil }, nil
}
func (f *fakeEnv) RestartAPIServer(context.Context, bool) error {
	f.calls = append(f.calls, "apiserver")
	return nil
}
func (f *fakeEnv) Lacks(n Need) string { return f.lacks[n] }

func jobPods(n int) []runtime.Object {
	var out []runtime.Object
	for i := 0; i < n; i++ {
		out = append(out, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("job-%d-x%d", i, i*7%5), Namespace: "ns",
				Annotations:     map[string]string{batchv1.JobCompletionIndexAnnotation: fmt.Sprint(i)},
				OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: "job", UID: "u", Controller: ptr.To(true)}}},
			Spec:   corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", i%3)},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		})
	}
	return out
}

func TestInjectorSameSeedSameLog(t *testing.T) {
	run := func(seed uint64) ([]string, []string, []string) {
		env := &fakeEnv{client: fake.NewClientset(jobPods(6)...)}
		in := NewInjector(env, "ns", "job", seed)
		ctx := context.Background()
		steps := []Action{
			{PodChaos: &v1alpha1.PodChaosSpec{Action: v1alpha1.ContainerKillAction, ContainerSelector: v1alpha1.ContainerSelector{PodSelector: v1alpha1.PodSelector{Mode: v1alpha1.FixedMode, Value: "2"}}}},
			{ReadinessGate: &GateFlip{Selection: Selection{Mode: v1alpha1.AllMode}, Gate: "g", Status: corev1.ConditionTrue}},
			{NodeLoss: &NodeLoss{Selection: Selection{Mode: v1alpha1.OneMode}}},
			{FeatureGates: map[string]bool{"JobPodReplacementPolicy": false}},
			{Random: &Random{Actions: 4, Menu: []string{KindContainerKill, KindReadinessGate, KindControllerCrash}, Gate: "g", MinPause: Duration{Duration: time.Millisecond}, MaxPause: Duration{Duration: 2 * time.Millisecond}}},
		}
		for i, a := range steps {
			if err := in.Do(ctx, i, a); err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
		}
		if err := in.Close(ctx); err != nil {
			t.Fatal(err)
		}
		var effects []string
		for _, r := range in.Records() {
			effects = append(effects, r.Effect)
		}
		return in.ActionLog(), effects, env.calls
	}
	log1, eff1, calls1 := run(42)
	log2, eff2, calls2 := run(42)
	if !reflect.DeepEqual(log1, log2) || !reflect.DeepEqual(eff1, eff2) || !reflect.DeepEqual(calls1, calls2) {
		t.Fatalf("seed 42 twice differs:\n%v\n%v\n%v\n%v", log1, log2, eff1, eff2)
	}
	if len(log1) != 8 {
		t.Fatalf("want 4 actions + 4 planned, got %d: %v", len(log1), log1)
	}
	if !strings.Contains(strings.Join(eff1, "\n"), "index") {
		t.Fatalf("effects do not name the indexes: %v", eff1)
	}
	// Close returned the lost node and restored the gates.
	joined := strings.Join(calls1, "\n")
	if !strings.Contains(joined, "return node-") || !strings.HasSuffix(joined, "restart crash=false gates=map[]") {
		t.Fatalf("Close did not undo the run: %v", calls1)
	}
	_, eff3, _ := run(43)
	if reflect.DeepEqual(eff1, eff3) {
		t.Fatalf("seeds 42 and 43 chose the same pods: %v", eff1)
	}
}

func TestContainerKillPatchesIndexedAnnotations(t *testing.T) {
	client := fake.NewClientset(jobPods(2)...)
	in := NewInjector(&fakeEnv{client: client}, "ns", "job", 1)
	ix := 1
	a := Action{PodChaos: &v1alpha1.PodChaosSpec{Action: v1alpha1.ContainerKillAction}}
	a.PodChaos.Mode = v1alpha1.OneMode
	sel := Selection{Index: &ix}
	targets, err := in.choose(context.Background(), sel, rand.New(rand.NewPCG(1, 1)), nil)
	if err != nil || len(targets) != 1 || targets[0].Annotations[batchv1.JobCompletionIndexAnnotation] != "1" {
		t.Fatalf("index selection: %v %v", targets, err)
	}
	if err := EndRun(context.Background(), client, &targets[0], ptr.To[int32](137)); err != nil {
		t.Fatal(err)
	}
	p, _ := client.CoreV1().Pods("ns").Get(context.Background(), targets[0].Name, metav1.GetOptions{})
	if p.Annotations["pod.jobconform.io/exit-code.1"] != "137" || p.Annotations["pod.jobconform.io/run-seconds.1"] != "0" {
		t.Fatalf("annotations %v", p.Annotations)
	}
}

// A random plan whose Job has finished ends at once: its actions that need a
// running pod have nothing to act on, which is no harness failure. A single
// action on a finished Job fails at once, saying so, instead of waiting.
func TestPlanEndsWhenTheJobHasFinished(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"},
		Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}}
	env := &fakeEnv{client: fake.NewClientset(job)}
	in := NewInjector(env, "ns", "job", 7)
	in.WaitTimeout = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	plan := Action{Random: &Random{Actions: 3, Menu: []string{KindPodKill}, MinPause: Duration{Duration: time.Millisecond}, MaxPause: Duration{Duration: 2 * time.Millisecond}}}
	if err := in.Do(ctx, 1, plan); err != nil {
		t.Fatalf("plan on a finished Job: %v", err)
	}
	rs := in.Records()
	if len(rs) != 1 || rs[0].Err != nil || !strings.Contains(rs[0].Effect, "not done: the Job had finished") {
		t.Fatalf("records: %+v", rs)
	}
	one := Action{PodChaos: &v1alpha1.PodChaosSpec{Action: v1alpha1.PodKillAction, ContainerSelector: v1alpha1.ContainerSelector{PodSelector: v1alpha1.PodSelector{Mode: v1alpha1.OneMode}}}}
	start := time.Now()
	if err := in.Do(ctx, 2, one); !errors.Is(err, ErrJobFinished) || time.Since(start) > 10*time.Second {
		t.Fatalf("one action on a finished Job: %v after %s", err, time.Since(start))
	}
}
