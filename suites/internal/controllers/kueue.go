package controllers

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/jobconform/jobconform/internal/ports"
	"github.com/jobconform/jobconform/internal/process"
)

// Kueue's MultiKueue (issue #31), run as Kueue's own setup guide runs it —
// one Kueue manager per cluster, the manager cluster's dispatching to the
// worker's — but as processes on 127.0.0.1 beside the local clusters.

// MultiKueueManagedBy is the spec.managedBy of a Job MultiKueue dispatches.
const MultiKueueManagedBy = "kueue.x-k8s.io/multikueue"

// KueueQueueLabel names the LocalQueue a Job is submitted to.
const KueueQueueLabel = "kueue.x-k8s.io/queue-name"

// KueueQueue is the LocalQueue of every scenario's namespace (KueueNamespace).
const KueueQueue = "jobconform"

// kueueMetricsCerts is where Kueue v0.17.0 reads its metrics server's
// certificate when it does not manage its certificates itself: a fixed
// path of cmd/kueue/main.go, not a setting.
const kueueMetricsCerts = "/etc/kueue/metrics/certs"

// kueueGates: the visibility server reads its certificate from a fixed
// path (/visibility) and is not what the harness judges.
const kueueGates = "VisibilityOnDemand=false"

var kueueGroup = schema.GroupVersion{Group: "kueue.x-k8s.io", Version: "v1beta2"}

// Kueue is one cluster's Kueue manager.
type Kueue struct {
	// Binary (k8sbin.EnsureKueue), Kubeconfig and LogDir must be set; Name
	// tells the logs apart ("manager", "worker").
	Binary, Kubeconfig, LogDir, Name string

	served
	// webhookPort and cert are where Kueue serves its webhooks and the
	// certificate it serves them with (PEM), once started.
	webhookPort int
	cert        []byte
	// holdsMetricsCerts: this Kueue is a user of kueueMetricsCerts.
	holdsMetricsCerts bool
}

