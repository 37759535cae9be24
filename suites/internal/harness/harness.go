// Package harness brings up what a controller suite judges against: a
// cluster from a provider of internal/cluster, the reference controller when it
// is under test, and an external controller when the user gives its command.
// The suites share it. Its configuration is explicit (Options), derived from
// what the suite process was told (Settings: internal/options, read once).
package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/onsi/ginkgo/v2"

	"github.com/jobconform/jobconform/internal/cluster"
	"github.com/jobconform/jobconform/internal/k8sbin"
	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/internal/mutants"
	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/pods"
	"github.com/jobconform/jobconform/internal/process"
	"github.com/jobconform/jobconform/internal/release"
	"github.com/jobconform/jobconform/scenarios/catalog"
	"github.com/jobconform/jobconform/suites/internal/controllers"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

// BadInput marks an error in what the user gave (a setting's value, an
// external command that does not run): jobconform run exits 2 on it.
type BadInput struct{ Err error }

func (b BadInput) Error() string { return options.BadInputPrefix + b.Err.Error() }
func (b BadInput) Unwrap() error { return b.Err }

var settings struct {
	once sync.Once
	o    options.Options
	err  error
}

// Settings are what this suite process was told (options.FromEnv), read
// once, its releases resolved and checked: a BadInput when they do not hold.
func Settings() (options.Options, error) {
	settings.once.Do(func() {
		o, err := options.FromEnv()
		if err == nil {
			err = o.ResolveReleases(release.Resolve)
		}
		if err == nil {
			err = o.Validate()
		}
		settings.o, settings.err = o, err
	})
	if settings.err != nil {
		return settings.o, BadInput{settings.err}
	}
	return settings.o, nil
}

// RunID names the jobconform run this suite process is part of ("" when
// the suite runs on its own): its namespaces carry it (kube.RunLabel).
func RunID() string {
	st, _ := Settings() // an error was reported where the settings were first read
	return st.Run.ID
}

// Scenarios loads the scenarios the settings name.
func Scenarios() (*catalog.Set, error) {
	o, err := Settings()
	if err != nil {
		return nil, err
	}
	set, err := catalog.Assemble(o.BuiltinScenarios, o.ScenarioDirs...)
	if err != nil {
		return nil, BadInput{err}
	}
	return set, nil
}

// Options shape the set-up.
type Options struct {
	// Provider names the cluster provider (internal/cluster.Names); "" is local,
	// or existing when Cluster.Kubeconfig is set.
	Provider string
	// Cluster describes the cluster (release, extra flags, kubeconfig of an existing one).
	Cluster cluster.Config
	// Controllers are the controllers under test.
	Controllers []runner.Controller
	// ExternalCommand starts the external controller (KUBECONFIG set); "" means it already runs.
	ExternalCommand string
	// ReferenceFaults name the mutants (internal/mutants) the reference
	// controller under test is broken by: ReferenceBinary is that mutant,
	// or it is built here (mutation testing).
	ReferenceFaults []string
	// Progress receives progress lines.
	Progress io.Writer
	// TempDir holds the reference controller's binary.
	TempDir string
	// ReferenceBinary is a reference controller executable to run instead of
	// building one from the module.
	ReferenceBinary string
	// DispatcherBinary is a reference dispatcher executable to run instead
	// of building one from the module.
	DispatcherBinary string
	// ProgressFile, when set, receives the progress lines too.
	ProgressFile string
	// KueueVersion is the Kueue release of the multikueue controller ("":
	// k8sbin.KueueVersion).
	KueueVersion string
	// ReferenceName is the spec.managedBy value the reference controller
	// answers to ("": its own): on a cluster shared by specs, each its own.
	ReferenceName string
	// AllowNodeDisruption lets chaos disturb the nodes of a cluster given by
	// --kubeconfig (options.Existing).
	AllowNodeDisruption bool
	// ChaosEngine is --chaos-engine ("" is auto).
	ChaosEngine string
}

// OptionsFromEnv is the set-up the settings (Settings) ask for.
func OptionsFromEnv() (Options, error) {
	st, err := Settings()
	if err != nil {
		return Options{}, err
	}
	return OptionsOf(st), nil
}

