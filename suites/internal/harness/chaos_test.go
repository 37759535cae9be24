package harness

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/jobconform/jobconform/chaos"
	"github.com/jobconform/jobconform/internal/cluster"
	"github.com/jobconform/jobconform/internal/pods"
	"github.com/jobconform/jobconform/suites/internal/controllers"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

// fakeCluster records the controls called on it.
type fakeCluster struct {
	provider string
	calls    []string
	fail     error
}

func (f *fakeCluster) Provider() string             { return f.provider }
func (f *fakeCluster) Kubeconfig() string           { return "/dev/null" }
func (f *fakeCluster) Client() kubernetes.Interface { return fake.NewClientset() }
func (f *fakeCluster) Version() string              { return "v1.37.1" }
func (f *fakeCluster) LogDir() string               { return "" }
func (f *fakeCluster) UserKubeconfig(string, ...string) (string, error) {
	return "", cluster.ErrUnsupported
}
func (f *fakeCluster) Pods() pods.Target { return pods.Target{} }
func (f *fakeCluster) Metrics(context.Context, cluster.Component) (string, error) {
	return "", cluster.ErrUnsupported
}
func (f *fakeCluster) Stop() error { return nil }
func (f *fakeCluster) RestartComponent(_ context.Context, comp cluster.Component, r cluster.Restart) error {
	f.calls = append(f.calls, fmt.Sprintf("restart %s crash=%t gates=%v reset=%t", comp, r.Crash, r.FeatureGates, r.ResetFeatureGates))
	return f.fail
}
func (f *fakeCluster) LoseNode(_ context.Context, n string) error {
	f.calls = append(f.calls, "lose "+n)
	return f.fail
}
func (f *fakeCluster) ReturnNode(_ context.Context, n string) error {
	f.calls = append(f.calls, "return "+n)
	return f.fail
}

// On a cluster given by --kubeconfig the chaos environment lacks the
// kubelets and the control plane (but a reference controller the harness
// started is its own to restart), and the nodes unless allowed; a controller
// the harness did not start cannot be restarted anywhere.
func TestChaosLacksWhatItDoesNotControl(t *testing.T) {
	lacks := func(e *Env, c runner.Controller, ref *controllers.Reference) map[chaos.Need]string {
		t.Helper()
		ce, err := e.Chaos(c, ref)
		if err != nil {
			t.Fatal(err)
		}
		out := map[chaos.Need]string{}
		for _, n := range []chaos.Need{chaos.NeedNodeDisruption, chaos.NeedKubelet, chaos.NeedController, chaos.NeedAPIServer} {
			if why := ce.Lacks(n); why != "" {
				out[n] = why
			}
		}
		return out
	}
	got := lacks(&Env{Cluster: &fakeCluster{provider: "existing"}}, runner.BuiltIn, nil)
	if len(got) != 4 || !strings.Contains(got[chaos.NeedNodeDisruption], "--allow-node-disruption") || !strings.Contains(got[chaos.NeedKubelet], "--kubeconfig") {
		t.Errorf("the built-in on an existing cluster: %v", got)
	}
	got = lacks(&Env{Cluster: &fakeCluster{provider: "existing"}, allowNodeDisruption: true}, runner.Reference, &controllers.Reference{})
	if len(got) != 2 || got[chaos.NeedKubelet] == "" || got[chaos.NeedAPIServer] == "" {
		t.Errorf("the harness's reference on an existing cluster, node disruption allowed: %v", got)
	}
	got = lacks(&Env{Cluster: &fakeCluster{provider: "local"}}, runner.BuiltIn, nil)
	if len(got) != 0 {
		t.Errorf("the built-in on a local cluster: %v", got)
	}
	got = lacks(&Env{Cluster: &fakeCluster{provider: "local"}}, runner.Controller{Name: "example.com/mine"}, nil)
	if len(got) != 1 || !strings.Contains(got[chaos.NeedController], "only the controllers it started") {
		t.Errorf("a controller the harness did not start: %v", got)
	}
}

// The built-in controller under test is kube-controller-manager: restarts,
// crashes and gate flips go to that component; nodes and the apiserver to
// the cluster's controls.
func TestChaosEnvActsOnTheClustersControls(t *testing.T) {
	fc := &fakeCluster{provider: "local"}
	env, err := (&Env{Cluster: fc}).Chaos(runner.BuiltIn, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	steps := []func() error{
		func() error { return env.LoseNode(ctx, "n1") },
		func() error { return env.ReturnNode(ctx, "n1") },
		func() error { return env.RestartController(ctx, true, nil) },
		func() error {
			return env.RestartController(ctx, false, map[string]bool{"JobPodReplacementPolicy": false})
		},
		func() error { return env.RestartController(ctx, false, map[string]bool{}) },
		func() error { return env.RestartAPIServer(ctx, true) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"lose n1", "return n1",
		"restart kube-controller-manager crash=true gates=map[] reset=false",
		"restart kube-controller-manager crash=false gates=map[JobPodReplacementPolicy:false] reset=false",
		"restart kube-controller-manager crash=false gates=map[] reset=true",
		"restart kube-apiserver crash=true gates=map[] reset=false",
	}
	if !reflect.DeepEqual(fc.calls, want) {
		t.Fatalf("calls\n%q\nwant\n%q", fc.calls, want)
	}
	fc.fail = fmt.Errorf("kind: restarting: %w", cluster.ErrUnsupported)
	if err := env.RestartAPIServer(ctx, false); !errors.Is(err, cluster.ErrUnsupported) {
		t.Fatalf("a provider's refusal must reach the step: %v", err)
	}
}

// With a reference controller under test, restarts go to its process, never
// to kube-controller-manager.
func TestChaosEnvRestartsTheReferenceNotTheControllerManager(t *testing.T) {
	fc := &fakeCluster{provider: "local"}
	ref := &controllers.Reference{Binary: "/nonexistent/reference-controller", Gates: map[string]bool{"JobPodReplacementPolicy": true}}
	env, err := (&Env{Cluster: fc}).Chaos(runner.Reference, ref)
	if err != nil {
		t.Fatal(err)
	}
	err = env.RestartController(context.Background(), true, map[string]bool{"JobPodReplacementPolicy": false})
	if err == nil {
		t.Fatal("started a reference controller from a binary that does not exist")
	}
	if len(fc.calls) != 0 {
		t.Fatalf("the cluster was restarted instead of the reference: %v", fc.calls)
	}
	if ref.Gates["JobPodReplacementPolicy"] {
		t.Fatalf("the gate flip did not reach the reference: %v", ref.Gates)
	}
}
