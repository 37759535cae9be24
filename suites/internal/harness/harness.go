// Package harness brings up what a controller suite judges against: a
// cluster from a provider of suites/cluster, the reference controller when it
// is under test, and an external controller when the user gives its command.
// The conformance and chaos suites share it. Its configuration is explicit
// (Options); OptionsFromEnv reads the JOBCONFORM_* variables, once.
package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/onsi/ginkgo/v2"

	"github.com/jobconform/jobconform/controller"
	"github.com/jobconform/jobconform/scenarios/catalog"
	"github.com/jobconform/jobconform/scenarios/pods"
	"github.com/jobconform/jobconform/suites/cluster"
	"github.com/jobconform/jobconform/suites/internal/controllers"
	"github.com/jobconform/jobconform/suites/internal/kube"
	"github.com/jobconform/jobconform/suites/internal/process"
	"github.com/jobconform/jobconform/suites/internal/runner"
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
	// EnvReferenceFaults breaks the reference controller on purpose
	// (controller/faults.go, comma-separated): what make mutate runs.
	EnvReferenceFaults = "JOBCONFORM_REFERENCE_FAULTS"
	// EnvReferenceBinary runs this reference controller executable instead of
	// building one (jobconform run points it at itself: no checkout needed).
	EnvReferenceBinary = "JOBCONFORM_REFERENCE_BINARY"
	// EnvScenarios lists directories of the user's scenarios (separated by
	// ':'); EnvBuiltinScenarios=false leaves jobconform's catalog out.
	EnvScenarios        = "JOBCONFORM_SCENARIOS"
	EnvBuiltinScenarios = "JOBCONFORM_BUILTIN_SCENARIOS"
	// EnvFeatureGates sets feature gates on every component of a cluster the
	// harness creates, e.g. JobManagedBy=true (Name=bool, comma-separated).
	EnvFeatureGates = "JOBCONFORM_FEATURE_GATES"
	// EnvProgressFile receives the set-up's progress lines too (jobconform run
	// shows them while Ginkgo holds the suite's own output back).
	EnvProgressFile = "JOBCONFORM_PROGRESS_FILE"
	// EnvNodes chooses what plays the local provider's nodes: kwok (default)
	// or kubelet (real kubelets on containerd; needs root and Debian's
	// containerd, runc and busybox-static).
	EnvNodes = "JOBCONFORM_NODES"
)

// BadInput marks an error in what the user gave (a variable's value, an
// external command that does not run): jobconform run exits 2 on it.
type BadInput struct{ Err error }

// BadInputPrefix starts a BadInput's message, so that it can be told from
// a failure in a Ginkgo report.
const BadInputPrefix = "bad input: "

func (b BadInput) Error() string { return BadInputPrefix + b.Err.Error() }
func (b BadInput) Unwrap() error { return b.Err }

