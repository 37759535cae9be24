// Package existing is the provider for a cluster someone else runs: it
// connects through a kubeconfig, deploys nothing, and controls nothing — every
// control says so, with ErrUnsupported, instead of pretending.
package existing

import (
	"context"
	"errors"
	"fmt"
	"os"

	"k8s.io/client-go/kubernetes"

	"github.com/jobconform/jobconform/internal/cluster/internal/provider"
	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/pods"
)

// Cluster is a connection to a running cluster.
type Cluster struct {
	kubeconfig string
	client     kubernetes.Interface
	version    string
	logDir     string
	pods       pods.Target
}

var _ provider.Cluster = (*Cluster)(nil)

// Create connects to the cluster of cfg.Kubeconfig and asks its release.
func Create(ctx context.Context, cfg provider.Config) (provider.Cluster, error) {
	if cfg.Kubeconfig == "" {
		return nil, errors.New("existing cluster: no kubeconfig given (give --kubeconfig)")
	}
	if _, err := os.Stat(cfg.Kubeconfig); err != nil {
		return nil, fmt.Errorf("existing cluster: kubeconfig %s: %w", cfg.Kubeconfig, err)
	}
	rc, err := kube.LoadConfig(cfg.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("existing cluster: kubeconfig %s: %w", cfg.Kubeconfig, err)
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	info, err := client.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("existing cluster at %s unreachable: check the kubeconfig and that the cluster runs: %w", rc.Host, err)
	}
	c := &Cluster{kubeconfig: cfg.Kubeconfig, client: client, version: info.GitVersion, logDir: cfg.LogDir, pods: cfg.Pods}
	if c.pods.PauseImage == "" {
		c.pods.PauseImage = options.DefaultPauseImage
	}
	if cfg.Version != "" && cfg.Version != c.version {
		return nil, fmt.Errorf("existing cluster at %s runs %s, not the %s asked for", rc.Host, c.version, cfg.Version)
	}
	if c.logDir == "" {
		name := cfg.Name
		if name == "" {
			name = "existing"
		}
		if c.logDir, err = provider.DefaultLogDir(cfg.Artifacts, name); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Provider is "existing".
func (c *Cluster) Provider() string { return "existing" }

// Kubeconfig is the kubeconfig the cluster was reached with.
func (c *Cluster) Kubeconfig() string { return c.kubeconfig }

// Client is a clientset with the kubeconfig's identity.
func (c *Cluster) Client() kubernetes.Interface { return c.client }

// Version is the apiserver's gitVersion.
func (c *Cluster) Version() string { return c.version }

// LogDir is where the harness keeps its logs for this cluster.
func (c *Cluster) LogDir() string { return c.logDir }

func unsupported(what string) error {
	return fmt.Errorf("existing cluster: %s is %w: the harness does not control a cluster it did not create (use the local provider)", what, provider.ErrUnsupported)
}

// UserKubeconfig is not supported: the harness holds no CA key.
func (c *Cluster) UserKubeconfig(string, ...string) (string, error) {
	return "", unsupported("a least-privilege kubeconfig")
}

// RestartComponent is not supported.
func (c *Cluster) RestartComponent(_ context.Context, comp provider.Component, _ provider.Restart) error {
	return unsupported("restarting " + string(comp))
}

// LoseNode is not supported.
func (c *Cluster) LoseNode(context.Context, string) error { return unsupported("losing a node") }

// Metrics is not supported: the control plane is not the harness's to reach.
func (c *Cluster) Metrics(_ context.Context, comp provider.Component) (string, error) {
	return "", unsupported("reading " + string(comp) + "'s metrics")
}

// ReturnNode is not supported.
func (c *Cluster) ReturnNode(context.Context, string) error { return unsupported("returning a node") }

// Stop does nothing: the cluster is not the harness's.
func (c *Cluster) Stop() error { return nil }

// Pods: the cluster's kubelets pull the busybox image themselves, or the
// image the user named (--pod-image), and the pause image a pod-failure
// runs (--pause-image).
func (c *Cluster) Pods() pods.Target { return c.pods }
