package local

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	"github.com/jobconform/jobconform/internal/cluster/internal/provider"
	"github.com/jobconform/jobconform/internal/k8sbin"
	"github.com/jobconform/jobconform/internal/process"
)

// apply changes how a component runs from its next start on, as r says.
func (c *Cluster) apply(ctx context.Context, st *componentState, r Restart) error {
	if r.ResetFeatureGates {
		st.gates = nil
	}
	if len(r.FeatureGates) > 0 {
		merged := map[string]bool{}
		for k, v := range st.gates {
			merged[k] = v
		}
		for k, v := range r.FeatureGates {
			merged[k] = v
		}
		st.gates = merged
	}
	if r.Version != "" {
		// Another release's binary (upgrade and downgrade drills), built first if not cached.
		bins, err := c.cfg.Builder.Ensure(ctx, r.Version)
		if err != nil {
			return err
		}
		st.bins = bins
	}
	if r.EmulatedVersion != "" {
		st.emulated = strings.TrimPrefix(r.EmulatedVersion, "v")
	}
	return nil
}

// StopComponent stops one control-plane component (SIGTERM, then SIGKILL after 10s).
func (c *Cluster) StopComponent(comp Component) error {
	p, ok := c.procs[comp]
	if !ok {
		return fmt.Errorf("unknown component %q: use one of %v", comp, Components)
	}
	return p.Stop(10 * time.Second)
}

// KillComponent ends a component with SIGKILL, as a crash would.
func (c *Cluster) KillComponent(comp Component) error {
	p, ok := c.procs[comp]
	if !ok {
		return fmt.Errorf("unknown component %q: use one of %v", comp, Components)
	}
	return p.Kill()
}

// StartComponent starts a stopped component as r says and waits until it
// is healthy.
func (c *Cluster) StartComponent(ctx context.Context, comp Component, r Restart) error {
	if !provider.Known(comp) {
		return fmt.Errorf("unknown component %q: use one of %v", comp, Components)
	}
	c.mu.Lock()
	next := *c.state[comp]
	c.mu.Unlock()
	if err := c.apply(ctx, &next, r); err != nil {
		return fmt.Errorf("%s: %w", comp, err)
	}
	c.mu.Lock()
	*c.state[comp] = next
	c.mu.Unlock()
	return c.startComponent(ctx, comp)
}

// RestartComponent stops (r.Crash: kills) a component and starts it again
// as r says; etcd data and every other component stay as they are.
func (c *Cluster) RestartComponent(ctx context.Context, comp Component, r Restart) error {
	stop := c.StopComponent
	if r.Crash {
		stop = c.KillComponent
	}
	if err := stop(comp); err != nil {
		return err
	}
	if r.Hold != nil {
		if err := r.Hold(); err != nil {
			return err
		}
	}
	return c.StartComponent(ctx, comp, r)
}

// startComponent starts comp with its current state and waits for its health endpoint.
func (c *Cluster) startComponent(ctx context.Context, comp Component) error {
	if err := c.spawn(comp); err != nil {
		return err
	}
	return c.waitHealthy(ctx, c.procs[comp], comp)
}

// spawn starts comp's process with its current state, without waiting.
func (c *Cluster) spawn(comp Component) error {
	c.mu.Lock()
	st := *c.state[comp]
	p := c.procs[comp]
	p.SetCommand(c.binaryOf(comp, st.bins), c.args(comp, st)...)
	c.mu.Unlock()
	return p.Start()
}

func (c *Cluster) binaryOf(comp Component, bins *k8sbin.Set) string {
	switch comp {
	case Etcd:
		return bins.Path(k8sbin.Etcd)
	case APIServer:
		return bins.Path(k8sbin.APIServer)
	case ControllerManager:
		if c.covered != nil && c.covered.Version == bins.Version {
			return c.covered.ControllerManager
		}
		return bins.Path(k8sbin.ControllerManager)
	default:
		return bins.Path(k8sbin.Scheduler)
	}
}

