// Package harness brings up what a controller suite judges against: a
// cluster (local by default, kind, or an existing one), the reference
// controller when it is under test, and an external controller when the user
// gives its command. The conformance and chaos suites share it.
package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/chaos"
	"github.com/jobconform/jobconform/suites/chaosenv"
	"github.com/jobconform/jobconform/suites/cluster/kind"
	"github.com/jobconform/jobconform/suites/cluster/local"
	"github.com/jobconform/jobconform/suites/controllers"
	"github.com/jobconform/jobconform/suites/process"
	"github.com/jobconform/jobconform/suites/runner"
)

// The environment variables the suites read (README, "Pointing it elsewhere").
const (
	EnvVersion         = "JOBCONFORM_K8S_VERSION"
	EnvProvider        = "JOBCONFORM_PROVIDER"
	EnvKubeconfig      = "JOBCONFORM_KUBECONFIG"
	EnvControllers     = "JOBCONFORM_CONTROLLERS"
	EnvExternalName    = "JOBCONFORM_EXTERNAL_MANAGED_BY"
	EnvExternalFinal   = "JOBCONFORM_EXTERNAL_FINALIZER"
	EnvExternalCommand = "JOBCONFORM_EXTERNAL_COMMAND"
)

// ControllersUnderTest reads JOBCONFORM_CONTROLLERS (default builtin,reference).
func ControllersUnderTest() ([]runner.Controller, error) {
	names := os.Getenv(EnvControllers)
	if names == "" {
		names = "builtin,reference"
	}
	var out []runner.Controller
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		switch n {
		case "builtin":
			out = append(out, runner.BuiltIn)
		case "reference":
			out = append(out, runner.Reference)
		case "external":
			mb := os.Getenv(EnvExternalName)
			if mb == "" {
				return nil, fmt.Errorf("%s has external: set %s to its spec.managedBy value", EnvControllers, EnvExternalName)
			}
			out = append(out, runner.Controller{Name: mb, ManagedBy: ptr.To(mb), Finalizer: os.Getenv(EnvExternalFinal)})
		default:
			return nil, fmt.Errorf("%s: unknown controller %q (use builtin, reference, external)", EnvControllers, n)
		}
	}
	return out, nil
}

// Options shape the set-up.
type Options struct {
	Controllers []runner.Controller
	// Local is the local cluster's configuration (Version is filled from the environment).
	Local local.Config
	// Progress receives progress lines.
	Progress io.Writer
	// TempDir holds the reference controller's binary.
	TempDir string
}

// Env is a running set-up. Only the process that called Setup owns it.
type Env struct {
	Kubeconfig string
	Version    string
	Local      *local.Cluster
	Kind       *kind.Cluster
	Reference  *controllers.Reference
	External   *process.Process
	// LogDir holds the controllers' logs (beside the cluster's).
	LogDir string
}

