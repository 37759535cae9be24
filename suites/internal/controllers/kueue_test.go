package controllers

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
