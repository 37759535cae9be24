// Package local is the embedded cluster provider: a real etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler of a chosen Kubernetes version run
// as supervised processes on 127.0.0.1, with kwok controllers playing the
// kubelets of simulated nodes. No Docker, no root. Any component can be stopped,
// restarted with other feature gates or swapped for another version's binary
// while etcd keeps its data; node groups can be lost and brought back.
package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jobconform/jobconform/internal/apiaudit"
	"github.com/jobconform/jobconform/internal/cluster/internal/local/kubeletnode"
	"github.com/jobconform/jobconform/internal/cluster/internal/provider"
	"github.com/jobconform/jobconform/internal/k8sbin"
	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/internal/ports"
	"github.com/jobconform/jobconform/internal/process"
)

// The contract's types, under the names this package's callers know.
type (
	Component = provider.Component
	Restart   = provider.Restart
)

// The control-plane components of a local cluster.
const (
	Etcd              = provider.Etcd
	APIServer         = provider.APIServer
	ControllerManager = provider.ControllerManager
	Scheduler         = provider.Scheduler
)

// Components lists the control plane in start order.
var Components = provider.Components

// NodeGroupLabel marks which kwok process owns a node.
const NodeGroupLabel = "jobconform.io/node-group"

const (
	serviceCIDR      = "10.96.0.0/16"
	serviceClusterIP = "10.96.0.1" // a certificate SAN only: nothing listens or dials there
)

// componentState is what a component runs with now: its binary's version,
// the feature gates that override the cluster's, its emulated version.
type componentState struct {
	bins     *k8sbin.Set
	gates    map[string]bool
	emulated string // --emulated-version, "" for none
}

// Cluster is a running local cluster. All methods are safe for concurrent use.
type Cluster struct {
	cfg      Config
	stateDir string // removed by Stop: certificates, etcd data, kubeconfigs
	kwokPath string
	pki      pki
	env      []string // every component's and kwok's (process.ComponentEnv)
	ports    map[Component]int
	peerPort int

	mu     sync.Mutex
	procs  map[Component]*process.Process
	state  map[Component]*componentState
	groups []*process.Process // kwok, one per node group
	// kubelets are the node groups of a NodesKubelet cluster (nil entries
	// until started); kubeletPath their binary.
	kubelets     []*kubeletnode.Node
	kubeletPath  string
	kubeletPorts []int // two per kubelet: its server and its health endpoint
	// covered is the controller-manager built with coverage (Config.CoverDir), or nil.
	covered *k8sbin.CoverBuild
	claim   *ports.Claim
	stop    sync.Once
	err     error
	phases  []Phase

	kubeconfig string
	rest       *rest.Config
	client     kubernetes.Interface

	// issued are the users' kubeconfigs by file name (UserKubeconfig).
	issuedMu sync.Mutex
	issued   map[string]string
}

