package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/e2e-framework/klient"
	"sigs.k8s.io/e2e-framework/support"
	"sigs.k8s.io/yaml"

	"github.com/jobconform/jobconform/internal/k8sbin"
)

// Provider adapts the local provider to e2e-framework's cluster-provider
// interface, so an e2e-framework test environment can create a local cluster
// with envfuncs.CreateClusterWithOpts(local.NewProvider(), name) and stop or
// start its nodes through the lifecycle interface. Provider is a builder until
// Create; afterwards Cluster gives the full control surface (component
// restarts, version swaps) that the interface has no words for.
type Provider struct {
	cfg     Config
	cluster *Cluster
}

var _ support.E2EClusterProviderWithLifeCycle = (*Provider)(nil)

// NewProvider returns a Provider with the default configuration.
func NewProvider() *Provider { return &Provider{} }

// WithName names the cluster.
func (p *Provider) WithName(name string) support.E2EClusterProvider { p.cfg.Name = name; return p }

// WithVersion selects the Kubernetes release (vX.Y.Z).
func (p *Provider) WithVersion(v string) support.E2EClusterProvider { p.cfg.Version = v; return p }

// WithPath sets the binary cache directory (the "tool path" of other providers).
func (p *Provider) WithPath(path string) support.E2EClusterProvider {
	p.cfg.Builder = &k8sbin.Builder{CacheDir: path, Progress: p.cfg.Progress}
	return p
}

// WithOpts applies e2e-framework cluster options.
func (p *Provider) WithOpts(opts ...support.ClusterOpts) support.E2EClusterProvider {
	for _, o := range opts {
		o(p)
	}
	return p
}

// WithConfig replaces the whole configuration (keeps the name).
func (p *Provider) WithConfig(cfg Config) *Provider {
	name := p.cfg.Name
	p.cfg = cfg
	if p.cfg.Name == "" {
		p.cfg.Name = name
	}
	return p
}

// SetDefaults leaves defaulting to Create, where errors can be reported.
func (p *Provider) SetDefaults() support.E2EClusterProvider { return p }

// Create starts the cluster and returns its kubeconfig path. args are not used.
func (p *Provider) Create(ctx context.Context, _ ...string) (string, error) {
	if p.cluster != nil {
		return "", fmt.Errorf("local cluster %q already created", p.cfg.Name)
	}
	c, err := Start(ctx, p.cfg)
	if err != nil {
		return "", err
	}
	p.cluster = c
	return c.Kubeconfig(), nil
}

// FileConfig is the YAML accepted by CreateWithConfig.
type FileConfig struct {
	Version       string                 `json:"version,omitempty"`
	NodeGroups    int                    `json:"nodeGroups,omitempty"`
	NodesPerGroup int                    `json:"nodesPerGroup,omitempty"`
	FeatureGates  map[string]bool        `json:"featureGates,omitempty"`
	ExtraArgs     map[Component][]string `json:"extraArgs,omitempty"`
}

// CreateWithConfig starts a cluster described by a YAML file (FileConfig).
func (p *Provider) CreateWithConfig(ctx context.Context, configFile string) (string, error) {
	data, err := os.ReadFile(configFile)
	if err != nil {
		return "", fmt.Errorf("local cluster config: %w", err)
	}
	var fc FileConfig
	if err := yaml.UnmarshalStrict(data, &fc); err != nil {
		return "", fmt.Errorf("local cluster config %s: %w (fields: version, nodeGroups, nodesPerGroup, featureGates, extraArgs)", configFile, err)
	}
	if fc.Version != "" {
		p.cfg.Version = fc.Version
	}
	p.cfg.NodeGroups, p.cfg.NodesPerGroup = fc.NodeGroups, fc.NodesPerGroup
	p.cfg.FeatureGates, p.cfg.ExtraArgs = fc.FeatureGates, fc.ExtraArgs
	return p.Create(ctx)
}

// Cluster is the running cluster (nil before Create).
func (p *Provider) Cluster() *Cluster { return p.cluster }

