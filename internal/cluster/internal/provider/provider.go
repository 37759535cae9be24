// Package provider is the contract between the cluster façade (internal/cluster)
// and the providers behind it (local, kind, existing): what a cluster is,
// how it is described, and the controls chaos and drills use. It imports no
// provider, so every provider can import it.
package provider

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/pods"
	"github.com/jobconform/jobconform/internal/release"
)

// Component names a control-plane component.
type Component string

// The control-plane components.
const (
	Etcd              Component = "etcd"
	APIServer         Component = "kube-apiserver"
	ControllerManager Component = "kube-controller-manager"
	Scheduler         Component = "kube-scheduler"
)

// Components lists the control plane in start order.
var Components = []Component{Etcd, APIServer, ControllerManager, Scheduler}

// Known tells whether comp is a control-plane component.
func Known(comp Component) bool {
	for _, k := range Components {
		if k == comp {
			return true
		}
	}
	return false
}

// Config describes a cluster. Each provider uses what applies to it and
// defaults the rest; the zero value is valid for local and kind.
type Config struct {
	// Name labels the cluster (logs, kubeconfig context, kind's cluster name).
	Name string
	// Version is the Kubernetes release vX.Y.Z (default: the project's default release).
	Version string
	// Nodes is the number of worker nodes (default 3). On the local provider
	// each node is a node group of its own, lost and returned alone, unless
	// NodesPerGroup says otherwise.
	Nodes int
	// NodesPerGroup, on the local provider with kwok nodes, puts that many
	// nodes in each of the Nodes groups (one kwok process each): the scale
	// suite's hundreds of nodes. Default 1.
	NodesPerGroup int
	// NodeLeaseSeconds, on the local provider with kwok nodes, is how long a
	// node's Lease is valid (renewed every quarter of it, as a kubelet does);
	// the node lifecycle controller's grace period follows it. Default 40, a
	// kubelet's. The scale suite's 1,000 nodes renew theirs every minute:
	// every 10 s they took 0.9 of this machine's two cores idle.
	NodeLeaseSeconds int
	// AuditUsers, on the local provider, are the users whose requests the
	// apiserver logs (Accounting.AuditLog): the API requests each
	// controller makes.
	AuditUsers []string
	// FeatureGates go to every control-plane component.
	FeatureGates map[string]bool
	// ExtraArgs are appended to a component's flags (later flags win).
	ExtraArgs map[Component][]string
	// NodeKind chooses what plays the local provider's nodes: "kwok"
	// (default) or "kubelet" (real kubelets on containerd). Other providers
	// have the nodes they have.
	NodeKind string
	// Kubeconfig is the existing provider's cluster.
	Kubeconfig string
	// Pods is what the existing provider's nodes need of pods (an image
	// they can pull, host network): the user says, as the harness cannot know.
	Pods pods.Target
	// LogDir keeps component logs (default: under Artifacts, else the user cache).
	LogDir string
	// Artifacts is the run's artifacts directory (--artifacts): the
	// cluster's logs go to Artifacts/clusters/<name>-<time> unless LogDir
	// says otherwise. Nothing here reads $ARTIFACTS: the flag decides.
	Artifacts string
	// Progress receives a line per start-up step; nil discards.
	Progress io.Writer
	// CoverDir, on the local provider, runs the controller-manager built
	// with coverage of upstream's Job controller (k8sbin.EnsureCovered),
	// its counters written into this directory (issue #69). Restarts into
	// another release run that release's plain binary.
	CoverDir string
}

// Restart says how a component comes back: a crash or a clean stop, and
// what it runs with from then on.
type Restart struct {
	// Crash kills the component (SIGKILL) instead of stopping it.
	Crash bool
	// FeatureGates are set on top of the cluster's (a gate given wins).
	FeatureGates map[string]bool
	// ResetFeatureGates drops the gates earlier restarts set: the cluster's gates again.
	ResetFeatureGates bool
	// Version runs another release's binary (drills); empty keeps the current one.
	Version string
	// EmulatedVersion runs the binary as an older minor (--emulated-version,
	// KEP-4330), e.g. "1.36"; empty keeps the current setting.
	EmulatedVersion string
	// Hold, when set, is called once the component is down and keeps it
	// down until it returns (an error leaves it down).
	Hold func() error
}