// Start brings a cluster up and returns when it is ready: /readyz answers ok,
// the controller-manager and scheduler are healthy, the controllers run (the
// default ServiceAccount exists) and every node is Ready and schedulable.
// On failure it leaves nothing running and says which component failed, with
// the tail of its log.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	if cfg.NodeKind == NodesKubelet {
		// Before minutes of building: a machine that cannot run them says so at once.
		if err := kubeletnode.Check(); err != nil {
			return nil, err
		}
	}
	env, err := process.ComponentEnv()
	if err != nil {
		return nil, err
	}
	bins, err := cfg.Builder.Ensure(ctx, cfg.Version)
	if err != nil {
		return nil, err
	}
	var covered *k8sbin.CoverBuild
	if cfg.CoverDir != "" {
		if covered, err = cfg.Builder.EnsureCovered(ctx, cfg.Version); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(cfg.CoverDir, 0o755); err != nil {
			return nil, fmt.Errorf("coverage directory: %w", err)
		}
	}
	kubeletPath := ""
	if cfg.NodeKind == NodesKubelet {
		if kubeletPath, err = cfg.Builder.EnsureKubelet(ctx, cfg.Version); err != nil {
			return nil, err
		}
	}
	sweepStale()
	kubeletnode.Sweep()
	stateDir, err := os.MkdirTemp("", "jobconform-"+cfg.Name+"-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(stateDir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(stateDir)
		return nil, err
	}
	if err := os.MkdirAll(cfg.LogDir, 0o755); err != nil {
		os.RemoveAll(stateDir)
		return nil, fmt.Errorf("log directory: %w", err)
	}
	c := &Cluster{
		cfg:      cfg,
		stateDir: stateDir,
		kwokPath: bins.Path(k8sbin.Kwok),
		pki:      pki{dir: filepath.Join(stateDir, "pki")},
		env:      env,

		kubeletPath: kubeletPath,
		covered:     covered,
		procs:       map[Component]*process.Process{},
		state:       map[Component]*componentState{},
	}
	for _, comp := range Components {
		c.state[comp] = &componentState{bins: bins}
		c.procs[comp] = process.New(string(comp), filepath.Join(cfg.LogDir, string(comp)+".log"))
		c.procs[comp].SetEnv(env...)
	}
	if covered != nil {
		c.procs[ControllerManager].SetEnv(append(env, "GOCOVERDIR="+cfg.CoverDir)...)
	}
	if err := c.bringUp(ctx); err != nil {
		c.Stop()
		return nil, fmt.Errorf("local cluster %q (Kubernetes %s) did not start: %w\ncomponent logs: %s", cfg.Name, cfg.Version, err, cfg.LogDir)
	}
	return c, nil
}

// Phase is a part of a cluster's start: when it began and ended, counted
// from the start. Phases of the components started together overlap.
type Phase struct {
	Name       string
	Start, End time.Duration
}

// Phases tells where the cluster's start went (make bench prints them).
func (c *Cluster) Phases() []Phase {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Phase(nil), c.phases...)
}

// CPU is the processor time the cluster's running control-plane and kwok
// processes have used so far, by component (kwok groups together; kubelets
// and their containerds are not counted); make bench prints what a start and
// an idle cluster cost, the budget a dozen clusters side by side share.
func (c *Cluster) CPU() map[string]time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]time.Duration{}
	for comp, p := range c.procs {
		out[string(comp)] = p.CPU()
	}
	for _, p := range c.groups {
		out["kwok"] += p.CPU()
	}
	return out
}

