package local

import (
	"fmt"
	"io"
	"time"

	"github.com/jobconform/jobconform/internal/cluster/internal/provider"
	"github.com/jobconform/jobconform/internal/k8sbin"
	"github.com/jobconform/jobconform/internal/options"
)

// A local cluster's configuration and its defaults.

// Config describes a local cluster. The zero value is a valid default.
type Config struct {
	// Name labels the cluster in logs and kubeconfig; default "jobconform".
	Name string
	// Version is the Kubernetes release; default release.Default.
	Version string
	// NodeGroups is the number of kwok processes (each one loses or keeps its
	// nodes together); NodesPerGroup the nodes each owns. Defaults 3 and 1.
	NodeGroups    int
	NodesPerGroup int
	// NodeLeaseSeconds is how long a kwok node's Lease is valid (kwok renews
	// it every quarter of that); 0 is a kubelet's 40 s. When set, the node
	// lifecycle controller's grace period is 10 s longer (the defaults' 40
	// and 50 s), so a node is lost only once its lease has lapsed.
	NodeLeaseSeconds int
	// FeatureGates are passed to the apiserver, controller-manager and scheduler.
	FeatureGates map[string]bool
	// ExtraArgs are appended to a component's flags (later flags win).
	ExtraArgs map[Component][]string
	// LogDir keeps component logs after the cluster is gone; default
	// Artifacts/clusters/<name>-<time>, else <cache dir>/logs/<name>-<time>.
	LogDir string
	// Artifacts is the run's artifacts directory ("": none).
	Artifacts string
	// Progress receives a line per start-up step; nil discards.
	Progress io.Writer
	// Builder provides binaries; nil uses the default cache.
	Builder *k8sbin.Builder
	// StartTimeout bounds each wait for a component to become ready; default
	// 3 minutes. A component that exits fails the wait at once; a slow one is
	// waited for: four drill apiservers restarting together on two loaded
	// cores took 61s to be ready, and over 90s in CI.
	StartTimeout time.Duration
	// KwokStages make kwok's pods behave as a kubelet running them would
	// (the caller's pod model: internal/pods renders them).
	KwokStages []byte
	// NodeKind is what plays the nodes: NodesKwok (default) or NodesKubelet,
	// real kubelets on containerd (one node per group).
	NodeKind string
	// AuditUsers, when set, are the users whose requests the apiserver logs
	// (Metadata level, JSON lines) to AuditLog: which client made how many
	// requests (internal/apiaudit).
	AuditUsers []string
	// CoverDir, when set, runs the controller-manager of Version built with
	// coverage of upstream's Job controller, writing its counters here
	// (GOCOVERDIR); a restart into another release runs that one's plain
	// binary.
	CoverDir string
}

// The kinds of node a local cluster can have.
const (
	NodesKwok    = options.NodesKwok
	NodesKubelet = options.NodesKubelet
)

func (c *Config) setDefaults() error {
	var err error
	if c.Name, c.Version, err = provider.NameAndVersion(c.Name, c.Version); err != nil {
		return err
	}
	if c.NodeGroups == 0 {
		c.NodeGroups = 3
	}
	if c.NodesPerGroup == 0 {
		c.NodesPerGroup = 1
	}
	switch c.NodeKind {
	case "":
		c.NodeKind = NodesKwok
	case NodesKwok:
	case NodesKubelet:
		if c.NodesPerGroup != 1 {
			return fmt.Errorf("a kubelet is one node: NodesPerGroup must be 1 with kubelet nodes (got %d)", c.NodesPerGroup)
		}
	default:
		return fmt.Errorf("unknown node kind %q: use %q or %q", c.NodeKind, NodesKwok, NodesKubelet)
	}
	if c.NodeLeaseSeconds < 0 || (c.NodeLeaseSeconds > 0 && c.NodeKind != NodesKwok) {
		return fmt.Errorf("NodeLeaseSeconds %d: a positive number of seconds, and only for kwok nodes (a kubelet keeps its own lease)", c.NodeLeaseSeconds)
	}
	if c.NodeGroups < 1 || c.NodesPerGroup < 1 {
		return fmt.Errorf("a local cluster needs at least one node group of at least one node (got %d groups of %d)", c.NodeGroups, c.NodesPerGroup)
	}
	for comp := range c.ExtraArgs {
		if !provider.Known(comp) {
			return fmt.Errorf("ExtraArgs for unknown component %q: use one of %v", comp, Components)
		}
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if c.Builder == nil {
		c.Builder = &k8sbin.Builder{Progress: c.Progress}
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 3 * time.Minute
	}
	if c.LogDir == "" {
		if c.LogDir, err = provider.DefaultLogDir(c.Artifacts, c.Name); err != nil {
			return err
		}
	}
	return nil
}