// Start writes Kueue's configuration and certificate and runs it until its
// /readyz answers.
func (k *Kueue) Start(ctx context.Context) error {
	claim, err := ports.Take(3)
	if err != nil {
		return err
	}
	k.claim = claim
	health, metrics, webhook := claim.Ports[0], claim.Ports[1], claim.Ports[2]
	if k.dir, err = os.MkdirTemp("", "jobconform-kueue-"+k.Name+"-"); err != nil {
		return err
	}
	certs := filepath.Join(k.dir, "certs")
	if err := writeServingCert(certs); err != nil {
		return err
	}
	k.webhookPort = webhook
	if k.cert, err = os.ReadFile(filepath.Join(certs, "tls.crt")); err != nil {
		return err
	}
	if err := metricsCerts.acquire(); err != nil {
		return fmt.Errorf("Kueue reads its metrics certificate from %s (fixed in its command): make that directory writable for this user, or run as root: %w", kueueMetricsCerts, err)
	}
	k.holdsMetricsCerts = true
	config := fmt.Sprintf(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health: {healthProbeBindAddress: "127.0.0.1:%d"}
metrics: {bindAddress: "127.0.0.1:%d"}
webhook: {host: 127.0.0.1, port: %d, certDir: %q}
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
manageJobsWithoutQueueName: false
integrations: {frameworks: ["batch/job"]}
`, health, metrics, webhook, certs)
	cfgPath := filepath.Join(k.dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		return err
	}
	if err := os.MkdirAll(k.LogDir, 0o755); err != nil {
		return err
	}
	k.proc = process.New("kueue-"+k.Name, filepath.Join(k.LogDir, "kueue-"+k.Name+".log"))
	k.proc.SetCommand(k.Binary, "--config="+cfgPath, "--kubeconfig="+k.Kubeconfig, "--feature-gates="+kueueGates)
	if err := k.proc.Start(); err != nil {
		return err
	}
	if err := k.proc.AwaitHealthy(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", health), 2*time.Minute); err != nil {
		return fmt.Errorf("Kueue on the %s cluster did not become ready: %w", k.Name, err)
	}
	return nil
}

// Stop ends Kueue and removes its configuration.
func (k *Kueue) Stop() error {
	err := k.stop()
	if k.holdsMetricsCerts {
		k.holdsMetricsCerts = false
		metricsCerts.release()
	}
	return err
}

// metricsCerts is kueueMetricsCerts, shared by the Kueues of this process:
// a certificate is written there unless one is (a user's is kept), and what
// the harness created is removed once the last of them stops, leaving the
// machine as it was.
var metricsCerts sharedCerts

type sharedCerts struct {
	mu      sync.Mutex
	users   int
	created string // the topmost directory the harness made ("" none)
}

func (m *sharedCerts) acquire() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.users == 0 {
		m.created = ""
		for _, d := range []string{"/etc/kueue", "/etc/kueue/metrics", kueueMetricsCerts} {
			if _, err := os.Stat(d); os.IsNotExist(err) {
				m.created = d
				break
			}
		}
		_, crtErr := os.Stat(filepath.Join(kueueMetricsCerts, "tls.crt"))
		_, keyErr := os.Stat(filepath.Join(kueueMetricsCerts, "tls.key"))
		if crtErr != nil || keyErr != nil {
			if err := writeServingCert(kueueMetricsCerts); err != nil {
				return err
			}
		}
	}
	m.users++
	return nil
}

func (m *sharedCerts) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.users--; m.users == 0 && m.created != "" {
		os.RemoveAll(m.created)
	}
}

// writeServingCert writes a self-signed certificate for 127.0.0.1 as
// tls.crt and tls.key into dir.
func writeServingCert(dir string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(7 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
}

// Dynamic is a dynamic client of the cluster kubeconfig reaches.
func Dynamic(kubeconfig string) (dynamic.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	return dynamic.NewForConfig(cfg)
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallKueueCRDs creates the CRDs of dir (k8sbin.KueueSet.CRDDir) and
// waits until the apiserver serves them.
func InstallKueueCRDs(ctx context.Context, dc dynamic.Interface, dir string) error {
	return installCRDs(ctx, dc, dir, "Kueue", "jobconform build --kueue default")
}

// installCRDs creates the CRDs of dir (what's, built by rebuild) and waits
// until the apiserver serves them.
func installCRDs(ctx context.Context, dc dynamic.Interface, dir, what, rebuild string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no %s CRDs in %s: build %s again (%s)", what, dir, what, rebuild)
	}
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if _, err := dc.Resource(crdResource).Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create CRD %s: %w", u.GetName(), err)
		}
		names = append(names, u.GetName())
	}
	for _, n := range names {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			u, err := dc.Resource(crdResource).Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", n, err)
		}
	}
	return nil
}

// createAll creates the YAML documents of docs (kind → resource as the
// table says), tolerating those that exist.
func createAll(ctx context.Context, dc dynamic.Interface, docs string) error {
	resources := map[string]schema.GroupVersionResource{
		"Namespace":         {Version: "v1", Resource: "namespaces"},
		"Secret":            {Version: "v1", Resource: "secrets"},
		"ResourceFlavor":    kueueGroup.WithResource("resourceflavors"),
		"ClusterQueue":      kueueGroup.WithResource("clusterqueues"),
		"LocalQueue":        kueueGroup.WithResource("localqueues"),
		"AdmissionCheck":    kueueGroup.WithResource("admissionchecks"),
		"MultiKueueConfig":  kueueGroup.WithResource("multikueueconfigs"),
		"MultiKueueCluster": kueueGroup.WithResource("multikueueclusters"),
	}
	for _, doc := range strings.Split(docs, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return err
		}
		gvr, ok := resources[u.GetKind()]
		if !ok {
			return fmt.Errorf("createAll: no resource for kind %s", u.GetKind())
		}
		var ri dynamic.ResourceInterface = dc.Resource(gvr)
		if ns := u.GetNamespace(); ns != "" {
			ri = dc.Resource(gvr).Namespace(ns)
		}
		if _, err := ri.Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}

// clusterQueue admits everything a scenario asks for; on the manager it
// waits for MultiKueue's admission check.
func clusterQueue(check string) string {
	s := `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: jobconform}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: jobconform}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: jobconform
      resources:
      - {name: cpu, nominalQuota: "100000"}
      - {name: memory, nominalQuota: 100000Gi}`
	if check != "" {
		s += "\n  admissionChecksStrategy:\n    admissionChecks: [{name: " + check + "}]"
	}
	return s
}

// webhookHint says what a webhook call the apiserver could not make means:
// Kueue's objects go through Kueue's own webhooks, served on 127.0.0.1.
func webhookHint(err error, cluster string) string {
	if !strings.Contains(err.Error(), "failed calling webhook") {
		return ""
	}
	return fmt.Sprintf(" (the %s's apiserver could not call Kueue's webhook on 127.0.0.1: see kueue-%s.log in the cluster's log directory for why Kueue does not serve it)", cluster, cluster)
}

// SetUpMultiKueue creates the objects a user would — on the worker a
// ResourceFlavor and a ClusterQueue; on the manager those, an AdmissionCheck
// of MultiKueue, a MultiKueueConfig, a MultiKueueCluster and the Secret with
// the worker's kubeconfig (certificates inlined: Kueue refuses file paths)
// — and waits until the MultiKueueCluster is Active.
func SetUpMultiKueue(ctx context.Context, manager, worker dynamic.Interface, workerKubeconfig string) error {
	if err := createAll(ctx, worker, "apiVersion: v1\nkind: Namespace\nmetadata: {name: kueue-system}\n---\n"+clusterQueue("")); err != nil {
		return fmt.Errorf("the worker's Kueue objects: %w%s", err, webhookHint(err, "worker"))
	}
	kc, err := inlineKubeconfig(workerKubeconfig)
	if err != nil {
		return err
	}
	secret := fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: jobconform-worker, namespace: kueue-system}\ndata: {kubeconfig: %s}", kc)
	objs := `apiVersion: v1
