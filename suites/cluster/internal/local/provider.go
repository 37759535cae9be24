package local

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/jobconform/jobconform/scenarios/pods"
	"github.com/jobconform/jobconform/suites/cluster/internal/local/kubeletnode"
	"github.com/jobconform/jobconform/suites/cluster/internal/provider"
)

var _ provider.Cluster = (*Cluster)(nil)

// Create starts a local cluster as cfg describes: one kwok node group per
// node, so each node is lost and returned alone. stages are the kwok Stages
// that make pods behave (see Config.KwokStages).
func Create(ctx context.Context, cfg provider.Config, stages []byte) (provider.Cluster, error) {
	c, err := Start(ctx, Config{
		Name: cfg.Name, Version: cfg.Version, NodeGroups: cfg.Nodes, NodesPerGroup: 1,
		FeatureGates: cfg.FeatureGates, ExtraArgs: cfg.ExtraArgs, LogDir: cfg.LogDir,
		Progress: cfg.Progress, KwokStages: stages, NodeKind: cfg.NodeKind,
	})
	if err != nil {
		return nil, err // not a non-nil interface holding a nil *Cluster
	}
	return c, nil
}

// Provider is "local".
func (c *Cluster) Provider() string { return "local" }

// LoseNode stops the kwok process of the node's group: every node of that
// group stops heartbeating and its pods freeze.
func (c *Cluster) LoseNode(_ context.Context, node string) error {
	g := c.NodeGroupOf(node)
	if g < 0 {
		return fmt.Errorf("node %s belongs to no node group of this cluster", node)
	}
	if !c.NodeGroupRunning(g) {
		return nil // already lost with another node of its group
	}
	return c.StopNodeGroup(g)
}

// ReturnNode registers the group's Nodes again if they were deleted and
// starts its kwok process, waiting until the nodes are Ready.
func (c *Cluster) ReturnNode(ctx context.Context, node string) error {
	g := c.NodeGroupOf(node)
	if g < 0 {
		return fmt.Errorf("node %s belongs to no node group of this cluster", node)
	}
	if c.NodeGroupRunning(g) {
		return nil
	}
	if err := c.RecreateNodes(ctx, g); err != nil {
		return err
	}
	return c.StartNodeGroup(ctx, g)
}

// Pods: kubelet nodes pull nothing and have no pod network, so their pods run
// the locally imported busybox on the host's (loopback-only) network; kwok
// nodes read only the annotations.
func (c *Cluster) Pods() pods.Target {
	if c.cfg.NodeKind == NodesKubelet {
		return pods.Target{Image: kubeletnode.BusyboxImage, PullPolicy: corev1.PullNever, HostNetwork: true}
	}
	return pods.Target{}
}