// Scenarios reads EnvScenarios and EnvBuiltinScenarios and loads the
// scenarios they name.
func Scenarios() (*catalog.Set, error) {
	builtin := true
	switch v := os.Getenv(EnvBuiltinScenarios); v {
	case "", "true":
	case "false":
		builtin = false
	default:
		return nil, BadInput{fmt.Errorf("%s=%q: write true or false", EnvBuiltinScenarios, v)}
	}
	var dirs []string
	for _, d := range filepath.SplitList(os.Getenv(EnvScenarios)) {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	if !builtin && len(dirs) == 0 {
		return nil, BadInput{fmt.Errorf("%s=false and no %s: there is no scenario to run", EnvBuiltinScenarios, EnvScenarios)}
	}
	set, err := catalog.Assemble(builtin, dirs...)
	if err != nil {
		return nil, BadInput{err}
	}
	return set, nil
}

// Options shape the set-up.
type Options struct {
	// Provider names the cluster provider (suites/cluster.Names); "" is local,
	// or existing when Cluster.Kubeconfig is set.
	Provider string
	// Cluster describes the cluster (release, extra flags, kubeconfig of an existing one).
	Cluster cluster.Config
	// Controllers are the controllers under test.
	Controllers []runner.Controller
	// ExternalCommand starts the external controller (KUBECONFIG set); "" means it already runs.
	ExternalCommand string
	// ReferenceFaults are injected into the reference controller under test (mutation testing).
	ReferenceFaults []string
	// Progress receives progress lines.
	Progress io.Writer
	// TempDir holds the reference controller's binary.
	TempDir string
	// ReferenceBinary is a reference controller executable to run instead of
	// building one from the module.
	ReferenceBinary string
	// ProgressFile, when set, receives the progress lines too.
	ProgressFile string
}

// OptionsFromEnv reads the JOBCONFORM_* variables.
func OptionsFromEnv() (Options, error) {
	o := Options{
		Provider:        os.Getenv(EnvProvider),
		Cluster:         cluster.Config{Version: os.Getenv(EnvVersion), Kubeconfig: os.Getenv(EnvKubeconfig), NodeKind: os.Getenv(EnvNodes)},
		ExternalCommand: os.Getenv(EnvExternalCommand),
		ReferenceBinary: os.Getenv(EnvReferenceBinary),
		ProgressFile:    os.Getenv(EnvProgressFile),
	}
	var err error
	if o.ReferenceFaults, err = referenceFaults(); err != nil {
		return o, BadInput{err}
	}
	if o.Cluster.FeatureGates, err = ParseGates(os.Getenv(EnvFeatureGates)); err != nil {
		return o, BadInput{fmt.Errorf("%s: %w", EnvFeatureGates, err)}
	}
	switch {
	case o.Cluster.Kubeconfig != "" && o.Provider == "":
		o.Provider = "existing"
	case o.Cluster.Kubeconfig != "" && o.Provider != "existing":
		return o, BadInput{fmt.Errorf("%s and %s=%s: choose one (an existing cluster, or one the harness creates)", EnvKubeconfig, EnvProvider, o.Provider)}
	}
	if _, ok := cluster.Providers[o.ProviderName()]; !ok {
		return o, BadInput{fmt.Errorf("%s=%q: use one of %s (or set %s for an existing cluster)", EnvProvider, o.Provider, strings.Join(cluster.Names(), ", "), EnvKubeconfig)}
	}
	switch o.Cluster.NodeKind {
	case "", cluster.NodesKwok:
	case cluster.NodesKubelet:
		if o.ProviderName() != "local" {
			return o, BadInput{fmt.Errorf("%s=%s is a setting of the local provider; the %s provider has the nodes it has", EnvNodes, o.Cluster.NodeKind, o.ProviderName())}
		}
	default:
		return o, BadInput{fmt.Errorf("%s=%q: use %s or %s", EnvNodes, o.Cluster.NodeKind, cluster.NodesKwok, cluster.NodesKubelet)}
	}
	if o.Controllers, err = controllersFromEnv(); err != nil {
		return o, BadInput{err}
	}
	return o, nil
}

// ParseGates reads feature gates written Name=true,Other=false.
func ParseGates(s string) (map[string]bool, error) {
	var gates map[string]bool
	for _, kv := range strings.Split(s, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" || (v != "true" && v != "false") {
			return nil, fmt.Errorf("feature gate %q: write Name=true or Name=false", kv)
		}
		if gates == nil {
			gates = map[string]bool{}
		}
		gates[k] = v == "true"
	}
	return gates, nil
}

