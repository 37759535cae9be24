// Package kind is the provider for users with Docker: real kubelets and
// busybox containers in kind node containers, through kind's Go library. It
// cannot run where there is no Docker engine or no node image (this project's
// CI machines); Available says so plainly, and tests skip on it.
package kind

import (
	"github.com/jobconform/jobconform/internal/pods"

	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"

	"github.com/jobconform/jobconform/internal/cluster/internal/provider"
	"github.com/jobconform/jobconform/internal/kube"
)

// Config describes a kind cluster.
type Config struct {
	Name    string // default "jobconform"
	Version string // Kubernetes release; the node image is kindest/node:<Version>
	// Image overrides the node image (a digest-pinned one, or one you built).
	Image   string
	Workers int // default 3
	// FeatureGates go to every component through kind's config.
	FeatureGates map[string]bool
	// NodeLoss is how a node is lost: "stop" (default; the node container
	// stops) or "pause" (it freezes in place).
	NodeLoss string
	// LogDir holds the harness's logs beside this cluster (default: provider.DefaultLogDir).
	LogDir string
	// Artifacts is the run's artifacts directory ("": none).
	Artifacts string
}

func (c *Config) setDefaults() error {
	var err error
	if c.Name, c.Version, err = provider.NameAndVersion(c.Name, c.Version); err != nil {
		return err
	}
	v := c.Version
	if c.Image == "" {
		c.Image = "kindest/node:" + v
	}
	if c.Workers == 0 {
		c.Workers = 3
	}
	if c.NodeLoss == "" {
		c.NodeLoss = "stop"
	}
	if _, err := NodeLossCommand("", c.NodeLoss); err != nil {
		return err
	}
	if c.LogDir == "" {
		if c.LogDir, err = provider.DefaultLogDir(c.Artifacts, c.Name); err != nil {
			return err
		}
	}
	return nil
}

// ClusterConfig renders kind's v1alpha4 configuration: one control plane and
// the workers, all on the node image, with the feature gates.
func (c Config) ClusterConfig() (*v1alpha4.Cluster, error) {
	if err := c.setDefaults(); err != nil {
		return nil, err
	}
	cfg := &v1alpha4.Cluster{
		TypeMeta:     v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"},
		Name:         c.Name,
		FeatureGates: c.FeatureGates,
		Nodes:        []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole, Image: c.Image}},
	}
	for i := 0; i < c.Workers; i++ {
		cfg.Nodes = append(cfg.Nodes, v1alpha4.Node{Role: v1alpha4.WorkerRole, Image: c.Image})
	}
	return cfg, nil
}

// Available tells why a kind cluster cannot be created here (nil: it can):
// no docker command, no reachable Docker engine, or no node image locally
// and no registry to pull it from.
func Available(ctx context.Context, image string) error {
	if _, err := exec.LookPath("docker"); err != nil {
		return fmt.Errorf("kind needs Docker: no docker command on PATH")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		return fmt.Errorf("kind needs a running Docker engine: %s", firstLine(out, err))
	}
	if image != "" {
		if out, err := exec.CommandContext(ctx, "docker", "image", "inspect", image).CombinedOutput(); err != nil {
			return fmt.Errorf("node image %s is not present (docker pull it first): %s", image, firstLine(out, err))
		}
	}
	return nil
}

func firstLine(out []byte, err error) string {
	if line, _, _ := bytes.Cut(bytes.TrimSpace(out), []byte("\n")); len(line) > 0 {
		return string(line)
	}
	return err.Error()
}

// Cluster is a running kind cluster.
type Cluster struct {
	cfg        Config
	provider   *cluster.Provider
	kubeconfig string
	client     kubernetes.Interface
}

// Start creates the cluster and waits until its nodes are Ready.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	kc, err := cfg.ClusterConfig()
	if err != nil {
		return nil, err
	}
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	if err := Available(ctx, cfg.Image); err != nil {
		return nil, err
	}
	p := cluster.NewProvider(cluster.ProviderWithDocker())
	if err := p.Create(cfg.Name, cluster.CreateWithV1Alpha4Config(kc), cluster.CreateWithNodeImage(cfg.Image),
		cluster.CreateWithWaitForReady(5*time.Minute), cluster.CreateWithDisplayUsage(false), cluster.CreateWithDisplaySalutation(false)); err != nil {
		return nil, fmt.Errorf("kind create %s: %w", cfg.Name, err)
	}
	c := &Cluster{cfg: cfg, provider: p}
	raw, err := p.KubeConfig(cfg.Name, false)
	if err != nil {
		_ = c.Stop()
		return nil, err
	}
	f, err := os.CreateTemp("", "jobconform-kind-*.kubeconfig")
	if err != nil {
		_ = c.Stop()
		return nil, err
	}
	_, _ = f.WriteString(raw)
	f.Close()
	c.kubeconfig = f.Name()
	rc, err := kube.LoadConfig(c.kubeconfig)
	if err != nil {
		_ = c.Stop()
		return nil, err
	}
	if c.client, err = kubernetes.NewForConfig(rc); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