// args builds a component's flags. Every listener is bound to 127.0.0.1.
func (c *Cluster) args(comp Component, st componentState) []string {
	pk := c.pki.path
	gates := gatesFlag(c.cfg.FeatureGates, st.gates)
	serving := []string{
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", c.ports[comp]),
		"--tls-cert-file=" + pk(servingCert),
		"--tls-private-key-file=" + pk(servingKey),
	}
	var a []string
	switch comp {
	case Etcd:
		peer := fmt.Sprintf("http://127.0.0.1:%d", c.peerPort)
		client := fmt.Sprintf("http://127.0.0.1:%d", c.ports[Etcd])
		a = []string{
			"--name=jobconform",
			"--data-dir=" + filepath.Join(c.stateDir, "etcd"),
			"--listen-client-urls=" + client,
			"--advertise-client-urls=" + client,
			"--listen-peer-urls=" + peer,
			"--initial-advertise-peer-urls=" + peer,
			"--initial-cluster=jobconform=" + peer,
			"--log-level=warn",
			// The data is thrown away with the cluster: skip fsync for speed.
			"--unsafe-no-fsync=true",
			// A single member elects itself after one election timeout: 100ms
			// instead of the default 1s (heartbeats must be ≤ a fifth of it).
			// With no peers there is no leadership to lose to a slow tick.
			// The tick is the heartbeat: at 20ms an idle etcd uses half the
			// CPU it did at 10ms (measured: 0.95% of a core, was 1.9%), which
			// a dozen clusters side by side pay together.
			"--heartbeat-interval=20",
			"--election-timeout=100",
		}
		return append(a, c.cfg.ExtraArgs[comp]...)
	case APIServer:
		a = append(serving,
			fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", c.ports[Etcd]),
			"--advertise-address=127.0.0.1",
			// The apiserver cannot advertise a loopback address as the
			// kubernetes Service endpoint; nothing here needs that endpoint.
			"--endpoint-reconciler-type=none",
			"--client-ca-file="+pk(caCert),
			"--anonymous-auth=false",
			// Node first, as kubeadm does: a kubelet node's kubelet may touch only
			// its own Node, its pods and what they use. kwok plays nodes as
			// system:masters, which neither confines.
			"--authorization-mode=Node,RBAC",
			"--enable-admission-plugins=NodeRestriction",
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file="+pk(saPub),
			"--service-account-signing-key-file="+pk(saKey),
			"--service-cluster-ip-range="+serviceCIDR,
			"--allow-privileged=true",
			"--profiling=false",
			// Watches are ended at shutdown: by default the apiserver keeps
			// them open and its HTTP server waits 60s for them, past the
			// stop's grace, so every restart was a SIGKILL (flag since 1.27).
			"--shutdown-watch-termination-grace-period=5s",
			"--cert-dir="+filepath.Join(c.stateDir, "apiserver"),
		)
		if len(c.cfg.AuditUsers) > 0 {
			a = append(a, "--audit-policy-file="+filepath.Join(c.stateDir, auditPolicyFile), "--audit-log-path="+c.AuditLog(),
				// One file for the whole cluster: the scale suite reads it from
				// an offset, and the default rotation (100 MB: a 10k form run
				// writes about 230 MB an hour) lost two runs' requests.
				"--audit-log-format=json", "--audit-log-maxbackup=0", "--audit-log-maxsize=1000000")
		}
	case ControllerManager:
		a = append(c.controlLoopArgs(serving, "kube-controller-manager.kubeconfig"),
			"--client-ca-file="+pk(caCert),
			"--use-service-account-credentials=true",
			"--service-account-private-key-file="+pk(saKey),
			"--root-ca-file="+pk(caCert),
			"--cluster-signing-cert-file="+pk(caCert),
			"--cluster-signing-key-file="+pk(caKey),
			"--kube-api-qps=200",
			"--kube-api-burst=400",
			"--controllers="+strings.Join(kcmControllers, ","),
		)
		if c.cfg.NodeLeaseSeconds > 0 {
			a = append(a, fmt.Sprintf("--node-monitor-grace-period=%ds", c.cfg.NodeLeaseSeconds+10))
		}
	case Scheduler:
		a = c.controlLoopArgs(serving, "kube-scheduler.kubeconfig")
	}
	if gates != "" {
		a = append(a, "--feature-gates="+gates)
	}
	if st.emulated != "" {
		a = append(a, "--emulated-version="+st.emulated)
	}
	return append(a, c.cfg.ExtraArgs[comp]...)
}

// controlLoopArgs are the flags the controller-manager and the scheduler
// share: their kubeconfig for everything, no leader election (restarts take
// over at once), health and metrics readable without credentials.
func (c *Cluster) controlLoopArgs(serving []string, kubeconfig string) []string {
	kc := filepath.Join(c.stateDir, kubeconfig)
	return append(serving,
		"--kubeconfig="+kc,
		"--authentication-kubeconfig="+kc,
		"--authorization-kubeconfig="+kc,
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
		"--leader-elect=false",
		"--profiling=false",
	)
}

