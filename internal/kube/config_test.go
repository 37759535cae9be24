package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

// --context and --provider existing: one context of kubectl's kubeconfig
// (an explicit file, else $KUBECONFIG's), alone and current, its
// certificate files inlined, in a file only its owner reads.
func TestWriteOneContext(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), []byte("CA DATA"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := `apiVersion: v1
kind: Config
current-context: a
clusters:
- name: ca
  cluster: {server: "https://127.0.0.1:1", certificate-authority: ca.crt}
- name: cb
  cluster: {server: "https://127.0.0.1:2"}
users:
- name: ua
  user: {token: ta}
- name: ub
  user: {token: tb}
contexts:
- name: a
  context: {cluster: ca, user: ua}
- name: b
  context: {cluster: cb, user: ub}
`
	path := filepath.Join(dir, "config")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ kubeconfig, env, context, server, token string }{
		{path, "", "b", "https://127.0.0.1:2", "tb"},
		{path, "", "", "https://127.0.0.1:1", "ta"},
		{"", path, "b", "https://127.0.0.1:2", "tb"}, // kubectl's: $KUBECONFIG
	} {
		t.Setenv("KUBECONFIG", c.env)
		out, err := WriteOneContext(c.kubeconfig, c.context, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v", out, err, fi.Mode())
		}
		got, err := clientcmd.LoadFromFile(out)
		if err != nil {
			t.Fatal(err)
		}
		cur := got.Contexts[got.CurrentContext]
		if len(got.Contexts) != 1 || len(got.Clusters) != 1 || got.Clusters[cur.Cluster].Server != c.server || got.AuthInfos[cur.AuthInfo].Token != c.token {
			t.Errorf("context %q: wrote %+v", c.context, got)
		}
		if c.server == "https://127.0.0.1:1" && string(got.Clusters[cur.Cluster].CertificateAuthorityData) != "CA DATA" {
			t.Errorf("the certificate file was not inlined: %+v", got.Clusters[cur.Cluster])
		}
	}
	t.Setenv("KUBECONFIG", "")
	if _, err := WriteOneContext(path, "c", t.TempDir()); err == nil || !strings.Contains(err.Error(), `no context "c" (it has a, b)`) {
		t.Errorf("an unknown context: %v", err)
	}
}