// Kubeconfig is the path of the cluster's admin kubeconfig.
func (c *Cluster) Kubeconfig() string { return c.kubeconfig }

// Client is an admin clientset.
func (c *Cluster) Client() kubernetes.Interface { return c.client }

// Stop deletes the cluster and its kubeconfig file.
func (c *Cluster) Stop() error {
	if c.kubeconfig != "" {
		os.Remove(c.kubeconfig)
	}
	return c.provider.Delete(c.cfg.Name, "")
}

// NodeLossCommand is the docker command that loses a node: "stop" ends its
// kubelet and containers (heartbeats stop), "pause" freezes them in place.
func NodeLossCommand(node, how string) ([]string, error) {
	switch how {
	case "stop", "pause":
		return []string{"docker", how, node}, nil
	default:
		return nil, fmt.Errorf("node loss %q: use stop or pause", how)
	}
}

// NodeReturnCommand undoes NodeLossCommand.
func NodeReturnCommand(node, how string) ([]string, error) {
	switch how {
	case "stop":
		return []string{"docker", "start", node}, nil
	case "pause":
		return []string{"docker", "unpause", node}, nil
	default:
		return nil, fmt.Errorf("node return %q: use stop or pause", how)
	}
}

// Metrics is not supported: kind's control-plane components serve their
// metrics on the node container's loopback address only.
func (c *Cluster) Metrics(_ context.Context, comp provider.Component) (string, error) {
	return "", fmt.Errorf("reading %s's metrics on kind (it serves them inside the node container only): %w", comp, provider.ErrUnsupported)
}

// LoseNode stops (or pauses) the node's container.
func (c *Cluster) LoseNode(ctx context.Context, node string) error {
	return c.run(ctx, NodeLossCommand, node, c.cfg.NodeLoss)
}

// ReturnNode starts (or unpauses) the node's container and waits until the
// kubelet has registered the node again and reports it Ready.
func (c *Cluster) ReturnNode(ctx context.Context, node string) error {
	if err := c.run(ctx, NodeReturnCommand, node, c.cfg.NodeLoss); err != nil {
		return err
	}
	return kube.WaitNodeReady(ctx, c.client, node, 3*time.Minute)
}

func (c *Cluster) run(ctx context.Context, cmdFor func(string, string) ([]string, error), node, how string) error {
	argv, err := cmdFor(node, how)
	if err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, out)
	}
	return nil
}

var _ provider.Cluster = (*Cluster)(nil)

// Create starts a kind cluster as cfg describes (cfg.Nodes workers).
func Create(ctx context.Context, cfg provider.Config) (provider.Cluster, error) {
	if len(cfg.ExtraArgs) > 0 {
		return nil, fmt.Errorf("kind: extra component flags are %w (kind sets them through kubeadm patches, which this harness does not write)", provider.ErrUnsupported)
	}
	c, err := Start(ctx, Config{Name: cfg.Name, Version: cfg.Version, Workers: cfg.Nodes, FeatureGates: cfg.FeatureGates, LogDir: cfg.LogDir, Artifacts: cfg.Artifacts})
	if err != nil {
		return nil, err // not a non-nil interface holding a nil *Cluster
	}
	return c, nil
}

// Provider is "kind".
func (c *Cluster) Provider() string { return "kind" }

// Version is the release of the node image.
func (c *Cluster) Version() string { return c.cfg.Version }

// LogDir is where the harness keeps its logs for this cluster.
func (c *Cluster) LogDir() string { return c.cfg.LogDir }

// UserKubeconfig is not supported: the cluster's CA key stays in the node
// container. Controllers run with the admin kubeconfig on kind.
func (c *Cluster) UserKubeconfig(string, ...string) (string, error) {
	return "", fmt.Errorf("kind: a least-privilege kubeconfig is %w (the CA key is inside the node container)", provider.ErrUnsupported)
}

// RestartComponent is not supported: the control plane runs as static pods
// whose manifests this harness does not rewrite.
func (c *Cluster) RestartComponent(_ context.Context, comp provider.Component, _ provider.Restart) error {
	return fmt.Errorf("kind: restarting %s is %w (its static pod manifest would have to change on the node; use the local provider)", comp, provider.ErrUnsupported)
}

// Pods: the cluster's kubelets pull the busybox image themselves.
func (c *Cluster) Pods() pods.Target { return pods.Target{} }