// Setup brings up the cluster and the controllers under test. On error,
// whatever was started is stopped again.
func Setup(ctx context.Context, o Options) (_ *Env, err error) {
	e := &Env{}
	defer func() {
		if err != nil {
			_ = e.Stop()
		}
	}()
	switch provider := os.Getenv(EnvProvider); {
	case os.Getenv(EnvKubeconfig) != "":
		e.Kubeconfig = os.Getenv(EnvKubeconfig)
	case provider == "kind":
		e.Kind, err = kind.Start(ctx, kind.Config{Version: os.Getenv(EnvVersion)})
		if err != nil {
			return nil, fmt.Errorf("%s=kind: %w", EnvProvider, err)
		}
		e.Kubeconfig = e.Kind.Kubeconfig()
	case provider != "" && provider != "local":
		return nil, fmt.Errorf("%s=%q: use local or kind (or %s for an existing cluster)", EnvProvider, provider, EnvKubeconfig)
	default:
		cfg := o.Local
		cfg.Version = os.Getenv(EnvVersion)
		cfg.Progress = o.Progress
		e.Local, err = local.Start(ctx, cfg)
		if err != nil {
			return nil, err
		}
		e.Kubeconfig, e.Version = e.Local.Kubeconfig(), e.Local.Version()
	}
	e.LogDir = os.Getenv("ARTIFACTS")
	if e.Local != nil {
		e.LogDir = e.Local.LogDir()
	}
	if e.LogDir == "" {
		e.LogDir = os.TempDir()
	}
	for _, c := range o.Controllers {
		if c.Name == runner.Reference.Name {
			if e.Reference, err = e.StartReference(ctx, o.TempDir, "", nil); err != nil {
				return nil, err
			}
		}
	}
	if cmd := os.Getenv(EnvExternalCommand); cmd != "" {
		if err := os.MkdirAll(e.LogDir, 0o755); err != nil {
			return nil, err
		}
		e.External = process.New("external-controller", filepath.Join(e.LogDir, "external-controller.log"))
		e.External.SetCommand("/bin/sh", "-c", "KUBECONFIG="+e.Kubeconfig+" exec "+cmd)
		if err := e.External.Start(); err != nil {
			return nil, fmt.Errorf("%s: %w", EnvExternalCommand, err)
		}
		fmt.Fprintf(progress(o.Progress), "external controller started: %s (log %s)\n", cmd, e.External.LogPath)
	}
	return e, nil
}

func progress(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// StartReference builds and starts a reference controller answering to name
// (default: the reference's own) with faults injected; on a local cluster it
// runs as the least-privilege user of controller/deploy/rbac.yaml.
func (e *Env) StartReference(ctx context.Context, dir, name string, faults []string) (*controllers.Reference, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	bin, err := controllers.BuildReference(ctx, dir)
	if err != nil {
		return nil, err
	}
	ref := &controllers.Reference{Binary: bin, Kubeconfig: e.Kubeconfig, LogDir: e.LogDir, Name: name, Faults: faults}
	if e.Local != nil {
		if err := controllers.GrantReference(ctx, e.Local.Client()); err != nil {
			return nil, err
		}
		if ref.Kubeconfig, err = e.Local.ClientKubeconfig(controllers.ReferenceUser); err != nil {
			return nil, err
		}
	}
	if err := ref.Start(ctx); err != nil {
		return nil, err
	}
	return ref, nil
}

// Client connects to the cluster of kubeconfig, and tells its release.
func Client(kubeconfig, version string) (kubernetes.Interface, string, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	rc.QPS, rc.Burst = 100, 200
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, "", err
	}
	if version == "" {
		info, err := client.Discovery().ServerVersion()
		if err != nil {
			return nil, "", fmt.Errorf("cluster at %s unreachable: check the kubeconfig and that the cluster runs: %w", rc.Host, err)
		}
		version = info.GitVersion
	}
	return client, version, nil
}

// Chaos is the chaos environment for controller c (ref: the reference
// process when c is a reference controller), or an error saying why this
// set-up cannot inject chaos.
func (e *Env) Chaos(c runner.Controller, ref *controllers.Reference) (chaos.Environment, error) {
	switch {
	case e.Local != nil:
		l := &chaosenv.Local{Cluster: e.Local}
		if c.Name != runner.BuiltIn.Name {
			if ref == nil {
				return nil, fmt.Errorf("chaos against %s: the harness can restart only the controllers it started", c.Name)
			}
			l.Reference = ref
		}
		return l, nil
	case e.Kind != nil:
		return &chaosenv.Kind{Cluster: e.Kind}, nil
	}
	return nil, errors.New("chaos needs a cluster the harness controls (local or kind), not " + EnvKubeconfig)
}

// Stop stops everything Setup started.
func (e *Env) Stop() error {
	var errs []error
	if e.External != nil {
		errs = append(errs, e.External.Stop(10*time.Second))
	}
	if e.Reference != nil {
		errs = append(errs, e.Reference.Stop())
	}
	if e.Local != nil {
		errs = append(errs, e.Local.Stop())
	}
	if e.Kind != nil {
		errs = append(errs, e.Kind.Stop())
	}
	return errors.Join(errs...)
}
