package local

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/jobconform/jobconform/internal/process"
)

// kwokConfig makes kwok keep its nodes Ready and their leases fresh, the way a
// kubelet does; both stop the moment the kwok process stops (node loss).
//
//go:embed stages/kwok.yaml
var kwokConfig []byte

func (c *Cluster) kwokConfigPath() string { return filepath.Join(c.stateDir, "kwok.yaml") }

// defaultLease is kwokConfig's node lease line, a kubelet's 40 s.
var defaultLease = []byte("nodeLeaseDurationSeconds: 40\n")

func (c *Cluster) writeKwokConfig() error {
	var buf bytes.Buffer
	conf := kwokConfig
	if c.cfg.NodeLeaseSeconds > 0 {
		if bytes.Count(conf, defaultLease) != 1 {
			return fmt.Errorf("stages/kwok.yaml: no single %q line to set the lease in", bytes.TrimSpace(defaultLease))
		}
		conf = bytes.Replace(conf, defaultLease, fmt.Appendf(nil, "nodeLeaseDurationSeconds: %d\n", c.cfg.NodeLeaseSeconds), 1)
	}
	buf.Write(conf)
	buf.WriteString("\n---\n")
	buf.Write(c.cfg.KwokStages)
	return os.WriteFile(c.kwokConfigPath(), buf.Bytes(), 0o644)
}