// waitHealthy polls a component's health endpoint until it answers ok, the
// process exits, or StartTimeout passes.
func (c *Cluster) waitHealthy(ctx context.Context, p *process.Process, comp Component) error {
	var url string
	client := c.healthClient(comp == APIServer)
	switch comp {
	case Etcd:
		url = fmt.Sprintf("http://127.0.0.1:%d/health", c.ports[Etcd])
	case APIServer:
		url = fmt.Sprintf("https://127.0.0.1:%d/readyz", c.ports[APIServer])
	default:
		url = fmt.Sprintf("https://127.0.0.1:%d/healthz", c.ports[comp])
	}
	var last string
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, c.cfg.StartTimeout, true, func(ctx context.Context) (bool, error) {
		select {
		case <-p.Exited():
			return false, fmt.Errorf("%s", p.DescribeExit())
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		last = healthAnswer(resp.StatusCode, string(body))
		if comp == Etcd {
			return resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"health":"true"`), nil
		}
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		if wait.Interrupted(err) {
			return fmt.Errorf("%s not healthy at %s after %s (last answer: %s); log %s", comp, url, c.cfg.StartTimeout, last, p.LogPath)
		}
		return err
	}
	return nil
}

// healthAnswer is a health endpoint's answer on one line: the status and,
// for a failing /readyz or /healthz, only its failed checks.
func healthAnswer(code int, body string) string {
	var failed []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "[-]") {
			failed = append(failed, strings.TrimSpace(l))
		}
	}
	if len(failed) == 0 {
		return fmt.Sprintf("HTTP %d: %s", code, strings.Join(strings.Fields(body), " "))
	}
	return fmt.Sprintf("HTTP %d: %s", code, strings.Join(failed, "; "))
}

// healthClient trusts the cluster CA; withAdmin adds the admin client certificate
// (the apiserver allows no anonymous requests).
func (c *Cluster) healthClient(withAdmin bool) *http.Client {
	pool := x509.NewCertPool()
	if ca, err := os.ReadFile(c.pki.path(caCert)); err == nil {
		pool.AppendCertsFromPEM(ca)
	}
	tc := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if withAdmin {
		if pair, err := tls.LoadX509KeyPair(c.pki.path(adminCert), c.pki.path(adminKey)); err == nil {
			tc.Certificates = []tls.Certificate{pair}
		}
	}
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: tc, Proxy: nil}}
}

// waitControllersRunning waits for the default ServiceAccount, which the
// controller-manager's serviceaccount controller creates once its controllers
// run. A watch, not a poll: it is the last step of every start.
func (c *Cluster) waitControllersRunning(ctx context.Context) error {
	kcm := c.procs[ControllerManager]
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, c.cfg.StartTimeout)
	defer cancel()
	go func() {
		select {
		case <-kcm.Exited():
			cancel()
		case <-ctx.Done():
		}
	}()
	lw := cache.NewFilteredListWatchFromClient(c.client.CoreV1().RESTClient(), "serviceaccounts", metav1.NamespaceDefault,
		func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", "default").String()
		})
	_, err := watchtools.UntilWithSync(ctx, lw, &corev1.ServiceAccount{}, nil, func(e watch.Event) (bool, error) {
		return e.Type == watch.Added || e.Type == watch.Modified, nil
	})
	switch {
	case err == nil:
		return nil
	case !kcm.Running():
		return fmt.Errorf("%s", kcm.DescribeExit())
	case parent.Err() != nil:
		return parent.Err()
	case ctx.Err() != nil:
		return fmt.Errorf("controllers not running after %s: no default ServiceAccount; log %s", c.cfg.StartTimeout, kcm.LogPath)
	}
	return err
}

// kcmControllers are the controller-manager's controllers a Job's life
// touches, by the names every release from 1.31 knows: the Job controller;
// pod GC (pods of lost nodes, terminated pods); namespaces (the harness
// deletes one per run), service accounts and their root CA ConfigMap (pods on
// kubelet nodes mount both); node lifecycle and taint eviction (node loss);
// the garbage collector and TTL-after-finished (a deleted or expired Job's
// pods); disruption (PodDisruptionBudgets, which evictions honour). The
// other thirty-odd (Deployments, volumes, endpoints, quotas, HPA, …) judge
// nothing here, yet each watched the apiserver and ran its loops in every
// cluster: make bench prints what a start and an idle cluster cost.
var kcmControllers = []string{
	"job-controller",
	"pod-garbage-collector-controller",
	"namespace-controller",
	"serviceaccount-controller",
	"serviceaccount-token-controller",
	"root-ca-certificate-publisher-controller",
	"node-lifecycle-controller",
	"taint-eviction-controller",
	"garbage-collector-controller",
	"ttl-after-finished-controller",
	"disruption-controller",
}
