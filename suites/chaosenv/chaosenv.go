// Package chaosenv implements chaos.Environment for the cluster providers:
// how a node is lost and returned, and how the controller under test or the
// apiserver is restarted, on the local provider and on kind.
package chaosenv

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/jobconform/jobconform/chaos"
	"github.com/jobconform/jobconform/suites/cluster/kind"
	"github.com/jobconform/jobconform/suites/cluster/local"
	"github.com/jobconform/jobconform/suites/controllers"
)

// Local acts on a local cluster. Reference is the reference controller
// process when it is the controller under test; nil means the built-in one
// (kube-controller-manager).
type Local struct {
	Cluster   *local.Cluster
	Reference *controllers.Reference

	mu sync.Mutex
	// defaultGates are the reference controller's gates before the first flip.
	defaultGates map[string]bool
	saved        bool
}

var _ chaos.Environment = (*Local)(nil)

// Client is the cluster's admin client.
func (l *Local) Client() kubernetes.Interface { return l.Cluster.Client() }

// LoseNode stops the kwok process of the node's group: every node of that
// group stops heartbeating and its pods freeze.
func (l *Local) LoseNode(_ context.Context, node string) error {
	g := l.Cluster.NodeGroupOf(node)
	if g < 0 {
		return fmt.Errorf("node %s belongs to no node group of this cluster", node)
	}
	if !l.Cluster.NodeGroupRunning(g) {
		return nil // already lost with another node of its group
	}
	return l.Cluster.StopNodeGroup(g)
}

// ReturnNode registers the group's Nodes again if they were deleted and
// starts its kwok process, waiting until the nodes are Ready.
func (l *Local) ReturnNode(ctx context.Context, node string) error {
	g := l.Cluster.NodeGroupOf(node)
	if g < 0 {
		return fmt.Errorf("node %s belongs to no node group of this cluster", node)
	}
	if l.Cluster.NodeGroupRunning(g) {
		return nil
	}
	if err := l.Cluster.RecreateNodes(ctx, g); err != nil {
		return err
	}
	return l.Cluster.StartNodeGroup(ctx, g)
}

// RestartController restarts kube-controller-manager (built-in under test) or
// the reference controller; gates replace the controller's gates (an empty
// map restores the ones it started with).
func (l *Local) RestartController(ctx context.Context, crash bool, gates map[string]bool) error {
	if l.Reference != nil {
		l.mu.Lock()
		if !l.saved {
			l.defaultGates, l.saved = l.Reference.Gates, true
		}
		if gates != nil && len(gates) == 0 {
			gates = l.defaultGates
			if gates == nil {
				gates = map[string]bool{}
			}
		}
		l.mu.Unlock()
		if crash {
			if err := l.Reference.Kill(); err != nil {
				return err
			}
			if gates != nil {
				l.Reference.Gates = gates
			}
			return l.Reference.Start(ctx)
		}
		return l.Reference.Restart(ctx, gates)
	}
	var opts []local.ComponentOption
	switch {
	case gates != nil && len(gates) == 0:
		opts = append(opts, local.WithClusterFeatureGates())
	case gates != nil:
		opts = append(opts, local.WithFeatureGates(gates))
	}
	if crash {
		if err := l.Cluster.KillComponent(local.ControllerManager); err != nil {
			return err
		}
		return l.Cluster.StartComponent(ctx, local.ControllerManager, opts...)
	}
	return l.Cluster.RestartComponent(ctx, local.ControllerManager, opts...)
}

// RestartAPIServer restarts kube-apiserver and waits until it is healthy.
func (l *Local) RestartAPIServer(ctx context.Context, crash bool) error {
	if crash {
		if err := l.Cluster.KillComponent(local.APIServer); err != nil {
			return err
		}
		return l.Cluster.StartComponent(ctx, local.APIServer)
	}
	return l.Cluster.RestartComponent(ctx, local.APIServer)
}

// Kind acts on a kind cluster: a node is lost by stopping (or pausing) its
// container. Control-plane restarts with other flags need the static pod
// manifests changed on the node, which this harness does not do on kind.
type Kind struct {
	Cluster *kind.Cluster
	// How a node is lost: "stop" (default) or "pause".
	How string
}

var _ chaos.Environment = (*Kind)(nil)

// Client is the cluster's admin client.
func (k *Kind) Client() kubernetes.Interface { return k.Cluster.Client() }

func (k *Kind) how() string {
	if k.How == "" {
		return "stop"
	}
	return k.How
}

// LoseNode stops (or pauses) the node's container.
func (k *Kind) LoseNode(ctx context.Context, node string) error {
	return k.Cluster.LoseNode(ctx, node, k.how())
}

// ReturnNode starts (or unpauses) the node's container and waits until the
// kubelet has registered the node again and reports it Ready.
func (k *Kind) ReturnNode(ctx context.Context, node string) error {
	if err := k.Cluster.ReturnNode(ctx, node, k.how()); err != nil {
		return err
	}
	return WaitNodeReady(ctx, k.Client(), node, 3*time.Minute)
}

// ErrUnsupported is returned for actions a provider cannot carry out.
var ErrUnsupported = errors.New("not supported on this provider")

// RestartController is not supported on kind.
func (k *Kind) RestartController(context.Context, bool, map[string]bool) error {
	return fmt.Errorf("restart the controller on kind: %w (use the local provider, or an external controller the harness starts)", ErrUnsupported)
}

// RestartAPIServer is not supported on kind.
func (k *Kind) RestartAPIServer(context.Context, bool) error {
	return fmt.Errorf("restart kube-apiserver on kind: %w (use the local provider)", ErrUnsupported)
}

// WaitNodeReady waits until node exists and its Ready condition is True.
func WaitNodeReady(ctx context.Context, client kubernetes.Interface, node string, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		n, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("node %s not Ready within %s: %w", node, timeout, err)
	}
	return nil
}