func (c *Cluster) bringUp(ctx context.Context) error {
	t0 := time.Now()
	step := func(format string, args ...any) {
		fmt.Fprintf(c.cfg.Progress, "[%5.2fs] %s\n", time.Since(t0).Seconds(), fmt.Sprintf(format, args...))
	}
	// timed runs f as phase name.
	timed := func(name string, f func() error) error {
		start := time.Since(t0)
		err := f()
		c.mu.Lock()
		c.phases = append(c.phases, Phase{Name: name, Start: start, End: time.Since(t0)})
		c.mu.Unlock()
		return err
	}
	err := timed("certificates and kubeconfigs", func() error { return c.prepare() })
	if err != nil {
		return err
	}
	// etcd and the apiserver start together: the apiserver spends its first
	// second loading and registering its APIs, and dials etcd until it answers.
	step("starting etcd %s and kube-apiserver %s", c.state[Etcd].bins.EtcdVersion, c.cfg.Version)
	if err := timed("etcd", func() error {
		if err := c.spawn(Etcd); err != nil {
			return err
		}
		if err := c.spawn(APIServer); err != nil {
			return err
		}
		return c.waitHealthy(ctx, c.procs[Etcd], Etcd)
	}); err != nil {
		return err
	}
	if err := timed("kube-apiserver (to /readyz)", func() error { return c.waitHealthy(ctx, c.procs[APIServer], APIServer) }); err != nil {
		return err
	}
	step("apiserver ready; starting controller-manager, scheduler and %d %s node groups", c.cfg.NodeGroups, c.cfg.NodeKind)
	errs := make(chan error, 2+c.cfg.NodeGroups)
	// The controllers' wait follows the controller-manager at once: it is the
	// longest way to ready, so it waits on nothing else.
	go func() {
		err := timed("kube-controller-manager (to /healthz)", func() error { return c.startComponent(ctx, ControllerManager) })
		if err == nil {
			err = timed("controllers running (default ServiceAccount)", func() error { return c.waitControllersRunning(ctx) })
		}
		errs <- err
	}()
	go func() {
		errs <- timed("kube-scheduler (to /healthz)", func() error { return c.startComponent(ctx, Scheduler) })
	}()
	if c.cfg.NodeKind == NodesKubelet {
		c.kubelets = make([]*kubeletnode.Node, c.cfg.NodeGroups)
		for g := range c.kubelets {
			go func() {
				errs <- timed(fmt.Sprintf("kubelet node %d (to Ready)", g), func() error { return c.startKubeletNode(ctx, g) })
			}()
		}
	} else {
		if err := timed("register kwok Nodes", func() error { return c.createNodes(ctx) }); err != nil {
			return err
		}
		for g := 0; g < c.cfg.NodeGroups; g++ {
			p := process.New(fmt.Sprintf("kwok-%s", groupName(g)), filepath.Join(c.cfg.LogDir, fmt.Sprintf("kwok-%s.log", groupName(g))))
			p.SetEnv(c.env...)
			c.groups = append(c.groups, p)
		}
		for g := range c.groups {
			go func() {
				errs <- timed(fmt.Sprintf("kwok group %d (to leases)", g), func() error { return c.StartNodeGroup(ctx, g) })
			}()
		}
	}
	var all []error
	for i := 0; i < 2+c.cfg.NodeGroups; i++ {
		all = append(all, <-errs)
	}
	if err := errors.Join(all...); err != nil {
		return err
	}
	step("controllers running; waiting for Ready nodes")
	if err := timed("nodes Ready and untainted", func() error { return c.WaitNodesReady(ctx, c.cfg.StartTimeout) }); err != nil {
		return err
	}
	step("cluster ready: kubeconfig %s", c.kubeconfig)
	return nil
}

// prepare writes what the components read: certificates, kubeconfigs, kwok's
// configuration; and reserves the ports.
func (c *Cluster) prepare() error {
	if err := c.pki.generate(); err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	if len(c.cfg.AuditUsers) > 0 {
		policy, err := apiaudit.Policy(c.cfg.AuditUsers)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(c.stateDir, auditPolicyFile), policy, 0o644); err != nil {
			return fmt.Errorf("audit policy: %w", err)
		}
	}
	// Every port of the cluster, kubelets' included, claimed until Stop
	// (package ports): no other cluster or outgoing connection can take one.
	n := 5
	if c.cfg.NodeKind == NodesKubelet {
		n += 2 * c.cfg.NodeGroups
	}
	claim, err := ports.Take(n)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.claim = claim
	c.mu.Unlock()
	p := claim.Ports
	c.ports = map[Component]int{Etcd: p[0], APIServer: p[1], ControllerManager: p[2], Scheduler: p[3]}
	c.peerPort = p[4]
	c.kubeletPorts = p[5:]
	server := fmt.Sprintf("https://127.0.0.1:%d", c.ports[APIServer])
	for _, kc := range []struct{ file, cert, key string }{
		{"admin.kubeconfig", adminCert, adminKey},
		{"kube-controller-manager.kubeconfig", kcmCert, kcmKey},
		{"kube-scheduler.kubeconfig", schedCert, schedKey},
		{"kwok.kubeconfig", kwokCert, kwokKey},
	} {
		if err := writeKubeconfig(filepath.Join(c.stateDir, kc.file), c.cfg.Name, server, c.pki.path(caCert), c.pki.path(kc.cert), c.pki.path(kc.key)); err != nil {
			return err
		}
	}
	c.kubeconfig = filepath.Join(c.stateDir, "admin.kubeconfig")
	if c.rest, err = kube.LoadConfig(c.kubeconfig); err != nil {
		return err
	}
	if c.client, err = kubernetes.NewForConfig(c.rest); err != nil {
		return err
	}
	return c.writeKwokConfig()
}

// Kubeconfig is the path of an admin kubeconfig (system:masters) for the cluster.
func (c *Cluster) Kubeconfig() string { return c.kubeconfig }