// GetKubeconfig is the admin kubeconfig path ("" before Create).
func (p *Provider) GetKubeconfig() string {
	if p.cluster == nil {
		return ""
	}
	return p.cluster.Kubeconfig()
}

// GenerateKubeconfig returns the admin kubeconfig path; the file is written at Create.
func (p *Provider) GenerateKubeconfig(...string) (string, error) {
	if p.cluster == nil {
		return "", errors.New("local cluster not created yet")
	}
	return p.cluster.Kubeconfig(), nil
}

// GetKubectlContext is the kubeconfig context name.
func (p *Provider) GetKubectlContext() string { return p.cfg.Name }

// ExportLogs copies the component logs into dest.
func (p *Provider) ExportLogs(_ context.Context, dest string) error {
	if p.cluster == nil {
		return errors.New("local cluster not created yet")
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(p.cluster.LogDir(), "*.log"))
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := copyFile(f, filepath.Join(dest, filepath.Base(f))); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Destroy stops the cluster.
func (p *Provider) Destroy(context.Context) error {
	if p.cluster == nil {
		return nil
	}
	return p.cluster.Stop()
}

// WaitForControlPlane waits until every node is Ready and schedulable; Create
// has already waited for the components.
func (p *Provider) WaitForControlPlane(ctx context.Context, _ klient.Client) error {
	if p.cluster == nil {
		return errors.New("local cluster not created yet")
	}
	return p.cluster.WaitNodesReady(ctx, p.cluster.cfg.StartTimeout)
}

// KubernetesRestConfig is the admin client configuration (nil before Create).
func (p *Provider) KubernetesRestConfig() *rest.Config {
	if p.cluster == nil {
		return nil
	}
	return p.cluster.RESTConfig()
}

// AddNode is not supported: node groups are fixed at Create (Config.NodeGroups).
func (p *Provider) AddNode(context.Context, *support.Node, ...string) error {
	return errors.New("local provider: nodes are fixed when the cluster is created; set NodeGroups/NodesPerGroup")
}

// RemoveNode is not supported; StopNode loses a node's whole group instead.
func (p *Provider) RemoveNode(context.Context, *support.Node, ...string) error {
	return errors.New("local provider: nodes cannot be removed; StopNode simulates losing the node's group")
}

// StopNode loses the node: it stops the kwok process of the node's group (all
// nodes of that group are lost together).
func (p *Provider) StopNode(_ context.Context, n *support.Node, _ ...string) error {
	g, err := p.groupOf(n)
	if err != nil {
		return err
	}
	return p.cluster.StopNodeGroup(g)
}

// StartNode brings back the node's group.
func (p *Provider) StartNode(ctx context.Context, n *support.Node, _ ...string) error {
	g, err := p.groupOf(n)
	if err != nil {
		return err
	}
	return p.cluster.StartNodeGroup(ctx, g)
}

// ListNode lists the simulated nodes, with State "running" or "stopped".
func (p *Provider) ListNode(context.Context, ...string) ([]support.Node, error) {
	if p.cluster == nil {
		return nil, errors.New("local cluster not created yet")
	}
	var out []support.Node
	for g := 0; g < p.cluster.NodeGroups(); g++ {
		state := "stopped"
		if p.cluster.NodeGroupRunning(g) {
			state = "running"
		}
		for _, name := range p.cluster.NodesOf(g) {
			out = append(out, support.Node{Name: name, Role: "worker", Cluster: p.cfg.Name, State: state, IP: net.ParseIP("127.0.0.1")})
		}
	}
	return out, nil
}

func (p *Provider) groupOf(n *support.Node) (int, error) {
	if p.cluster == nil {
		return 0, errors.New("local cluster not created yet")
	}
	if n == nil {
		return 0, errors.New("no node given")
	}
	g := p.cluster.NodeGroupOf(n.Name)
	if g < 0 {
		return 0, fmt.Errorf("no node %q in local cluster %q", n.Name, p.cfg.Name)
	}
	return g, nil
}
