package controllers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/jobconform/jobconform/internal/ports"
	"github.com/jobconform/jobconform/internal/process"
)

// ChaosMesh is Chaos Mesh's controller-manager (built from its Go module,
// k8sbin.EnsureChaosMesh) run as a process against a cluster, as its
// operator would install it there: what carries out the PodChaos
// experiments jobconform submits (issue #47). Its webhooks serve on
// 127.0.0.1 but are not registered: jobconform's experiments are complete
// as submitted.
type ChaosMesh struct {
	// Binary, Kubeconfig and LogDir must be set; PauseImage is what a
	// pod-failure runs (an image the nodes hold).
	Binary, Kubeconfig, LogDir, PauseImage string

	served
}

// InstallChaosMeshCRDs creates Chaos Mesh's CRDs of dir
// (k8sbin.ChaosMeshSet.CRDDir) and waits until the apiserver serves them.
func InstallChaosMeshCRDs(ctx context.Context, dc dynamic.Interface, dir string) error {
	return installCRDs(ctx, dc, dir, "Chaos Mesh", "remove its directory from jobconform's cache")
}

// UninstallChaosMeshCRDs deletes the CRDs of dir (their objects go with them).
func UninstallChaosMeshCRDs(ctx context.Context, dc dynamic.Interface, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range files {
		// chaos-mesh.org_podchaos.yaml → podchaos.chaos-mesh.org
		base := filepath.Base(f)
		group, plural, ok := strings.Cut(strings.TrimSuffix(base, ".yaml"), "_")
		if !ok {
			continue
		}
		if err := dc.Resource(crdResource).Delete(ctx, plural+"."+group, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// Start starts the controller-manager and waits until it serves its metrics
// (its manager has started).
func (m *ChaosMesh) Start(ctx context.Context) error {
	claim, err := ports.Take(2)
	if err != nil {
		return err
	}
	m.claim = claim
	metrics, webhook := claim.Ports[0], claim.Ports[1]
	if m.dir, err = os.MkdirTemp("", "jobconform-chaos-mesh-"); err != nil {
		return err
	}
	certs := filepath.Join(m.dir, "certs")
	if err := writeServingCert(certs); err != nil {
		return err
	}
	if err := os.MkdirAll(m.LogDir, 0o755); err != nil {
		return err
	}
	m.proc = process.New("chaos-controller-manager", filepath.Join(m.LogDir, "chaos-controller-manager.log"))
	m.proc.SetCommand(m.Binary)
	m.proc.SetEnv(
		"KUBECONFIG="+m.Kubeconfig,
		"METRICS_HOST=127.0.0.1", "METRICS_PORT="+strconv.Itoa(metrics),
		"WEBHOOK_HOST=127.0.0.1", "WEBHOOK_PORT="+strconv.Itoa(webhook), "CERTS_DIR="+certs,
		"ENABLE_LEADER_ELECTION=false", "PPROF_ADDR=0",
		"POD_FAILURE_PAUSE_IMAGE="+m.PauseImage,
	)
	if err := m.proc.Start(); err != nil {
		return err
	}
	if err := m.proc.AwaitHealthy(ctx, fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics), 2*time.Minute); err != nil {
		return fmt.Errorf("Chaos Mesh's controller-manager did not start: %w", err) // the error names its log
	}
	return nil
}

// Stop ends the controller-manager and removes its certificates.
func (m *ChaosMesh) Stop() error { return m.stop() }