// OptionsOf is the set-up st asks for; st has passed Validate.
func OptionsOf(st options.Options) Options {
	return Options{
		Provider: st.ProviderName(),
		Cluster: cluster.Config{Version: st.Version, Kubeconfig: st.Kubeconfig, NodeKind: st.Nodes, FeatureGates: st.FeatureGates, Artifacts: st.Run.Artifacts,
			CoverDir: options.CoverCounters(st),
			Pods:     pods.Target{Image: st.Existing.PodImage, PauseImage: st.Existing.PauseImage, HostNetwork: st.Existing.HostNetwork}},
		Controllers:         controllersOf(st),
		ExternalCommand:     st.External.Command,
		ReferenceFaults:     st.ReferenceFaults,
		ReferenceBinary:     st.ReferenceBinary,
		DispatcherBinary:    st.DispatcherBinary,
		ProgressFile:        st.ProgressFile,
		KueueVersion:        st.KueueVersion,
		AllowNodeDisruption: st.Existing.AllowNodeDisruption,
		ChaosEngine:         st.ChaosEngine,
	}
}

// ReportedSetup is how reports name the cluster o brings up beyond its
// release: "kubelet" for real kubelet nodes ("" for kwok or nodes the harness
// did not choose), and the feature gates it was given (FormatGates).
func (o Options) ReportedSetup() (nodes, gates string) {
	if o.Cluster.NodeKind == cluster.NodesKubelet {
		nodes = cluster.NodesKubelet
	}
	return nodes, options.FormatGates(o.Cluster.FeatureGates)
}

// ProviderName is the provider Setup uses.
func (o Options) ProviderName() string {
	if o.Provider == "" {
		return cluster.DefaultProvider
	}
	return o.Provider
}

// ControllersUnderTest are the controllers the settings name.
func ControllersUnderTest() ([]runner.Controller, error) {
	st, err := Settings()
	if err != nil {
		return nil, err
	}
	return controllersOf(st), nil
}

func controllersOf(st options.Options) []runner.Controller {
	var out []runner.Controller
	for _, n := range st.Controllers {
		switch n {
		case "builtin":
			out = append(out, runner.BuiltIn)
		case "reference":
			ref := runner.Reference
			ref.Faults = st.ReferenceFaults // a mutant: its failures are the harness catching it
			out = append(out, ref)
		case "dispatcher":
			out = append(out, runner.Dispatcher)
		case "multikueue":
			mk := runner.MultiKueue
			mk.Release = cmp.Or(st.KueueVersion, k8sbin.KueueVersion)
			out = append(out, mk)
		case "external":
			mb := st.External.ManagedBy
			ext := runner.Controller{Name: mb, ManagedBy: ptr.To(mb), Finalizer: st.External.Finalizer}
			if st.External.Command != "" { // started by the harness, as a user of its own where the cluster makes users
				ext.User = controllers.ExternalUser
			}
			out = append(out, ext)
		}
	}
	return out
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
	// Worker is the worker cluster of a dispatcher under test
	// (runner.Controller.Dispatched), Dispatcher the reference dispatcher
	// between the cluster above (the manager) and it.
	Worker           cluster.Cluster
	WorkerKubeconfig string
	Dispatcher       *controllers.Dispatcher
	// Kueues are Kueue's managers on the manager and the worker cluster
	// when MultiKueue is under test.
	Kueues []*controllers.Kueue
	// AuditLog is the apiserver's log of the built-in's and the reference
	// controller's requests, where the provider keeps one (the local one;
	// "" elsewhere): runner.Options.AuditLog.
	AuditLog string

	referenceBinary, dispatcherBinary string
	allowNodeDisruption               bool
	chaosEngine                       string
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
	w, closeProgress, err := OpenProgress(o.ProgressFile, o.Progress)
	if err != nil {
		return nil, err
	}
	defer closeProgress()
	o.Progress = w
	e.referenceBinary, e.dispatcherBinary = o.ReferenceBinary, o.DispatcherBinary
	e.allowNodeDisruption, e.chaosEngine = o.AllowNodeDisruption, o.ChaosEngine
	cfg := o.Cluster
	cfg.Progress = o.Progress
	if len(cfg.AuditUsers) == 0 { // the requests the differential verdict compares
		cfg.AuditUsers = []string{kube.JobControllerUser, controllers.ReferenceUser, controllers.ExternalUser}
	}
	if e.Cluster, err = cluster.Create(ctx, o.ProviderName(), cfg); err != nil {
		return nil, err
	}
	if acct, ok := e.Cluster.(cluster.Accounting); ok {
		e.AuditLog = acct.AuditLog()
	}
	e.Kubeconfig, e.Version, e.LogDir = e.Cluster.Kubeconfig(), e.Cluster.Version(), e.Cluster.LogDir()
	e.Pods = e.Cluster.Pods()
	e.Nodes, e.Gates = o.ReportedSetup()
	if e.Cluster.Provider() == "existing" {
		if e.Nodes, err = NodeKind(ctx, e.Cluster.Client()); err != nil {
			return nil, err
		}
	}
	for _, c := range o.Controllers {
		if c.Name == runner.Reference.Name {
			start := func() (*controllers.Reference, error) { return e.StartReference(ctx, o.TempDir, o.ReferenceName) }
			if len(o.ReferenceFaults) > 0 && o.ReferenceBinary == "" {
				fmt.Fprintf(progress(o.Progress), "building the reference controller broken by %s\n", strings.Join(o.ReferenceFaults, ", "))
				start = func() (*controllers.Reference, error) { return e.StartMutant(ctx, o.TempDir, "", o.ReferenceFaults) }
			}
			if e.Reference, err = start(); err != nil {
				return nil, err
			}
		}
		if c.Dispatched && e.Worker == nil {
			if err := e.startWorker(ctx, o, cfg); err != nil {
				return nil, err
			}
		}
		switch c.Name {
		case runner.Dispatcher.Name:
			if e.Dispatcher, err = e.StartDispatcher(ctx, o.TempDir, "", nil); err != nil {
				return nil, err
			}
			fmt.Fprintf(progress(o.Progress), "reference dispatcher started between the cluster and the worker (log in %s)\n", e.LogDir)
		case runner.MultiKueue.Name:
			if err := e.startMultiKueue(ctx, o); err != nil {
				return nil, err
			}
		}
	}
	if cmd := o.ExternalCommand; cmd != "" {
		kc, err := e.externalKubeconfig(ctx)
		if err != nil {
			return nil, err
		}
		if e.External, err = StartCommand(ctx, kc, cmd, filepath.Join(e.LogDir, "external-controller.log")); err != nil {
			return nil, err
		}
		fmt.Fprintf(progress(o.Progress), "external controller started: %s (log %s)\n", cmd, e.External.LogPath)
	}
	return e, nil
}

