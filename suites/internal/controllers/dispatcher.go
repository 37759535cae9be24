package controllers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jobconform/jobconform/controller/dispatch"
	"github.com/jobconform/jobconform/internal/ports"
	"github.com/jobconform/jobconform/internal/process"
)

// DispatcherPackage is the reference dispatcher's main package.
const DispatcherPackage = "github.com/jobconform/jobconform/controller/cmd/dispatcher"

// BuildDispatcher compiles the reference dispatcher into dir and returns the
// binary's path.
func BuildDispatcher(ctx context.Context, dir string) (string, error) {
	return build(ctx, dir, "dispatcher", DispatcherPackage, "the reference dispatcher")
}

// Dispatcher is a running (or stopped) reference dispatcher between a
// manager and a worker cluster.
type Dispatcher struct {
	// Binary, the two kubeconfigs and LogDir must be set; Name defaults to
	// dispatch.DefaultName.
	Binary                              string
	ManagerKubeconfig, WorkerKubeconfig string
	LogDir                              string
	Name                                string
	// Faults are --inject-fault values: a deliberately broken dispatcher.
	Faults []string

	served
}

// Start runs the dispatcher and waits until it knows both clusters' Jobs.
func (d *Dispatcher) Start(ctx context.Context) error {
	if d.Name == "" {
		d.Name = dispatch.DefaultName
	}
	if err := os.MkdirAll(d.LogDir, 0o755); err != nil {
		return err
	}
	claim, err := ports.Take(1)
	if err != nil {
		return err
	}
	d.claim = claim
	port := claim.Ports[0]
	d.proc = process.New(d.logName(), filepath.Join(d.LogDir, d.logName()+".log"))
	args := []string{"--manager-kubeconfig=" + d.ManagerKubeconfig, "--worker-kubeconfig=" + d.WorkerKubeconfig,
		"--name=" + d.Name, "--healthz-bind-address=127.0.0.1:" + strconv.Itoa(port), "--v=2"}
	for _, f := range d.Faults {
		args = append(args, "--inject-fault="+f)
	}
	d.proc.SetCommand(d.Binary, args...)
	if err := d.proc.Start(); err != nil {
		return err
	}
	if err := d.proc.AwaitHealthy(ctx, fmt.Sprintf("http://127.0.0.1:%d/healthz", port), time.Minute); err != nil {
		return fmt.Errorf("the dispatcher %s did not become ready: %w", d.Name, err)
	}
	return nil
}

// Stop ends the dispatcher gracefully and gives its port back.
func (d *Dispatcher) Stop() error { return d.stop() }

func (d *Dispatcher) logName() string {
	if d.Name == "" || d.Name == dispatch.DefaultName {
		return "dispatcher"
	}
	return "dispatcher-" + strings.NewReplacer("/", "-", ".", "-").Replace(d.Name)
}