// FormatGates writes gates as ParseGates reads them, in name order.
func FormatGates(gates map[string]bool) string {
	var out []string
	for k, v := range gates {
		out = append(out, fmt.Sprintf("%s=%t", k, v))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// ReportedSetup is how reports name the cluster o brings up beyond its
// release: "kubelet" for real kubelet nodes ("" for kwok or nodes the harness
// did not choose), and the feature gates it was given (FormatGates).
func (o Options) ReportedSetup() (nodes, gates string) {
	if o.Cluster.NodeKind == cluster.NodesKubelet {
		nodes = cluster.NodesKubelet
	}
	return nodes, FormatGates(o.Cluster.FeatureGates)
}

// ProviderName is the provider Setup uses.
func (o Options) ProviderName() string {
	if o.Provider == "" {
		return cluster.DefaultProvider
	}
	return o.Provider
}

// ControllersUnderTest reads JOBCONFORM_CONTROLLERS (default builtin,reference).
func ControllersUnderTest() ([]runner.Controller, error) { return controllersFromEnv() }

// referenceFaults reads JOBCONFORM_REFERENCE_FAULTS.
func referenceFaults() ([]string, error) {
	var out []string
	for _, name := range strings.Split(os.Getenv(EnvReferenceFaults), ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		if err := (controller.FaultSet{}).Set(name); err != nil {
			return nil, fmt.Errorf("%s: %w", EnvReferenceFaults, err)
		}
		out = append(out, name)
	}
	return out, nil
}

func controllersFromEnv() ([]runner.Controller, error) {
	faults, err := referenceFaults()
	if err != nil {
		return nil, err
	}
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
			ref := runner.Reference
			ref.Faults = faults // a mutant: its failures are the harness catching it
			out = append(out, ref)
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

// Env is a running set-up. Only the process that called Setup owns it.
type Env struct {
	Cluster    cluster.Cluster
	Kubeconfig string
	Version    string
	Reference  *controllers.Reference
	External   *process.Process
	// Pods is how the cluster's nodes need pods rendered; Nodes is "kubelet"
	// when the harness gave the local cluster kubelet nodes.
	Pods  pods.Target
	Nodes string
	// Gates are the feature gates the harness set on the cluster
	// (FormatGates), for reports: "" when it set none.
	Gates string
	// LogDir holds the controllers' logs (beside the cluster's).
	LogDir string

	referenceBinary string
}

// externalSettle is how long an external controller must keep running after
// its start for the set-up to go on.
const externalSettle = 3 * time.Second

// Setup brings up the cluster and the controllers under test. On error,
// whatever was started is stopped again.
func Setup(ctx context.Context, o Options) (_ *Env, err error) {
	e := &Env{}
	defer func() {
		if err != nil {
			_ = e.Stop()
		}
	}()
	if o.ProgressFile != "" {
		f, err := os.OpenFile(o.ProgressFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		o.Progress = io.MultiWriter(progress(o.Progress), f)
	}
	e.referenceBinary = o.ReferenceBinary
	cfg := o.Cluster
	cfg.Progress = o.Progress
	if e.Cluster, err = cluster.Create(ctx, o.ProviderName(), cfg); err != nil {
		return nil, err
	}
	e.Kubeconfig, e.Version, e.LogDir = e.Cluster.Kubeconfig(), e.Cluster.Version(), e.Cluster.LogDir()
	e.Pods = e.Cluster.Pods()
	e.Nodes, e.Gates = o.ReportedSetup()
	for _, c := range o.Controllers {
		if c.Name == runner.Reference.Name {
			if e.Reference, err = e.StartReference(ctx, o.TempDir, "", o.ReferenceFaults); err != nil {
				return nil, err
			}
		}
	}
	if cmd := o.ExternalCommand; cmd != "" {
		if err := os.MkdirAll(e.LogDir, 0o755); err != nil {
			return nil, err
		}
		e.External = process.New("external-controller", filepath.Join(e.LogDir, "external-controller.log"))
		// Not exec'd: cmd may be a compound command; Stop signals the whole group.
		e.External.SetCommand("/bin/sh", "-c", "KUBECONFIG='"+strings.ReplaceAll(e.Kubeconfig, "'", `'\''`)+"'; export KUBECONFIG\n"+cmd)
		if err := e.External.Start(); err != nil {
			return nil, BadInput{fmt.Errorf("%s: %w", EnvExternalCommand, err)}
		}
		// A controller runs until stopped: one that ends within its first
		// seconds was given a wrong command (or cannot reach the cluster).
		select {
		case <-e.External.Exited():
			return nil, BadInput{fmt.Errorf("the external controller's command exited at once: %s\n%s", cmd, e.External.DescribeExit())}
		case <-time.After(externalSettle):
		case <-ctx.Done():
			return nil, ctx.Err()
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
// (default: the reference's own) with faults injected. Where the provider can
// issue a user's kubeconfig it runs as the least-privilege user of
// controller/deploy/rbac.yaml, else with the admin kubeconfig.
func (e *Env) StartReference(ctx context.Context, dir, name string, faults []string) (*controllers.Reference, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	bin := e.referenceBinary
	if bin == "" {
		var err error
		if bin, err = controllers.BuildReference(ctx, dir); err != nil {
			return nil, err
		}
	}
	ref := &controllers.Reference{Binary: bin, Kubeconfig: e.Kubeconfig, LogDir: e.LogDir, Name: name, Faults: faults}
	switch kc, err := e.Cluster.UserKubeconfig(controllers.ReferenceUser); {
	case errors.Is(err, cluster.ErrUnsupported):
	case err != nil:
		return nil, err
	default:
		if err := controllers.GrantReference(ctx, e.Cluster.Client()); err != nil {
			return nil, err
		}
		ref.Kubeconfig = kc
	}
	if err := ref.Start(ctx); err != nil {
		return nil, err
	}
	return ref, nil
}

// Client connects to the cluster of kubeconfig, and tells its release.
func Client(kubeconfig, version string) (kubernetes.Interface, string, error) {
	rc, err := kube.LoadConfig(kubeconfig)
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
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

// Stop stops everything Setup started.
func (e *Env) Stop() error {
	var errs []error
	if e.External != nil {
		errs = append(errs, e.External.Stop(10*time.Second))
	}
	if e.Reference != nil {
		errs = append(errs, e.Reference.Stop())
	}
	if e.Cluster != nil {
		errs = append(errs, e.Cluster.Stop())
	}
	return errors.Join(errs...)
}

// SkipIfCannotRunContainers skips the calling Ginkgo node (a BeforeSuite: the
// whole suite) when err says the machine cannot run kubelet nodes: the specs
// did not run, which a skip says and a pass would hide.
func SkipIfCannotRunContainers(err error) {
	if errors.Is(err, cluster.ErrCannotRunContainers) {
		ginkgo.Skip("kubelet nodes: " + err.Error())
	}
}
