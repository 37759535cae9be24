// Package kubeletnode runs real kubelet nodes for the local provider: per
// node, a containerd of its own (Debian's containerd and runc), the busybox
// and pause images assembled offline from Debian's busybox-static, and a
// kubelet of the cluster's release that authenticates as system:node:<name>.
// Everything a node starts — containerd, its shims, the containers, their
// mounts and cgroups — is stopped by Stop, and by Sweep when the process that
// started it died without stopping it.
package kubeletnode

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/jobconform/jobconform/internal/process"
)

// Config describes one kubelet node.
type Config struct {
	// Name is the node's name (its kubelet's --hostname-override).
	Name string
	// Kubelet is the kubelet binary (the cluster's release).
	Kubelet string
	// Minor is the release's minor version (settings differ across releases).
	Minor int
	// Kubeconfig authenticates the kubelet as system:node:<Name>.
	Kubeconfig string
	// CACert verifies clients of the kubelet's own server; ServingCert and
	// ServingKey are that server's certificate for 127.0.0.1.
	CACert, ServingCert, ServingKey string
	// Labels are the node's labels (--node-labels).
	Labels map[string]string
	// FeatureGates go to the kubelet.
	FeatureGates map[string]bool
	// LogDir receives containerd-<name>.log and kubelet-<name>.log.
	LogDir string
	// Port and HealthPort are the kubelet's server and health ports on
	// 127.0.0.1, reserved by the caller with its own (ports reserved one call
	// at a time may be handed out twice).
	Port, HealthPort int
}

// Node is a running kubelet node.
type Node struct {
	cfg        Config
	dir        string // everything of this node: containerd's root and state, kubelet root, configs
	cgroupRoot string // the pods' cgroup parent, in every hierarchy

	mu         sync.Mutex
	containerd *process.Process
	kubelet    *process.Process
	stopped    bool
}

// ownerFile in a node's directory holds the PID of the process that owns it.
const ownerFile = "owner.pid"

// dirPrefix names node directories in os.TempDir(), for Sweep.
const dirPrefix = "jobconform-kubelet-"

// Start brings a node up: containerd, the images, the kubelet. It returns once
// the kubelet answers its health check; the caller waits for the Node object.
// On failure nothing of the node is left running. The caller runs Check and
// Sweep once before starting a cluster's nodes.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	dir, err := os.MkdirTemp("", dirPrefix+cfg.Name+"-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	n := &Node{
		cfg:        cfg,
		dir:        dir,
		cgroupRoot: "/" + filepath.Base(dir),
		containerd: process.New("containerd-"+cfg.Name, filepath.Join(cfg.LogDir, "containerd-"+cfg.Name+".log")),
		kubelet:    process.New("kubelet-"+cfg.Name, filepath.Join(cfg.LogDir, "kubelet-"+cfg.Name+".log")),
	}
	if err := n.start(ctx); err != nil {
		n.Stop()
		return nil, fmt.Errorf("kubelet node %s: %w", cfg.Name, err)
	}
	return n, nil
}

func (n *Node) start(ctx context.Context) error {
	for _, d := range []string{"containerd", "cni/bin", "cni/net.d", "kubelet", "images"} {
		if err := os.MkdirAll(filepath.Join(n.dir, d), 0o755); err != nil {
			return err
		}
	}
	files := map[string]string{
		"containerd.toml":            containerdConfig(n.dir),
		"cni/net.d/10-host.conflist": cniConfig,
		"resolv.conf":                "",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(n.dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	if err := createCgroup(n.cgroupRoot); err != nil {
		return err
	}
	n.containerd.SetCommand("containerd", "--config="+filepath.Join(n.dir, "containerd.toml"), "--log-level=warn")
	if err := n.containerd.Start(); err != nil {
		return err
	}
	if err := n.waitSocket(ctx); err != nil {
		return err
	}
	busybox, pause, err := writeImages(filepath.Join(n.dir, "images"))
	if err != nil {
		return err
	}
	for _, img := range []string{busybox, pause} {
		out, err := exec.CommandContext(ctx, "ctr", "--address="+socketPath(n.dir), "--namespace=k8s.io", "images", "import", img).CombinedOutput()
		if err != nil {
			return fmt.Errorf("import %s into containerd: %v: %s", img, err, strings.TrimSpace(string(out)))
		}
	}
	return n.StartKubelet(ctx)
}

func (n *Node) waitSocket(ctx context.Context) error {
	sock := socketPath(n.dir)
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		if !n.containerd.Running() {
			return false, errors.New(n.containerd.DescribeExit())
		}
		c, err := net.Dial("unix", sock)
		if err != nil {
			return false, nil
		}
		c.Close()
		return true, nil
	})
	if wait.Interrupted(err) {
		return fmt.Errorf("containerd did not open %s within 30s; log %s", sock, n.containerd.LogPath)
	}
	return err
}

