package local

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/jobconform/jobconform/internal/cluster/internal/local/kubeletnode"
	"github.com/jobconform/jobconform/internal/cluster/internal/provider"
	"github.com/jobconform/jobconform/internal/pods"
	"github.com/jobconform/jobconform/internal/process"
)

var _ provider.Cluster = (*Cluster)(nil)

// Create starts a local cluster as cfg describes: one kwok node group per
// node, so each node is lost and returned alone (unless cfg.NodesPerGroup
// puts several in each). stages are the kwok Stages
// that make pods behave (see Config.KwokStages).
func Create(ctx context.Context, cfg provider.Config, stages []byte) (provider.Cluster, error) {
	c, err := Start(ctx, Config{
		Name: cfg.Name, Version: cfg.Version, NodeGroups: cfg.Nodes, NodesPerGroup: cfg.NodesPerGroup, NodeLeaseSeconds: cfg.NodeLeaseSeconds,
		FeatureGates: cfg.FeatureGates, ExtraArgs: cfg.ExtraArgs, LogDir: cfg.LogDir, Artifacts: cfg.Artifacts,
		Progress: cfg.Progress, KwokStages: stages, NodeKind: cfg.NodeKind, AuditUsers: cfg.AuditUsers,
		CoverDir: cfg.CoverDir,
	})
	if err != nil {
		return nil, err // not a non-nil interface holding a nil *Cluster
	}
	return c, nil
}

var _ provider.Accounting = (*Cluster)(nil)

// Usage is a control-plane component's processor time and peak memory.
func (c *Cluster) Usage(comp provider.Component) (time.Duration, uint64, error) {
	p, err := c.proc(comp)
	if err != nil {
		return 0, 0, err
	}
	return p.CPU(), p.PeakMemory(), nil
}

// ResetPeak starts a component's peak memory over.
func (c *Cluster) ResetPeak(comp provider.Component) error {
	p, err := c.proc(comp)
	if err != nil {
		return err
	}
	return p.ResetPeakMemory()
}

func (c *Cluster) proc(comp provider.Component) (*process.Process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.procs[comp]
	if p == nil || !p.Running() {
		return nil, fmt.Errorf("%s does not run", comp)
	}
	return p, nil
}

// Provider is "local".
func (c *Cluster) Provider() string { return "local" }

// Metrics reads a component's /metrics: the controller-manager and the
// scheduler serve it without credentials (--authorization-always-allow-paths),
// the apiserver to the admin.
func (c *Cluster) Metrics(ctx context.Context, comp provider.Component) (string, error) {
	if comp == provider.Etcd || !provider.Known(comp) {
		return "", fmt.Errorf("reading %s's metrics: %w", comp, provider.ErrUnsupported)
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/metrics", c.ports[comp])
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	client := c.healthClient(comp == provider.APIServer)
	client.Timeout = 10 * time.Second
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("read %s's metrics: %w", comp, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("read %s's metrics: %w", comp, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("read %s's metrics: %s: %.200s", comp, resp.Status, body)
	}
	return string(body), nil
}

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
	if err := c.StartNodeGroup(ctx, g); err != nil {
		return err
	}
	if c.cfg.NodeKind == NodesKubelet {
		return nil // a kubelet syncs every pod bound to it when it starts
	}
	return c.nudgePods(ctx, g)
}

// nudgePods touches every unfinished pod bound to group g's nodes: a pod the
// scheduler bound while the group's kwok was stopped (the node not yet
// NotReady) can be left Pending for good by the kwok that starts again
// (seen: a replacement bound 0.2s before the return stayed Pending 5 min, and
// a correct controller was failed for the Job never finishing). kwok
// evaluates its stages on every change of a pod, so an annotation is enough.
func (c *Cluster) nudgePods(ctx context.Context, g int) error {
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{"jobconform.io/node-returned":%q}}}`, time.Now().UTC().Format(time.RFC3339Nano)))
	for _, node := range c.NodesOf(g) {
		list, err := c.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
		if err != nil {
			return fmt.Errorf("list the pods of returned node %s: %w", node, err)
		}
		for _, p := range list.Items {
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			_, err := c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("touch pod %s/%s of returned node %s: %w", p.Namespace, p.Name, node, err)
			}
		}
	}
	return nil
}

// Pods: kubelet nodes pull nothing and have no pod network, so their pods run
// the locally imported busybox on the host's (loopback-only) network; kwok
// nodes read only the annotations.
func (c *Cluster) Pods() pods.Target {
	if c.cfg.NodeKind == NodesKubelet {
		return pods.Target{Image: kubeletnode.BusyboxImage, PullPolicy: corev1.PullNever, HostNetwork: true, PauseImage: kubeletnode.PauseImage}
	}
	return pods.Target{}
}
