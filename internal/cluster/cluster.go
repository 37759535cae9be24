// Package cluster is the one way the suites get a cluster: a provider chosen
// by name from a table — local (the embedded default: etcd, apiserver,
// controller-manager and scheduler as processes, kwok nodes), kind (for
// Docker users), existing (any kubeconfig) — behind one Cluster interface
// that also carries the controls chaos and drills need. The providers live
// under internal/; a new one touches one folder and one line of Providers.
package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/e2e-framework/support"

	"github.com/jobconform/jobconform/internal/cluster/internal/existing"
	"github.com/jobconform/jobconform/internal/cluster/internal/kind"
	"github.com/jobconform/jobconform/internal/cluster/internal/local"
	"github.com/jobconform/jobconform/internal/cluster/internal/local/kubeletnode"
	"github.com/jobconform/jobconform/internal/cluster/internal/provider"
	"github.com/jobconform/jobconform/internal/pods"
)

// The contract every provider implements (see internal/provider).
type (
	Cluster   = provider.Cluster
	Config    = provider.Config
	Component = provider.Component
	Restart   = provider.Restart
	// Accounting is implemented by clusters whose control plane runs here (local).
	Accounting = provider.Accounting
)

// The control-plane components.
const (
	Etcd              = provider.Etcd
	APIServer         = provider.APIServer
	ControllerManager = provider.ControllerManager
	Scheduler         = provider.Scheduler
)

// ErrUnsupported is wrapped by a control the provider cannot carry out.
var ErrUnsupported = provider.ErrUnsupported

// ErrCannotRunContainers is wrapped by the error of a cluster with kubelet
// nodes on a machine that cannot run containers (no root, no CAP_SYS_ADMIN,
// read-only cgroups): specs that need them skip, saying so.
var ErrCannotRunContainers = kubeletnode.ErrCannotRun

// KubeletPackages are the Debian packages kubelet nodes need.
const KubeletPackages = kubeletnode.Packages

// What plays the local provider's nodes (Config.NodeKind).
const (
	NodesKwok    = local.NodesKwok
	NodesKubelet = local.NodesKubelet
)

// DefaultProvider is used when none is named.
const DefaultProvider = "local"

// Providers maps a provider's name to how it creates a cluster.
var Providers = map[string]func(context.Context, Config) (Cluster, error){
	"local": func(ctx context.Context, cfg Config) (Cluster, error) {
		return local.Create(ctx, cfg, pods.KwokStages())
	},
	"kind":     kind.Create,
	"existing": existing.Create,
}

// Names lists the providers, sorted.
func Names() []string {
	var out []string
	for n := range Providers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Create brings up (or, for existing, connects to) a cluster of the named
// provider ("" is DefaultProvider).
func Create(ctx context.Context, name string, cfg Config) (Cluster, error) {
	if name == "" {
		name = DefaultProvider
	}
	create, ok := Providers[name]
	if !ok {
		return nil, fmt.Errorf("unknown cluster provider %q: use one of %s", name, strings.Join(Names(), ", "))
	}
	return create(ctx, cfg)
}

// E2EProvider is the local provider as an e2e-framework cluster provider, for
// tests written with sigs.k8s.io/e2e-framework (envfuncs.CreateClusterWithConfig).
func E2EProvider() support.E2EClusterProviderWithLifeCycle {
	return local.NewProvider().WithConfig(local.Config{KwokStages: pods.KwokStages()})
}