// StartKubelet starts the kubelet (again, after StopKubelet) and waits for
// its health endpoint.
func (n *Node) StartKubelet(ctx context.Context) error {
	ports := []int{n.cfg.Port, n.cfg.HealthPort}
	if ports[0] == 0 || ports[1] == 0 {
		return fmt.Errorf("kubelet node %s: no ports given (Config.Port, Config.HealthPort)", n.cfg.Name)
	}
	cfgPath := filepath.Join(n.dir, "kubelet.yaml")
	if err := os.WriteFile(cfgPath, []byte(kubeletConfig(kubeletSettings{
		Dir: n.dir, CgroupRoot: n.cgroupRoot, Port: ports[0], HealthPort: ports[1],
		CACert: n.cfg.CACert, ServingCert: n.cfg.ServingCert, ServingKey: n.cfg.ServingKey,
		FeatureGates: n.cfg.FeatureGates, Minor: n.cfg.Minor,
	})), 0o644); err != nil {
		return err
	}
	var labels []string
	for k, v := range n.cfg.Labels {
		labels = append(labels, k+"="+v)
	}
	n.kubelet.SetCommand(n.cfg.Kubelet,
		"--config="+cfgPath,
		"--kubeconfig="+n.cfg.Kubeconfig,
		"--root-dir="+filepath.Join(n.dir, "kubelet"),
		"--cert-dir="+filepath.Join(n.dir, "kubelet", "pki"),
		"--hostname-override="+n.cfg.Name,
		"--node-ip=127.0.0.1",
		"--node-labels="+strings.Join(labels, ","),
		"--v=1",
	)
	unlock, err := lockDevicePlugins(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	before, hadBefore := currentSocket()
	if err := n.kubelet.Start(); err != nil {
		return err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/healthz", ports[1])
	var last string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		if !n.kubelet.Running() {
			return false, errors.New(n.kubelet.DescribeExit())
		}
		ok, msg := healthy(ctx, url)
		last = msg
		return ok, nil
	})
	if wait.Interrupted(err) {
		return fmt.Errorf("kubelet not healthy at %s within 60s (%s); log %s", url, last, n.kubelet.LogPath)
	}
	if err != nil {
		return err
	}
	return n.waitDevicePluginSocket(ctx, before, hadBefore)
}

// StopKubelet stops the kubelet alone: its containers go on running and the
// node stops heartbeating, as in a network partition.
func (n *Node) StopKubelet() error { return n.kubelet.Stop(5 * time.Second) }

// KubeletRunning tells whether the kubelet runs.
func (n *Node) KubeletRunning() bool { return n.kubelet.Running() }

// PIDs are the node's kubelet and containerd processes that run now.
func (n *Node) PIDs() []int {
	var pids []int
	for _, p := range []*process.Process{n.kubelet, n.containerd} {
		if pid := p.PID(); pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// Dir is the node's directory (removed by Stop).
func (n *Node) Dir() string { return n.dir }

// Stop ends the kubelet, every container, containerd and its shims, unmounts
// what they mounted, removes the cgroups and the node's directory. Idempotent.
func (n *Node) Stop() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return nil
	}
	n.stopped = true
	var errs []error
	if err := n.kubelet.Stop(5 * time.Second); err != nil {
		errs = append(errs, err)
	}
	if err := n.containerd.Stop(5 * time.Second); err != nil {
		errs = append(errs, err)
	}
	if err := teardown(n.dir, n.cgroupRoot); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ContainerPIDs lists the processes that run in the node's cgroups now: its
// pods' containers and sandboxes.
func (n *Node) ContainerPIDs() []int { return cgroupPIDs(n.cgroupRoot) }
