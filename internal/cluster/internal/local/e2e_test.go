package local_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/e2e-framework/pkg/envconf"
	"sigs.k8s.io/e2e-framework/pkg/envfuncs"
	"sigs.k8s.io/e2e-framework/support"

	"github.com/jobconform/jobconform/internal/cluster/internal/local"
	"github.com/jobconform/jobconform/internal/pods"
)

// TestE2EFrameworkProvider drives the local provider through e2e-framework's
// own env funcs: create, list nodes with klient, lose and regain a node,
// export logs, destroy.
func TestE2EFrameworkProvider(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real cluster")
	}
	ctx := context.Background()
	cfg := envconf.New()
	p := local.NewProvider().WithConfig(local.Config{KwokStages: pods.KwokStages()})
	cfgFile := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(cfgFile, []byte("nodeGroups: 2\nnodesPerGroup: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, err := envfuncs.CreateClusterWithConfig(p, "e2e", cfgFile)(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := envfuncs.DestroyCluster("e2e")(ctx, cfg); err != nil {
			t.Error(err)
		}
		if p.Cluster().NodeGroupRunning(0) {
			t.Error("node group still running after DestroyCluster")
		}
	}()

	var nodes corev1.NodeList
	if err := cfg.Client().Resources().List(ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) != 4 {
		t.Fatalf("%d nodes, want 2 groups of 2", len(nodes.Items))
	}
	node := &support.Node{Name: local.NodeName(1, 0)}
	if err := p.StopNode(ctx, node); err != nil {
		t.Fatal(err)
	}
	listed, err := p.ListNode(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stopped := 0
	for _, n := range listed {
		if n.State == "stopped" {
			stopped++
		}
	}
	if stopped != 2 {
		t.Errorf("%d nodes stopped, want the 2 of group 1", stopped)
	}
	if err := p.StartNode(ctx, node); err != nil {
		t.Fatal(err)
	}
	if err := p.StopNode(ctx, &support.Node{Name: "no-such-node"}); err == nil {
		t.Error("unknown node accepted")
	}
	logs := t.TempDir()
	if err := p.ExportLogs(ctx, logs); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"kube-apiserver.log", "kwok-g1.log"} {
		if _, err := os.Stat(filepath.Join(logs, f)); err != nil {
			t.Errorf("exported logs lack %s", f)
		}
	}
}
