package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/internal/cluster"
	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/suites/internal/controllers"
)

func TestControllersOf(t *testing.T) {
	cs := controllersOf(options.Defaults())
	if len(cs) != 2 || cs[0].Name != "builtin" || cs[1].Name != "reference" {
		t.Fatalf("default: %v", cs)
	}
	st := options.Defaults()
	st.Controllers = []string{"external", "reference"}
	st.External = options.External{ManagedBy: "example.com/mine", Finalizer: "example.com/tracking"}
	st.ReferenceFaults = []string{"no-finalizer"}
	cs = controllersOf(st)
	if cs[0].Name != "example.com/mine" || *cs[0].ManagedBy != "example.com/mine" || cs[0].Finalizer != "example.com/tracking" {
		t.Fatalf("external: %+v", cs[0])
	}
	if len(cs[1].Faults) != 1 {
		t.Fatalf("the reference controller lost its faults: %+v", cs[1])
	}
	// Whose requests the audit log tells apart: an external controller's
	// only when the harness starts it (as a user of its own).
	if cs[0].User != "" || cs[1].User != controllers.ReferenceUser || controllersOf(options.Defaults())[0].User != kube.JobControllerUser {
		t.Fatalf("users: %q, %q", cs[0].User, cs[1].User)
	}
	st.External.Command = "./bin/mine"
	if cs = controllersOf(st); cs[0].User != controllers.ExternalUser {
		t.Fatalf("an external controller the harness starts: user %q", cs[0].User)
	}
}

// The clusters' logs follow --artifacts, not $ARTIFACTS.
func TestOptionsOfPassesTheArtifacts(t *testing.T) {
	t.Setenv("ARTIFACTS", t.TempDir())
	st := options.Defaults()
	st.Run.Artifacts = "/runs/42"
	if got := OptionsOf(st).Cluster.Artifacts; got != "/runs/42" {
		t.Fatalf("cluster.Config.Artifacts = %q, want the --artifacts directory", got)
	}
}

func TestOptionsOfChoosesTheProvider(t *testing.T) {
	st := options.Defaults()
	st.Kubeconfig = "/some/kubeconfig"
	if err := st.Validate(); err != nil {
		t.Fatal(err)
	}
	if o := OptionsOf(st); o.ProviderName() != "existing" || o.Cluster.Kubeconfig != "/some/kubeconfig" {
		t.Fatalf("a kubeconfig alone means the existing provider: %+v", o)
	}
	if o := OptionsOf(options.Defaults()); o.ProviderName() != "local" {
		t.Fatalf("default: %+v", o)
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
