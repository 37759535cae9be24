package harness

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/jobconform/jobconform/chaos"
	"github.com/jobconform/jobconform/internal/cluster"
	"github.com/jobconform/jobconform/suites/internal/controllers"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

// Chaos is the chaos environment for controller c (ref: the reference
// process when c is a reference controller). Nodes and the apiserver are the
// cluster's controls; the controller under test is kube-controller-manager
// for the built-in one and the harness's process for a reference
// controller. What this set-up cannot do, the environment Lacks, saying why:
// on a cluster given by --kubeconfig, the kubelets and the control plane,
// and the nodes unless --allow-node-disruption.
func (e *Env) Chaos(c runner.Controller, ref *controllers.Reference) (chaos.Environment, error) {
	ce := newChaosEnv(e.Cluster, ref)
	if c.Name != runner.BuiltIn.Name && ref == nil {
		ce.lacks[chaos.NeedController] = fmt.Sprintf("restarts or stops %s, which runs on its own: the harness can restart only the controllers it started", c.Name)
	}
	if e.Cluster.Provider() == "existing" {
		const notOurs = "which jobconform cannot do on a cluster it did not create (given by --kubeconfig)"
		ce.lacks[chaos.NeedKubelet] = "stops a node's kubelet, " + notOurs + "; drain and taint scenarios disturb nodes through the API"
		ce.lacks[chaos.NeedAPIServer] = "restarts kube-apiserver, " + notOurs
		if c.Name == runner.BuiltIn.Name {
			ce.lacks[chaos.NeedController] = "restarts, stops or re-gates kube-controller-manager, " + notOurs
		}
		if !e.allowNodeDisruption {
			ce.lacks[chaos.NeedNodeDisruption] = "cordons, drains or taints the cluster's nodes, or preempts pods there, disturbing whatever else runs on them: pass --allow-node-disruption to let it (each node is restored after the scenario)"
		}
	}
	return ce, nil
}

// chaosEnv carries out chaos actions on a cluster.Cluster.
type chaosEnv struct {
	cluster cluster.Cluster
	ref     *controllers.Reference // nil: the built-in controller is under test

	// lacks says why the environment cannot meet a need (chaos.Environment's Lacks).
	lacks map[chaos.Need]string

	mu sync.Mutex
	// defaultGates are the reference controller's gates before the first flip.
	defaultGates map[string]bool
	saved        bool
}

func newChaosEnv(c cluster.Cluster, ref *controllers.Reference) *chaosEnv {
	return &chaosEnv{cluster: c, ref: ref, lacks: map[chaos.Need]string{}}
}

func (e *chaosEnv) Lacks(n chaos.Need) string { return e.lacks[n] }

var _ chaos.Environment = (*chaosEnv)(nil)

func (e *chaosEnv) Client() kubernetes.Interface { return e.cluster.Client() }

func (e *chaosEnv) LoseNode(ctx context.Context, node string) error {
	return e.cluster.LoseNode(ctx, node)
}

func (e *chaosEnv) ReturnNode(ctx context.Context, node string) error {
	return e.cluster.ReturnNode(ctx, node)
}

// RestartController restarts the controller under test; gates replace its
// gates (an empty map restores the ones it started with).
func (e *chaosEnv) RestartController(ctx context.Context, crash bool, gates map[string]bool) error {
	reset := gates != nil && len(gates) == 0
	if e.ref == nil {
		return e.cluster.RestartComponent(ctx, cluster.ControllerManager, cluster.Restart{Crash: crash, FeatureGates: gates, ResetFeatureGates: reset})
	}
	e.mu.Lock()
	if !e.saved {
		e.defaultGates, e.saved = e.ref.Gates, true
	}
	if reset {
		gates = e.defaultGates
		if gates == nil {
			gates = map[string]bool{}
		}
	}
	e.mu.Unlock()
	if crash {
		if err := e.ref.Kill(); err != nil {
			return err
		}
		if gates != nil {
			e.ref.Gates = gates
		}
		return e.ref.Start(ctx)
	}
	return e.ref.Restart(ctx, gates)
}

func (e *chaosEnv) RestartAPIServer(ctx context.Context, crash bool) error {
	return e.cluster.RestartComponent(ctx, cluster.APIServer, cluster.Restart{Crash: crash})
}

// StopController stops the controller under test until the returned start
// is called. The built-in one is held down inside a restart of
// kube-controller-manager, which start lets finish.
func (e *chaosEnv) StopController(ctx context.Context, crash bool) (func(context.Context) error, error) {
	if e.ref != nil {
		if err := e.ref.Down(crash); err != nil {
			return nil, err
		}
		return e.ref.Start, nil
	}
	down, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	hold := func() error { close(down); <-release; return nil }
	go func() {
		// Not ctx: the restart must finish even when the step that stopped it ended.
		done <- e.cluster.RestartComponent(context.WithoutCancel(ctx), cluster.ControllerManager, cluster.Restart{Crash: crash, Hold: hold})
	}()
	select {
	case <-down:
	case err := <-done:
		return nil, err
	}
	return func(ctx context.Context) error {
		close(release)
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return fmt.Errorf("starting kube-controller-manager: %w", ctx.Err())
		}
	}, nil
}

// ChaosMesh is the client through which Chaos Mesh carries out the pod
// chaos (--chaos-engine chaos-mesh, or auto where its CRDs are installed),
// or nil when jobconform acts itself.
func (e *Env) ChaosMesh() (dynamic.Interface, error) {
	if e.chaosEngine == "builtin" {
		return nil, nil
	}
	has, err := chaos.HasChaosMesh(e.Cluster.Client())
	if err != nil {
		return nil, err
	}
	if !has {
		if e.chaosEngine == "chaos-mesh" {
			return nil, BadInput{fmt.Errorf("--chaos-engine chaos-mesh: the cluster serves no %s (install Chaos Mesh, its CRDs and its controller-manager, or use --chaos-engine builtin)", chaos.PodChaosResource)}
		}
		return nil, nil
	}
	return controllers.Dynamic(e.Kubeconfig)
}