// externalKubeconfig is what the external controller is started with: the
// kubeconfig of a cluster admin of its own (controllers.ExternalUser),
// where the cluster makes users, else the cluster's.
func (e *Env) externalKubeconfig(ctx context.Context) (string, error) {
	kc, err := e.Cluster.UserKubeconfig(controllers.ExternalUser)
	switch {
	case errors.Is(err, cluster.ErrUnsupported):
		return e.Kubeconfig, nil
	case err != nil:
		return "", err
	}
	return kc, controllers.GrantAdmin(ctx, e.Cluster.Client(), controllers.ExternalUser)
}

// NodeKind is "kubelet" when a node of the cluster is not kwok's (the
// reports' and the scenarios' `nodes`), "" when all are.
func NodeKind(ctx context.Context, c kubernetes.Interface) (string, error) {
	list, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("list the cluster's nodes: %w", err)
	}
	for _, n := range list.Items {
		if n.Annotations["kwok.x-k8s.io/node"] != "fake" {
			return cluster.NodesKubelet, nil
		}
	}
	return "", nil
}

// StartCommand starts a controller with a shell command, KUBECONFIG set to
// kubeconfig, its output in logPath. A controller runs until stopped: one
// that ends within its first seconds was given a wrong command (or cannot
// reach the cluster), a BadInput. Stop the process it returns.
func StartCommand(ctx context.Context, kubeconfig, cmd, logPath string) (*process.Process, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	p := process.New("external-controller", logPath)
	// Not exec'd: cmd may be a compound command; Stop signals the whole group.
	p.SetCommand("/bin/sh", "-c", "KUBECONFIG='"+strings.ReplaceAll(kubeconfig, "'", `'\''`)+"'; export KUBECONFIG\n"+cmd)
	if err := p.Start(); err != nil {
		return nil, BadInput{fmt.Errorf("the external controller's command: %w", err)}
	}
	select {
	case <-p.Exited():
		return nil, BadInput{fmt.Errorf("the external controller's command exited at once: %s\n%s", cmd, p.DescribeExit())}
	case <-time.After(externalSettle):
		return p, nil
	case <-ctx.Done():
		_ = p.Stop(5 * time.Second)
		return nil, ctx.Err()
	}
}

