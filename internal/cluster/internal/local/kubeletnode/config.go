package kubeletnode

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// containerdConfig is a containerd 1.6 configuration (version 2) that keeps
// everything of this node under dir: its socket, root, state, runc root and
// CNI directories, so that two nodes on one machine never see each other's
// pods (a kubelet kills containers its runtime lists and it did not start).
func containerdConfig(dir string) string {
	q := func(s string) string { return fmt.Sprintf("%q", s) }
	return `version = 2
root = ` + q(filepath.Join(dir, "containerd", "root")) + `
state = ` + q(filepath.Join(dir, "containerd", "state")) + `
# Snapshotters this machine may lack would only log errors at every start.
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = ` + q(socketPath(dir)) + `

[plugins."io.containerd.internal.v1.opt"]
  path = ` + q(filepath.Join(dir, "containerd", "opt")) + `

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ` + q(PauseImage) + `
  # A pod sandbox asks for a negative oom_score_adj, which needs
  # CAP_SYS_RESOURCE; without this runc fails to start it where that
  # capability is missing (a container, as on the machines jobconform runs on).
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = ` + q(filepath.Join(dir, "runc")) + `
  [plugins."io.containerd.grpc.v1.cri".cni]
    # Pods run with hostNetwork (the harness renders them so): the CNI
    # configuration only tells the kubelet that the runtime's network is ready.
    bin_dir = ` + q(filepath.Join(dir, "cni", "bin")) + `
    conf_dir = ` + q(filepath.Join(dir, "cni", "net.d")) + `
`
}

// cniConfig is a loopback-only network; no pod uses it (hostNetwork).
const cniConfig = `{"cniVersion": "0.4.0", "name": "jobconform-host", "plugins": [{"type": "loopback"}]}
`

func socketPath(dir string) string { return filepath.Join(dir, "containerd", "containerd.sock") }

// kubeletConfig is the KubeletConfiguration of one node. Everything that would
// touch the machine beyond the node's own directory and cgroup is off:
// eviction, node-allocatable enforcement, QoS cgroups, swap checks, image GC.
type kubeletSettings struct {
	Dir              string
	CgroupRoot       string
	Port, HealthPort int
	CACert           string
	ServingCert      string
	ServingKey       string
	FeatureGates     map[string]bool
	Minor            int
}

func kubeletConfig(s kubeletSettings) string {
	var gates []string
	for k, v := range s.FeatureGates {
		gates = append(gates, fmt.Sprintf("  %s: %t", k, v))
	}
	sort.Strings(gates)
	gateBlock := ""
	if len(gates) > 0 {
		gateBlock = "featureGates:\n" + strings.Join(gates, "\n") + "\n"
	}
	cg1 := ""
	if s.Minor >= 31 {
		// From v1.31 the kubelet refuses cgroup v1 unless told otherwise;
		// the machines jobconform runs on may have only v1.
		cg1 = "failCgroupV1: false\n"
	}
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %q}
authorization:
  mode: Webhook
tlsCertFile: %q
tlsPrivateKeyFile: %q
containerRuntimeEndpoint: unix://%s
cgroupDriver: cgroupfs
cgroupsPerQOS: true
cgroupRoot: %s
enforceNodeAllocatable: []
%sfailSwapOn: false
evictionHard: {memory.available: "0%%", nodefs.available: "0%%", nodefs.inodesFree: "0%%", imagefs.available: "0%%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
makeIPTablesUtilChains: false
resolvConf: %q
syncFrequency: 10s
fileCheckFrequency: 1h
serializeImagePulls: false
localStorageCapacityIsolation: false
%s`, s.Port, s.HealthPort, s.CACert, s.ServingCert, s.ServingKey, socketPath(s.Dir), s.CgroupRoot, cg1,
		filepath.Join(s.Dir, "resolv.conf"), gateBlock)
}
