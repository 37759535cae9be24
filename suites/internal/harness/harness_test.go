package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/suites/cluster"
)

func TestControllersUnderTest(t *testing.T) {
	t.Setenv(EnvControllers, "")
	cs, err := ControllersUnderTest()
	if err != nil || len(cs) != 2 || cs[0].Name != "builtin" || cs[1].Name != "reference" {
		t.Fatalf("default: %v %v", cs, err)
	}
	t.Setenv(EnvControllers, "builtin, robot")
	if _, err := ControllersUnderTest(); err == nil || !strings.Contains(err.Error(), `unknown controller "robot"`) {
		t.Fatalf("unknown controller: %v", err)
	}
	t.Setenv(EnvControllers, "external")
	t.Setenv(EnvExternalName, "")
	if _, err := ControllersUnderTest(); err == nil || !strings.Contains(err.Error(), EnvExternalName) {
		t.Fatalf("external without its managedBy: %v", err)
	}
	t.Setenv(EnvExternalName, "example.com/mine")
	t.Setenv(EnvExternalFinal, "example.com/tracking")
	cs, err = ControllersUnderTest()
	if err != nil || cs[0].Name != "example.com/mine" || *cs[0].ManagedBy != "example.com/mine" || cs[0].Finalizer != "example.com/tracking" {
		t.Fatalf("external: %+v %v", cs, err)
	}
}

func TestOptionsFromEnvChoosesTheProvider(t *testing.T) {
	t.Setenv(EnvControllers, "builtin")
	t.Setenv(EnvKubeconfig, "")
	t.Setenv(EnvProvider, "minikube")
	if _, err := OptionsFromEnv(); err == nil || !strings.Contains(err.Error(), "use one of existing, kind, local") {
		t.Fatalf("unknown provider: %v", err)
	}
	t.Setenv(EnvProvider, "")
	t.Setenv(EnvKubeconfig, "/some/kubeconfig")
	o, err := OptionsFromEnv()
	if err != nil || o.ProviderName() != "existing" || o.Cluster.Kubeconfig != "/some/kubeconfig" {
		t.Fatalf("a kubeconfig alone means the existing provider: %+v %v", o, err)
	}
	t.Setenv(EnvProvider, "kind")
	if _, err := OptionsFromEnv(); err == nil || !strings.Contains(err.Error(), "choose one") {
		t.Fatalf("kubeconfig and kind together: %v", err)
	}
	t.Setenv(EnvKubeconfig, "")
	t.Setenv(EnvProvider, "")
	if o, err := OptionsFromEnv(); err != nil || o.ProviderName() != "local" {
		t.Fatalf("default: %+v %v", o, err)
	}
}

func TestSetupRejectsUnknownProvider(t *testing.T) {
	_, err := Setup(t.Context(), Options{Provider: "minikube"})
	if err == nil || !strings.Contains(err.Error(), `unknown cluster provider "minikube"`) {
		t.Fatalf("unknown provider: %v", err)
	}
}

func TestSetupReportsAnUnreachableCluster(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	// A port nothing listens on, on this machine.
	cfg := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\n" +
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Setup(t.Context(), Options{Provider: "existing", Cluster: cluster.Config{Kubeconfig: kc}})
	if err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Fatalf("unreachable cluster: %v", err)
	}
	_, err = Setup(t.Context(), Options{Provider: "existing", Cluster: cluster.Config{Kubeconfig: kc + ".missing"}})
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("missing kubeconfig: %v", err)
	}
}

func TestParseGates(t *testing.T) {
	g, err := ParseGates("A=true, B=false,")
	if err != nil || len(g) != 2 || !g["A"] || g["B"] {
		t.Fatalf("ParseGates = %v, %v", g, err)
	}
	if got := FormatGates(map[string]bool{"B": false, "A": true}); got != "A=true,B=false" {
		t.Errorf("FormatGates = %q: want name order, as ParseGates reads it", got)
	}
	for _, bad := range []string{"A", "A=yes", "=true"} {
		if _, err := ParseGates(bad); err == nil {
			t.Errorf("ParseGates(%q) accepted", bad)
		}
	}
}