// OpenProgress adds the progress file path (jobconform run shows it as it
// grows; "" when a suite runs on its own) to also, which may be nil.
func OpenProgress(path string, also io.Writer) (io.Writer, func() error, error) {
	if path == "" {
		return progress(also), func() error { return nil }, nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("the progress file: %w", err)
	}
	return io.MultiWriter(progress(also), f), f.Close, nil
}

func progress(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// StartReference builds and starts a reference controller answering to name
// (default: the reference's own). Where the provider can issue a user's
// kubeconfig it runs as the least-privilege user of
// controller/deploy/rbac.yaml, else with the admin kubeconfig.
func (e *Env) StartReference(ctx context.Context, dir, name string) (*controllers.Reference, error) {
	return e.StartReferenceWith(ctx, dir, controllers.Reference{Name: name})
}

// StartMutant is StartReference of the reference controller broken by the
// named mutants (internal/mutants), built into dir from the checkout; an
// error wrapping mutants.ErrNoSource where there is none.
func (e *Env) StartMutant(ctx context.Context, dir, name string, faults []string) (*controllers.Reference, error) {
	ms, err := mutants.LookupAll(faults)
	if err != nil {
		return nil, err
	}
	if dir == "" {
		dir = os.TempDir()
	}
	if dir, err = os.MkdirTemp(dir, "mutant-"); err != nil {
		return nil, err
	}
	bin, err := mutants.Build(ctx, dir, ms...)
	if err != nil {
		return nil, err
	}
	return e.StartReferenceWith(ctx, dir, controllers.Reference{Name: name, Binary: bin})
}

// StartReferenceWith is StartReference of a controller shaped as want says
// (its Name, MaxPodsPerSync, User, and Binary where given); the kubeconfig,
// logs and else the binary are the Env's.
func (e *Env) StartReferenceWith(ctx context.Context, dir string, want controllers.Reference) (*controllers.Reference, error) {
	bin := want.Binary
	if bin == "" {
		var err error
		if bin, err = binary(ctx, e.referenceBinary, dir, controllers.BuildReference); err != nil {
			return nil, err
		}
	}
	ref := &controllers.Reference{Binary: bin, Kubeconfig: e.Kubeconfig, LogDir: e.LogDir, Name: want.Name, MaxPodsPerSync: want.MaxPodsPerSync}
	user := want.User
	if user == "" {
		user = controllers.ReferenceUser
	}
	switch kc, err := e.Cluster.UserKubeconfig(user); {
	case errors.Is(err, cluster.ErrUnsupported):
	case err != nil:
		return nil, err
	default:
		if err := controllers.GrantReference(ctx, e.Cluster.Client(), user); err != nil {
			return nil, err
		}
		ref.Kubeconfig = kc
	}
	if err := ref.Start(ctx); err != nil {
		return nil, err
	}
	return ref, nil
}

// binary is given, or else what build makes in dir (the temporary
// directory when "").
func binary(ctx context.Context, given, dir string, build func(context.Context, string) (string, error)) (string, error) {
	if given != "" {
		return given, nil
	}
	if dir == "" {
		dir = os.TempDir()
	}
	return build(ctx, dir)
}

// Metrics reads the /metrics of controller c: the controller-manager's for
// the built-in one (where the provider reaches it), the reference
// controller's; an error wrapping runner.ErrNoMetrics when it cannot.
func (e *Env) Metrics(ctx context.Context, c runner.Controller) (string, error) {
	switch {
	case c.Name == runner.BuiltIn.Name:
		text, err := e.Cluster.Metrics(ctx, cluster.ControllerManager)
		if errors.Is(err, cluster.ErrUnsupported) {
			return "", fmt.Errorf("%w: %v", runner.ErrNoMetrics, err)
		}
		return text, err
	case c.Name == runner.Reference.Name && e.Reference != nil:
		return e.Reference.Metrics(ctx)
	}
	return "", fmt.Errorf("%w: the harness does not know where %s serves them", runner.ErrNoMetrics, c.Name)
}

// startWorker brings up the worker cluster of a dispatcher under test (the
// manager's release and gates, kwok nodes).
func (e *Env) startWorker(ctx context.Context, o Options, cfg cluster.Config) (err error) {
	cfg.Name, cfg.NodeKind = "jobconform-worker", cluster.NodesKwok
	fmt.Fprintln(progress(o.Progress), "bringing up the worker cluster of the dispatcher under test")
	if e.Worker, err = cluster.Create(ctx, o.ProviderName(), cfg); err != nil {
		return fmt.Errorf("the worker cluster: %w", err)
	}
	e.WorkerKubeconfig = e.Worker.Kubeconfig()
	return nil
}

// startMultiKueue builds Kueue (cached), installs its CRDs on both
// clusters, runs a Kueue manager for each, and creates the MultiKueue
// objects, up to the worker being Active.
func (e *Env) startMultiKueue(ctx context.Context, o Options) error {
	set, err := (&k8sbin.Builder{Progress: progress(o.Progress)}).EnsureKueue(ctx, o.KueueVersion)
	if err != nil {
		return err
	}
	var dyn [2]dynamic.Interface
	for i, kc := range []string{e.Kubeconfig, e.WorkerKubeconfig} {
		if dyn[i], err = controllers.Dynamic(kc); err != nil {
			return err
		}
		if err := controllers.InstallKueueCRDs(ctx, dyn[i], set.CRDDir); err != nil {
			return err
		}
	}
	for _, k := range []*controllers.Kueue{{Name: "manager", Kubeconfig: e.Kubeconfig}, {Name: "worker", Kubeconfig: e.WorkerKubeconfig}} {
		k.Binary, k.LogDir = set.Manager, e.LogDir
		if err := k.Start(ctx); err != nil {
			return err
		}
		e.Kueues = append(e.Kueues, k)
	}
	for i, k := range e.Kueues {
		if err := k.RegisterWebhooks(ctx, dyn[i], set.Webhooks); err != nil {
			return err
		}
	}
	if err := controllers.SetUpMultiKueue(ctx, dyn[0], dyn[1], e.WorkerKubeconfig); err != nil {
		return err
	}
	fmt.Fprintf(progress(o.Progress), "Kueue %s's MultiKueue running: the manager's Kueue dispatches to the worker's (logs in %s)\n", set.Version, e.LogDir)
	return nil
}

// PrepareNamespace readies namespace ns on both clusters for controller c:
// MultiKueue's LocalQueue; nil for the others.
func PrepareNamespace(c runner.Controller, kubeconfig, workerKubeconfig string) func(context.Context, string) error {
	if c.Name != runner.MultiKueue.Name {
		return nil
	}
	return func(ctx context.Context, ns string) error {
		for _, kc := range []string{kubeconfig, workerKubeconfig} {
			dc, err := controllers.Dynamic(kc)
			if err != nil {
				return err
			}
			if err := controllers.KueueNamespace(ctx, dc, ns); err != nil {
				return err
			}
		}
		return nil
	}
}

// StartDispatcher builds and starts a reference dispatcher between the
// cluster and the worker cluster, answering to name (default its own), with
// faults injected.
func (e *Env) StartDispatcher(ctx context.Context, dir, name string, faults []string) (*controllers.Dispatcher, error) {
	if e.Worker == nil {
		return nil, errors.New("a dispatcher needs the worker cluster: put dispatcher in --controllers")
	}
	bin, err := binary(ctx, e.dispatcherBinary, dir, controllers.BuildDispatcher)
	if err != nil {
		return nil, err
	}
	d := &controllers.Dispatcher{Binary: bin, ManagerKubeconfig: e.Kubeconfig, WorkerKubeconfig: e.WorkerKubeconfig, LogDir: e.LogDir, Name: name, Faults: faults}
	if err := d.Start(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// Stop stops everything Setup started.
func (e *Env) Stop() error {
	var errs []error
	if e.Dispatcher != nil {
		errs = append(errs, e.Dispatcher.Stop())
	}
	for _, k := range e.Kueues {
		errs = append(errs, k.Stop())
	}
	if e.Worker != nil {
		errs = append(errs, e.Worker.Stop())
	}
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