// createNodes registers every node with the capacity a scheduler needs; the
// owning kwok process then reports it Ready.
func (c *Cluster) createNodes(ctx context.Context) error {
	for g := 0; g < c.cfg.NodeGroups; g++ {
		for _, name := range c.NodesOf(g) {
			if err := c.createNode(ctx, g, name); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *Cluster) createNode(ctx context.Context, g int, name string) error {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("32"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("250"),
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				NodeGroupLabel:           groupName(g),
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
	_, err := c.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create node %s: %w", name, err)
	}
	return nil
}

// RecreateNodes registers again any node of group g that was deleted (for
// example by a node-loss scenario that deletes the Node object). A kubelet
// registers its Node only when it starts: a running one whose Node is gone is
// restarted, as an administrator would; a stopped one registers when
// StartNodeGroup starts it.
func (c *Cluster) RecreateNodes(ctx context.Context, g int) error {
	if c.cfg.NodeKind == NodesKubelet {
		n, err := c.kubelet(g)
		if err != nil || !n.KubeletRunning() {
			return err
		}
		_, err = c.client.CoreV1().Nodes().Get(ctx, KubeletNodeName(g), metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return err
		}
		if err := n.StopKubelet(); err != nil {
			return err
		}
		return c.StartNodeGroup(ctx, g)
	}
	for _, name := range c.NodesOf(g) {
		if err := c.createNode(ctx, g, name); err != nil {
			return err
		}
	}
	return nil
}

// StopNodeGroup stops the kwok process (or the kubelet) of group g: its nodes
// stop renewing their leases and its pods freeze as on a lost node — on a
// kubelet node the containers go on running, as behind a partition.
func (c *Cluster) StopNodeGroup(g int) error {
	if c.cfg.NodeKind == NodesKubelet {
		n, err := c.kubelet(g)
		if err != nil {
			return err
		}
		return n.StopKubelet()
	}
	p, err := c.group(g)
	if err != nil {
		return err
	}
	return p.Stop(5 * time.Second)
}

// StartNodeGroup starts (or restarts after StopNodeGroup) the kwok process of
// group g and waits until its nodes report Ready.
func (c *Cluster) StartNodeGroup(ctx context.Context, g int) error {
	if c.cfg.NodeKind == NodesKubelet {
		n, err := c.kubelet(g)
		if err != nil {
			return err
		}
		// The kubelet registers its Node again if it was deleted.
		if err := n.StartKubelet(ctx); err != nil {
			return err
		}
		return c.waitNodes(ctx, c.NodesOf(g), c.cfg.StartTimeout, false, nil)
	}
	p, err := c.group(g)
	if err != nil {
		return err
	}
	p.SetCommand(c.kwokPath,
		"--kubeconfig="+filepath.Join(c.stateDir, "kwok.kubeconfig"),
		"--config="+c.kwokConfigPath(),
		"--manage-all-nodes=false",
		"--manage-nodes-with-label-selector="+NodeGroupLabel+"="+groupName(g),
		// Pod and node IPs are status data only; nothing dials them.
		fmt.Sprintf("--cidr=10.244.%d.0/24", g),
		"--node-ip=127.0.0.1",
	)
	for attempt := 0; ; attempt++ {
		// A returning kubelet renews its own Lease at once. Each kwok process has a
		// fresh identity and would wait up to 40s for the dead one's Lease to
		// expire, so the Leases of the (stopped) previous process go first.
		for _, name := range c.NodesOf(g) {
			err := c.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("node group %d: clear lease %s: %w", g, name, err)
			}
		}
		started := time.Now()
		if err := p.Start(); err != nil {
			return err
		}
		err := c.waitLeases(ctx, c.NodesOf(g), started, p)
		if err == nil {
			err = c.waitNodes(ctx, c.NodesOf(g), c.cfg.StartTimeout, false, p)
		}
		if err != nil && attempt < kwokStartRaceRetries && !p.Running() && kwokStartRace(p.LastRunLog()) {
			fmt.Fprintf(c.cfg.Progress, "%s died starting, of kwok's race between its first pod and node stage matches (concurrent map writes in easycel; log %s); starting it again\n", p.Name, p.LogPath)
			continue
		}
		return err
	}
}

// kwokStartRaceRetries is how many times a kwok process that died of
// kwokStartRace is started again.
const kwokStartRaceRetries = 2

// kwokStartRace tells whether a kwok run's log ends in the crash kwok v0.8.0
// died of once in a chaos spec's node return, restarting under running pods:
// its pod and node controllers made their first stage matches at once, and a
// Stage's first match fills easycel v0.6.0's CEL type cache, a package map
// without a lock ("fatal error: concurrent map writes" in getTypeValue). It is
// the harness's own node that failed, not the controller under test, so a
// start that dies of it is made again; a crash after a start is not retried.
func kwokStartRace(log string) bool {
	return strings.Contains(log, "fatal error: concurrent map") && strings.Contains(log, "github.com/wzshiming/easycel")
}

// waitLeases waits until the node Leases of names exist again, renewed by the
// process started at started.
func (c *Cluster) waitLeases(ctx context.Context, names []string, started time.Time, owner *process.Process) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, c.cfg.StartTimeout, true, func(ctx context.Context) (bool, error) {
		if !owner.Running() {
			return false, fmt.Errorf("%s", owner.DescribeExit())
		}
		for _, name := range names {
			l, err := c.client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				last = err.Error()
				return false, nil
			}
			// RenewTime has microsecond precision; allow a second of clock rounding.
			if l.Spec.RenewTime == nil || l.Spec.RenewTime.Time.Before(started.Add(-time.Second)) {
				last = "lease " + name + " not renewed yet"
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil && wait.Interrupted(err) {
		return fmt.Errorf("%s did not take its node leases within %s: %s; log %s", owner.Name, c.cfg.StartTimeout, last, owner.LogPath)
	}
	return err
}

func (c *Cluster) group(g int) (*process.Process, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g < 0 || g >= len(c.groups) {
		return nil, fmt.Errorf("no node group %d: the cluster has %d (0..%d)", g, len(c.groups), len(c.groups)-1)
	}
	return c.groups[g], nil
}

// NodeGroupRunning tells whether group g's kwok process (or kubelet) runs.
func (c *Cluster) NodeGroupRunning(g int) bool {
	if c.cfg.NodeKind == NodesKubelet {
		n, err := c.kubelet(g)
		return err == nil && n.KubeletRunning()
	}
	p, err := c.group(g)
	return err == nil && p.Running()
}

// WaitNodesReady waits until every node is Ready and carries none of the
// not-ready/unreachable taints, so the scheduler places pods on all of them.
func (c *Cluster) WaitNodesReady(ctx context.Context, timeout time.Duration) error {
	var names []string
	for g := 0; g < c.cfg.NodeGroups; g++ {
		names = append(names, c.NodesOf(g)...)
	}
	return c.waitNodes(ctx, names, timeout, true, nil)
}

// waitNodes watches the named nodes until each is Ready (and, if schedulable,
// free of the not-ready and unreachable taints), owner exits, or timeout passes.
func (c *Cluster) waitNodes(ctx context.Context, names []string, timeout time.Duration, schedulable bool, owner *process.Process) error {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if owner != nil {
		go func() {
			select {
			case <-owner.Exited():
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	// why holds, per node, what it still lacks ("" once it is ready).
	why := map[string]string{}
	for _, name := range names {
		why[name] = "not seen"
	}
	lw := cache.NewListWatchFromClient(c.client.CoreV1().RESTClient(), "nodes", metav1.NamespaceAll, fields.Everything())
	_, err := watchtools.UntilWithSync(ctx, lw, &corev1.Node{}, nil, func(e watch.Event) (bool, error) {
		node, ok := e.Object.(*corev1.Node)
		if !ok {
			return false, nil
		}
		if _, wanted := why[node.Name]; !wanted {
			return false, nil
		}
		why[node.Name] = nodeLacks(node, e.Type == watch.Deleted, schedulable)
		for _, w := range why {
			if w != "" {
				return false, nil
			}
		}
		return true, nil
	})
	switch {
	case err == nil:
		return nil
	case owner != nil && !owner.Running():
		return fmt.Errorf("%s", owner.DescribeExit())
	case parent.Err() != nil:
		return parent.Err()
	case ctx.Err() != nil:
		var lacking []string
		for _, name := range names {
			if why[name] != "" {
				lacking = append(lacking, fmt.Sprintf("node %s %s", name, why[name]))
			}
		}
		return fmt.Errorf("nodes %v not ready after %s: %s", names, timeout, strings.Join(lacking, "; "))
	}
	return err
}

// nodeLacks says what keeps a node from being ready, "" if nothing.
func nodeLacks(node *corev1.Node, deleted, schedulable bool) string {
	if deleted {
		return "deleted"
	}
	if !nodeReady(node) {
		return "not Ready"
	}
	if schedulable {
		for _, t := range node.Spec.Taints {
			if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
				return "still tainted " + t.Key
			}
		}
	}
	return ""
}

func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}
