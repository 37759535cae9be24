package kind

import (
	"context"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestClusterConfig(t *testing.T) {
	cfg, err := Config{Version: "1.34.3", Workers: 2, FeatureGates: map[string]bool{"JobManagedBy": true}}.ClusterConfig()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Nodes) != 3 || cfg.Nodes[0].Role != "control-plane" || cfg.Nodes[2].Role != "worker" {
		t.Fatalf("nodes %+v", cfg.Nodes)
	}
	for _, n := range cfg.Nodes {
		if n.Image != "kindest/node:v1.34.3" {
			t.Fatalf("node image %q", n.Image)
		}
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"apiVersion: kind.x-k8s.io/v1alpha4", "kind: Cluster", "JobManagedBy: true"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("config lacks %q:\n%s", want, out)
		}
	}
	if _, err := (Config{Version: "v1.20.0"}).ClusterConfig(); err == nil {
		t.Error("unsupported version accepted")
	}
}

func TestNodeLossCommands(t *testing.T) {
	for how, back := range map[string]string{"stop": "start", "pause": "unpause"} {
		loss, err := NodeLossCommand("jobconform-worker2", how)
		if err != nil || len(loss) != 3 || loss[1] != how || loss[2] != "jobconform-worker2" {
			t.Errorf("loss %s: %v %v", how, loss, err)
		}
		ret, err := NodeReturnCommand("jobconform-worker2", how)
		if err != nil || ret[1] != back {
			t.Errorf("return %s: %v %v", how, ret, err)
		}
	}
	if _, err := NodeLossCommand("n", "unplug"); err == nil {
		t.Error("unknown loss accepted")
	}
}

// TestKindCluster brings a kind cluster up where Docker and the node image
// exist; elsewhere it says why it cannot and skips.
func TestKindCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("creates a kind cluster")
	}
	cfg := Config{Workers: 1}
	_ = cfg.setDefaults()
	if err := Available(context.Background(), cfg.Image); err != nil {
		t.Skipf("kind cluster tests need Docker and the node image: %v", err)
	}
	c, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	info, err := c.Client().Discovery().ServerVersion()
	if err != nil || info.GitVersion != cfg.Version {
		t.Fatalf("server version %v, %v; want %s", info, err, cfg.Version)
	}
}