// ErrUnsupported is wrapped by every control a provider cannot carry out;
// the error's text says why and what to use instead.
var ErrUnsupported = errors.New("not supported by this provider")

// Cluster is a running cluster.
type Cluster interface {
	// Provider names the provider that made the cluster (local, kind, existing).
	Provider() string
	// Kubeconfig is the path of an admin kubeconfig.
	Kubeconfig() string
	// Client is an admin clientset.
	Client() kubernetes.Interface
	// Version is the Kubernetes release the cluster started with.
	Version() string
	// LogDir is where the cluster's and the harness's logs go.
	LogDir() string
	// UserKubeconfig writes a kubeconfig that authenticates as user (in
	// groups), for running a controller with only the rights RBAC gives it.
	UserKubeconfig(user string, groups ...string) (string, error)
	// RestartComponent stops (or crashes) a control-plane component and
	// starts it again as r says, waiting until it is healthy.
	RestartComponent(ctx context.Context, comp Component, r Restart) error
	// LoseNode makes node vanish as a machine that loses power does: its
	// kubelet stops, heartbeats stop, its pods stay as they are.
	LoseNode(ctx context.Context, node string) error
	// ReturnNode brings node back (registering it again if its Node object
	// was deleted) and waits until it is Ready.
	ReturnNode(ctx context.Context, node string) error
	// Metrics reads a control-plane component's /metrics (Prometheus text).
	Metrics(ctx context.Context, comp Component) (string, error)
	// Pods says how pods must be rendered to run on the cluster's nodes.
	Pods() pods.Target
	// Stop tears down whatever the provider started; idempotent.
	Stop() error
}

// Accounting is what a provider that runs the control plane as processes on
// this machine can tell of them (the local provider does; the others run
// theirs elsewhere): the scale suite's side-by-side figures.
type Accounting interface {
	// Usage is a component's processor time so far, and the most memory it
	// held resident since it started or since ResetPeak.
	Usage(comp Component) (cpu time.Duration, peak uint64, err error)
	// ResetPeak starts a component's peak memory over.
	ResetPeak(comp Component) error
	// CPU is the processor time of every process of the cluster so far, by
	// component (kwok's node groups together).
	CPU() map[string]time.Duration
	// AuditLog is the apiserver's audit log of Config.AuditUsers (JSON
	// lines; internal/apiaudit reads it); "" when none were given.
	AuditLog() string
}

// DefaultName names a cluster whose Config has none.
const DefaultName = "jobconform"

// NameAndVersion applies the defaults every provider shares: the cluster's
// name, and the release (default and checks: release.Resolve).
func NameAndVersion(name, version string) (string, string, error) {
	if name == "" {
		name = DefaultName
	}
	v, err := release.Resolve(version)
	return name, v, err
}

// DefaultLogDir is where a cluster named name keeps its logs when its Config
// says nothing: artifacts/clusters/<name>-<time>, else (no artifacts
// directory) <cache dir>/logs/<name>-<time>, keeping the newest 30 there.
func DefaultLogDir(artifacts, name string) (string, error) {
	stamp := time.Now().Format("20060102-150405.000")
	if artifacts != "" {
		return filepath.Join(artifacts, "clusters", name+"-"+stamp), nil
	}
	cache, err := options.CacheDir()
	if err != nil {
		return "", err
	}
	pruneLogs(filepath.Join(cache, "logs"), 30)
	return filepath.Join(cache, "logs", name+"-"+stamp), nil
}

// pruneLogs keeps the newest keep log directories of dir.
func pruneLogs(dir string, keep int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	sort.Slice(entries, func(i, j int) bool {
		ii, _ := entries[i].Info()
		jj, _ := entries[j].Info()
		return ii != nil && jj != nil && ii.ModTime().After(jj.ModTime())
	})
	for i, e := range entries {
		if i >= keep && e.IsDir() {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}
