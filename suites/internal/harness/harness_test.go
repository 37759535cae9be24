package harness

import (
	"strings"
	"testing"

	"github.com/jobconform/jobconform/suites/internal/runner"
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

func TestSetupRejectsUnknownProvider(t *testing.T) {
	t.Setenv(EnvKubeconfig, "")
	t.Setenv(EnvProvider, "minikube")
	_, err := Setup(t.Context(), Options{})
	if err == nil || !strings.Contains(err.Error(), "use local or kind") {
		t.Fatalf("unknown provider: %v", err)
	}
}

func TestChaosNeedsAControlledCluster(t *testing.T) {
	e := &Env{Kubeconfig: "/dev/null"}
	if _, err := e.Chaos(runner.BuiltIn, nil); err == nil || !strings.Contains(err.Error(), EnvKubeconfig) {
		t.Fatalf("chaos on an existing cluster: %v", err)
	}
}