kind: Namespace
metadata: {name: kueue-system}
---
` + secret + `
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {name: jobconform-worker}
spec:
  clusterSource:
    kubeConfig: {locationType: Secret, location: jobconform-worker}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueConfig
metadata: {name: jobconform}
spec: {clusters: [jobconform-worker]}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: jobconform}
spec:
  controllerName: kueue.x-k8s.io/multikueue
  parameters: {apiGroup: kueue.x-k8s.io, kind: MultiKueueConfig, name: jobconform}
---
` + clusterQueue("jobconform")
	if err := createAll(ctx, manager, objs); err != nil {
		return fmt.Errorf("the manager's Kueue objects: %w%s", err, webhookHint(err, "manager"))
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		u, err := manager.Resource(kueueGroup.WithResource("multikueueclusters")).Get(ctx, "jobconform-worker", metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Active" {
				last = fmt.Sprintf("Active=%v (%v: %v)", m["status"], m["reason"], m["message"])
				return m["status"] == "True", nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("the worker never became Active in MultiKueueCluster jobconform-worker (last: %s): see the manager's Kueue log", orNone(last))
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "no status"
	}
	return s
}

// inlineKubeconfig is the kubeconfig at path with its files' contents in
// it, base64-encoded as a Secret's data.
func inlineKubeconfig(path string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return "", err
	}
	if err := clientcmdapi.FlattenConfig(cfg); err != nil {
		return "", err
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(data), nil
}

// KueueNamespace makes namespace ns ready for MultiKueue's Jobs on the
// cluster dc reaches: its LocalQueue.
func KueueNamespace(ctx context.Context, dc dynamic.Interface, ns string) error {
	return createAll(ctx, dc, fmt.Sprintf(`apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: %s, namespace: %s}
spec: {clusterQueue: jobconform}`, KueueQueue, strconv.Quote(ns)))
}

// kueueQueuedJobs selects the Jobs Kueue's Job webhooks are called for: those
// submitted to a queue. Without it every Job of the cluster would wait on
// Kueue's webhook (failurePolicy Fail), the other controllers' too.
var kueueQueuedJobs = map[string]any{"matchExpressions": []any{map[string]any{"key": KueueQueueLabel, "operator": "Exists"}}}

// RegisterWebhooks registers Kueue's webhooks of the module's configurations
// (k8sbin.KueueSet.Webhooks) with the apiserver dc reaches, by URL to this
// Kueue on 127.0.0.1 and with its certificate as the CA: only those of Jobs
// and of Kueue's own objects (the others' integrations are off), named
// after the cluster (Name). Call after Start.
func (k *Kueue) RegisterWebhooks(ctx context.Context, dc dynamic.Interface, manifests string) error {
	data, err := os.ReadFile(manifests)
	if err != nil {
		return err
	}
	n := 0
	for _, doc := range strings.Split(string(data), "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return fmt.Errorf("%s: %w", manifests, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		var resource string
		switch u.GetKind() {
		case "MutatingWebhookConfiguration":
			resource = "mutatingwebhookconfigurations"
		case "ValidatingWebhookConfiguration":
			resource = "validatingwebhookconfigurations"
		default:
			continue
		}
		hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
		var kept []any
		for _, h := range hooks {
			w, ok := h.(map[string]any)
			if !ok {
				continue
			}
			path, _, _ := unstructured.NestedString(w, "clientConfig", "service", "path")
			group := webhookGroup(w)
			if path == "" || (group != "batch" && group != kueueGroup.Group) {
				continue
			}
			w["clientConfig"] = map[string]any{"url": fmt.Sprintf("https://127.0.0.1:%d%s", k.webhookPort, path), "caBundle": base64.StdEncoding.EncodeToString(k.cert)}
			if group == "batch" {
				w["objectSelector"] = kueueQueuedJobs
			}
			kept = append(kept, w)
		}
		if len(kept) == 0 {
			continue
		}
		cfg := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "admissionregistration.k8s.io/v1", "kind": u.GetKind(),
			"metadata": map[string]any{"name": "jobconform-kueue-" + k.Name}, "webhooks": kept}}
		gvr := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: resource}
		if _, err := dc.Resource(gvr).Create(ctx, cfg, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("register Kueue's %s: %w", u.GetKind(), err)
		}
		n += len(kept)
	}
	if n == 0 {
		return fmt.Errorf("%s holds no webhook of Jobs or of Kueue's objects", manifests)
	}
	return nil
}

// webhookGroup is the API group of a webhook's first rule.
func webhookGroup(w map[string]any) string {
	rules, _, _ := unstructured.NestedSlice(w, "rules")
	for _, r := range rules {
		if m, ok := r.(map[string]any); ok {
			if gs, ok := m["apiGroups"].([]any); ok && len(gs) > 0 {
				g, _ := gs[0].(string)
				return g
			}
		}
	}
	return ""
}
