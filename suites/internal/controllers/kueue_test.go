package controllers

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// Kueue's webhook and metrics servers get a certificate the apiserver can
// check against 127.0.0.1, the only address they bind.
func TestServingCertIsFor127(t *testing.T) {
	dir := t.TempDir()
	if err := writeServingCert(dir); err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := cert.VerifyHostname("127.0.0.1"); err != nil {
		t.Error(err)
	}
}

// MultiKueue refuses a kubeconfig that names files: the worker's is
// inlined.
func TestInlineKubeconfig(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"ca.crt", "admin.crt", "admin.key"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("data of "+f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	kc := filepath.Join(dir, "admin.kubeconfig")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", certificate-authority: `+dir+`/ca.crt}}]
users: [{name: u, user: {client-certificate: `+dir+`/admin.crt, client-key: `+dir+`/admin.key}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	enc, err := inlineKubeconfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	data, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), dir) {
		t.Errorf("a file path is left:\n%s", data)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	if string(cfg.AuthInfos["u"].ClientKeyData) != "data of admin.key" || string(cfg.Clusters["c"].CertificateAuthorityData) != "data of ca.crt" {
		t.Errorf("not inlined: %+v", cfg)
	}
}

// The ClusterQueues are valid YAML, the manager's with MultiKueue's check.
func TestClusterQueueDocuments(t *testing.T) {
	for _, check := range []string{"", "jobconform"} {
		for _, doc := range strings.Split(clusterQueue(check), "\n---\n") {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				t.Fatalf("%q: %v\n%s", check, err, doc)
			}
			if u.GetKind() == "ClusterQueue" {
				checks, _, _ := unstructured.NestedSlice(u.Object, "spec", "admissionChecksStrategy", "admissionChecks")
				if (check != "") != (len(checks) == 1) {
					t.Errorf("check %q: admission checks %v", check, checks)
				}
			}
		}
	}
}

// Kueue's webhooks reach it by URL on 127.0.0.1 with its certificate; only
// those of Jobs (Jobs submitted to a queue) and of Kueue's own objects.
func TestRegisterWebhooks(t *testing.T) {
	manifests := filepath.Join(t.TempDir(), "webhooks.yaml")
	if err := os.WriteFile(manifests, []byte(`---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: mutating-webhook-configuration}
webhooks:
- name: mjob.kb.io
  clientConfig: {service: {name: webhook-service, namespace: system, path: /mutate-batch-v1-job}}
  rules: [{apiGroups: [batch], apiVersions: [v1], operations: [CREATE], resources: [jobs]}]
- name: mpod.kb.io
  clientConfig: {service: {name: webhook-service, namespace: system, path: /mutate--v1-pod}}
  rules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
- name: mworkload.kb.io
  clientConfig: {service: {name: webhook-service, namespace: system, path: /mutate-kueue-x-k8s-io-v1beta2-workload}}
  rules: [{apiGroups: [kueue.x-k8s.io], apiVersions: [v1beta2], operations: [CREATE], resources: [workloads]}]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	dc := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
	k := &Kueue{Name: "manager", webhookPort: 1234, cert: []byte("PEM")}
	if err := k.RegisterWebhooks(context.Background(), dc, manifests); err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"}
	u, err := dc.Resource(gvr).Get(context.Background(), "jobconform-kueue-manager", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
	if len(hooks) != 2 {
		t.Fatalf("%d webhooks, want the Job's and the Workload's: %v", len(hooks), hooks)
	}
	job := hooks[0].(map[string]any)
	if url, _, _ := unstructured.NestedString(job, "clientConfig", "url"); url != "https://127.0.0.1:1234/mutate-batch-v1-job" {
		t.Errorf("url %q", url)
	}
	if ca, _, _ := unstructured.NestedString(job, "clientConfig", "caBundle"); ca != base64.StdEncoding.EncodeToString([]byte("PEM")) {
		t.Errorf("caBundle %q", ca)
	}
	if _, ok := job["objectSelector"]; !ok {
		t.Error("the Job webhook is called for every Job of the cluster (no objectSelector)")
	}
	if _, ok := hooks[1].(map[string]any)["objectSelector"]; ok {
		t.Error("the Workload webhook got the Jobs' objectSelector")
	}
}

// A webhook the apiserver cannot call is named as such, with where to look.
func TestWebhookHint(t *testing.T) {
	refused := errors.New(`Internal error occurred: failed calling webhook "vresourceflavor.kb.io": failed to call webhook: Post "https://127.0.0.1:30001/validate": dial tcp 127.0.0.1:30001: connect: connection refused`)
	if got := webhookHint(refused, "worker"); !strings.Contains(got, "could not call Kueue's webhook") || !strings.Contains(got, "kueue-worker.log") {
		t.Errorf("hint = %q", got)
	}
	if got := webhookHint(errors.New("namespaces \"x\" is forbidden"), "manager"); got != "" {
		t.Errorf("another error got a hint: %q", got)
	}
}