// RESTConfig returns a copy of the admin client configuration.
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.rest) }

// Client is an admin clientset.
func (c *Cluster) Client() kubernetes.Interface { return c.client }

// Version is the Kubernetes release the cluster started with.
func (c *Cluster) Version() string { return c.cfg.Version }

// LogDir is where component logs are kept.
func (c *Cluster) LogDir() string { return c.cfg.LogDir }

// ComponentVersion is the Kubernetes release a component runs now.
func (c *Cluster) ComponentVersion(comp Component) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state[comp].bins.Version
}

// Stop ends every process of the cluster and removes its state directory; the
// logs stay in LogDir. It is idempotent and returns the first error.
func (c *Cluster) Stop() error {
	c.stop.Do(func() {
		var errs []error
		stopAll := func(ps []*process.Process) {
			var wg sync.WaitGroup
			var mu sync.Mutex
			for _, p := range ps {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := p.Stop(3 * time.Second); err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
		}
		c.mu.Lock()
		groups := append([]*process.Process(nil), c.groups...)
		procs := c.procs
		kubelets := append([]*kubeletnode.Node(nil), c.kubelets...)
		c.mu.Unlock()
		// Kubelet nodes first, each with its containers, while the apiserver
		// still answers (a kubelet stopping reports to it).
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, n := range kubelets {
			if n == nil {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := n.Stop(); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		// Clients first, then the apiserver, etcd last.
		stopAll(append(groups, procs[ControllerManager], procs[Scheduler]))
		stopAll([]*process.Process{procs[APIServer]})
		stopAll([]*process.Process{procs[Etcd]})
		if err := os.RemoveAll(c.stateDir); err != nil {
			errs = append(errs, err)
		}
		c.mu.Lock()
		c.claim.Release() // after every process that bound them has ended
		c.mu.Unlock()
		c.err = errors.Join(errs...)
	})
	return c.err
}

func groupName(g int) string { return fmt.Sprintf("g%d", g) }

// NodeName is the name of node i of group g of kwok nodes.
func NodeName(g, i int) string { return fmt.Sprintf("kwok-%s-n%d", groupName(g), i) }

// KubeletNodeName is the name of the kubelet node of group g.
func KubeletNodeName(g int) string { return "kubelet-" + groupName(g) }

// NodeKind is what plays the cluster's nodes (NodesKwok or NodesKubelet).
func (c *Cluster) NodeKind() string { return c.cfg.NodeKind }

// auditPolicyFile is the audit policy's name in the state directory.
const auditPolicyFile = "audit-policy.yaml"

// AuditLog is where the apiserver logs the requests of Config.AuditUsers
// (JSON lines, beside the component logs; kept after Stop). Empty when
// none were given.
func (c *Cluster) AuditLog() string {
	if len(c.cfg.AuditUsers) == 0 {
		return ""
	}
	return filepath.Join(c.cfg.LogDir, "kube-apiserver-audit.log")
}

// NodeGroups is the number of node groups.
func (c *Cluster) NodeGroups() int { return c.cfg.NodeGroups }

// NodesOf lists the nodes node group g owns.
func (c *Cluster) NodesOf(g int) []string {
	if c.cfg.NodeKind == NodesKubelet {
		return []string{KubeletNodeName(g)}
	}
	var names []string
	for i := 0; i < c.cfg.NodesPerGroup; i++ {
		names = append(names, NodeName(g, i))
	}
	return names
}

// NodeGroupOf returns the group that owns node, or -1.
func (c *Cluster) NodeGroupOf(node string) int {
	for g := 0; g < c.cfg.NodeGroups; g++ {
		for _, n := range c.NodesOf(g) {
			if n == node {
				return g
			}
		}
	}
	return -1
}

func gatesFlag(gates ...map[string]bool) string {
	merged := map[string]bool{}
	for _, m := range gates {
		for k, v := range m {
			merged[k] = v
		}
	}
	var parts []string
	for k, v := range merged {
		parts = append(parts, k+"="+strconv.FormatBool(v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
