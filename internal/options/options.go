// Package options is jobconform's one configuration type. The flags of
// jobconform parse into Options; the environment is read here and nowhere
// else, as the flags' fallback; and the suites' Ginkgo processes receive the
// whole struct, serialized in one variable (Env), not a dozen. A setting
// added to Options reaches every suite process with no other file changed
// (TestEverySettingReachesTheSuites).
package options

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/semver"
)

// Env carries Options, as JSON, from jobconform to the suites' processes.
const Env = "JOBCONFORM_OPTIONS"

// What plays the local provider's nodes (Options.Nodes).
const (
	NodesKwok    = "kwok"
	NodesKubelet = "kubelet"
)

// Providers are the cluster providers' names (internal/cluster.Providers has
// one entry each; a test holds the two lists together).
var Providers = []string{"existing", "kind", "local"}

// Controllers under test, as --controllers names them.
var Controllers = []string{"builtin", "reference", "dispatcher", "multikueue", "external"}

// Dispatchers are the controllers of Controllers that run a Job on a
// second, worker cluster: judged by the conformance suite alone.
var Dispatchers = []string{"dispatcher", "multikueue"}

// Options is everything a run is told. Its zero value is not a default:
// take Defaults() or FromEnv().
type Options struct {
	// Version is the Kubernetes release of the cluster the harness creates
	// ("" with an existing cluster: its own).
	Version string `json:"version,omitempty"`
	// Provider names the cluster provider ("" is local, or existing when
	// Kubeconfig is set).
	Provider string `json:"provider,omitempty"`
	// Kubeconfig is an existing cluster's.
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// Nodes is what plays the local provider's nodes: NodesKwok or NodesKubelet.
	Nodes string `json:"nodes,omitempty"`
	// FeatureGates are set on every component of a cluster the harness creates.
	FeatureGates map[string]bool `json:"featureGates,omitempty"`

	// Controllers are the controllers under test (Controllers names them).
	Controllers []string `json:"controllers,omitempty"`
	// External describes the external controller under test.
	External External `json:"external,omitempty"`
	// ReferenceFaults name the mutants of the reference controller to run
	// in its place (internal/mutants; the command checks the names): what
	// make mutate runs.
	ReferenceFaults []string `json:"referenceFaults,omitempty"`
	// ReferenceBinary is a reference controller executable to run instead
	// of building one from the module.
	ReferenceBinary string `json:"referenceBinary,omitempty"`
	// DispatcherBinary is a reference dispatcher executable to run instead
	// of building one from the module.
	DispatcherBinary string `json:"dispatcherBinary,omitempty"`
	// KueueVersion is the Kueue release whose MultiKueue the multikueue
	// controller runs ("": the one known to build, k8sbin.KueueVersion).
	KueueVersion string `json:"kueueVersion,omitempty"`
	// Oracle is the differential verdict's: every controller's run of a
	// scenario compared with the built-in's at the same release.
	Oracle Oracle `json:"oracle,omitempty"`

	// ScenarioDirs hold the user's own scenario files.
	ScenarioDirs []string `json:"scenarioDirs,omitempty"`
	// BuiltinScenarios runs jobconform's own catalog too.
	BuiltinScenarios bool `json:"builtinScenarios"`
	// ChaosSeed seeds the chaos suite's random choices (nil: from the clock).
	ChaosSeed *uint64 `json:"chaosSeed,omitempty"`
	// ChaosEngine carries out the pod disruptions: ChaosEngines ("" is auto:
	// Chaos Mesh where its CRDs are installed, else jobconform's own).
	ChaosEngine string `json:"chaosEngine,omitempty"`
	// Existing is how a cluster given by --kubeconfig may be used.
	Existing Existing `json:"existing,omitempty"`

	// DrillPath, when set, flies that path of releases (v1,v2,...) with the
	// default drill's flights instead of the catalog's drills.
	DrillPath string `json:"drillPath,omitempty"`
	// Drills are the catalog drills to fly (default: DefaultDrills).
	Drills []string `json:"drills,omitempty"`
	// UnsupportedSkew allows a DrillPath the version-skew policy forbids.
	UnsupportedSkew bool `json:"unsupportedSkew,omitempty"`

	// Scale is the scale suite's form: ScaleForms ("" is the first).
	Scale string `json:"scale,omitempty"`

	// ProgressFile receives the set-up's progress lines too (jobconform run
	// shows them while Ginkgo holds a suite's own output back).
	ProgressFile string `json:"progressFile,omitempty"`

	// Run is what jobconform run does with the suites; a suite process
	// receives it too, and needs only its Shard.
	Run Run `json:"run"`
}

// DefaultPauseImage is what a pod-failure runs in place of a pod's
// containers on a cluster jobconform did not create (Chaos Mesh's own
// default is gcr.io/google-containers/pause:latest, no longer published).
const DefaultPauseImage = "registry.k8s.io/pause:3.10"

// ChaosEngines are the values of --chaos-engine.
var ChaosEngines = []string{"auto", "builtin", "chaos-mesh"}

// Existing is what jobconform may do on a cluster it did not create, and
// what its pods run there.
type Existing struct {
	// AllowNodeDisruption lets chaos cordon, drain and taint the cluster's
	// nodes and preempt pods on them: whatever else runs there is disturbed.
	AllowNodeDisruption bool `json:"allowNodeDisruption,omitempty"`
	// PodImage replaces busybox in the scenarios' pods (a mirror of it the
	// cluster can pull); PauseImage is what a pod-failure puts in place of
	// a container; HostNetwork puts the pods on their nodes' network (nodes
	// without a pod network, as `jobconform cluster --nodes kubelet`'s).
	PodImage    string `json:"podImage,omitempty"`
	PauseImage  string `json:"pauseImage,omitempty"`
	HostNetwork bool   `json:"hostNetwork,omitempty"`
}

// Run is the plan of jobconform run: which suites, at which releases,
// against whom, how wide, and where the reports go.
type Run struct {
	// ID names the run on the clusters it uses (kube.RunLabel on its
	// namespaces): set by jobconform run, not a flag.
	ID string `json:"id,omitempty"`
	// Versions are the releases the controllers under test are judged at,
	// each on clusters of its own (default: release.Default).
	Versions []string `json:"versions,omitempty"`
	// BuiltinAt are releases where the built-in controller alone is judged
	// (its own expectations), by the conformance and chaos suites.
	BuiltinAt []string `json:"builtinAt,omitempty"`
	// Suites are the suites to run (Suites names them).
	Suites []string `json:"suites,omitempty"`
	// LabelFilter and Focus select specs, as Ginkgo's flags of those names.
	LabelFilter string `json:"labelFilter,omitempty"`
	Focus       string `json:"focus,omitempty"`
	// FailFast stops a suite at its first failing spec (specs already
	// running end first): make mutate needs one catch per mutant, not all.
	FailFast bool `json:"failFast,omitempty"`
	// Baseline is an earlier run's artifacts directory (or its Ginkgo JSON
	// reports, comma-separated) to compare the verdicts with.
	Baseline string `json:"baseline,omitempty"`
	// Procs is the conformance suite's parallel processes, on one cluster;
	// ClusterProcs the chaos and drill suites', each spec on a cluster of
	// its own (that many clusters at once).
	Procs        int `json:"procs,omitempty"`
	ClusterProcs int `json:"clusterProcs,omitempty"`
	// Artifacts is the directory of the reports.
	Artifacts string `json:"artifacts,omitempty"`
	// Timeout bounds each suite run; 0: each suite's own limit
	// (SuiteTimeout).
	Timeout time.Duration `json:"timeout,omitempty"`
	// KubeletConformance runs the conformance suite again, at the first of
	// Versions, on kubelet nodes, and compares the two (the fidelity table).
	KubeletConformance bool `json:"kubeletConformance,omitempty"`
	// Shard ("K/N") runs the K-th of N parts of every suite's scenarios
	// (harness.InShard): the suite processes read it too. "": all.
	Shard string `json:"shard,omitempty"`
}

// ParseShard reads --shard K/N: 1 ≤ K ≤ N. "" is the whole (0, 0).
func ParseShard(s string) (k, n int, err error) {
	if s == "" {
		return 0, 0, nil
	}
	if _, err := fmt.Sscanf(s, "%d/%d", &k, &n); err != nil || fmt.Sprintf("%d/%d", k, n) != s || n < 1 || k < 1 || k > n {
		return 0, 0, fmt.Errorf("--shard %q: write K/N, the K-th of N shards (1 ≤ K ≤ N), e.g. 2/4", s)
	}
	return k, n, nil
}

// Suites are the suites jobconform knows, in the order it runs them.
var Suites = []string{"conformance", "chaos", "drill", "scale"}

// ScaleForms are the scale suite's sizes (scenarios/catalog.ScaleForms has
// one entry each): 1,000-pod Jobs on 100 kwok nodes, 10,000-pod Jobs on 1,000.
var ScaleForms = []string{"1k", "10k"}

// ScaleForm is the scale suite's form o asks for.
func (o Options) ScaleForm() string {
	if o.Scale == "" {
		return ScaleForms[0]
	}
	return o.Scale
}

// External is an external controller under test.
type External struct {
	// ManagedBy is its spec.managedBy value.
	ManagedBy string `json:"managedBy,omitempty"`
	// Command starts it (KUBECONFIG set); "" means it already runs.
	Command string `json:"command,omitempty"`
	// Finalizer is its pod tracking finalizer, if it uses one.
	Finalizer string `json:"finalizer,omitempty"`
}

// BadInputPrefix starts the message of a suite's failure that is the
// user's to fix (a setting, an external command that does not run):
// jobconform run reads it in the suites' reports and exits 2.
const BadInputPrefix = "bad input: "

// DefaultDrills are the drills flown when none is named.
var DefaultDrills = []string{"upgrade-downgrade-upgrade", "emulated-rollback"}

// Defaults are the settings of a run nobody configured.
func Defaults() Options {
	return Options{Controllers: []string{"builtin", "reference"}, BuiltinScenarios: true,
		Run: Run{
			Suites: []string{"conformance", "chaos"},
			// Conformance scenarios mostly wait on SIGTERM traps and backoffs,
			// so many more processes than cores pay off (2 cores: 12
			// processes 112 s, 24 processes 71 s, CPU under 70 %). Chaos
			// specs each bring up a cluster: 6 at once took 199 s, 12 were no
			// faster and every spec slower.
			Procs: 24, ClusterProcs: 6,
			Artifacts: Artifacts(),
		}}
}

// The suites' own time limits, when --timeout is not given: the scale
// suite's 10k form runs 11 Jobs of 10,000 pods one after the other, 15–30
// minutes each (2026-11-27: the completing Job 936–1,597 s, the suspended
// and resumed one over 25 minutes): 4–5 hours in all on two cores.
const (
	DefaultSuiteTimeout = 90 * time.Minute
	Scale10kTimeout     = 8 * time.Hour
)

// SuiteTimeout is the time limit of a run of suite: --timeout when given,
// else the suite's own.
func (o Options) SuiteTimeout(suite string) time.Duration {
	switch {
	case o.Run.Timeout > 0:
		return o.Run.Timeout
	case suite == "scale" && o.ScaleForm() == "10k":
		return Scale10kTimeout
	}
	return DefaultSuiteTimeout
}

// Oracle settles where the differential verdict's oracle comes from.
type Oracle struct {
	// Off skips the differential verdict (--no-oracle).
	Off bool `json:"off,omitempty"`
	// From is a directory of the built-in's observations kept by an
	// earlier run (<artifacts>/<release>/oracle): read, not run again.
	From string `json:"from,omitempty"`
	// Dir is where this run keeps the built-in's observations ("": a
	// temporary directory of the suite's).
	Dir string `json:"dir,omitempty"`
}

// The variables read when Env is not set: a suite run by go test or
// go tool ginkgo straight from a checkout.
const (
	envVersion          = "JOBCONFORM_K8S_VERSION"
	envProvider         = "JOBCONFORM_PROVIDER"
	envKubeconfig       = "JOBCONFORM_KUBECONFIG"
	envNodes            = "JOBCONFORM_NODES"
	envFeatureGates     = "JOBCONFORM_FEATURE_GATES"
	envControllers      = "JOBCONFORM_CONTROLLERS"
	envExternalName     = "JOBCONFORM_EXTERNAL_MANAGED_BY"
	envExternalCommand  = "JOBCONFORM_EXTERNAL_COMMAND"
	envExternalFinal    = "JOBCONFORM_EXTERNAL_FINALIZER"
	envReferenceFaults  = "JOBCONFORM_REFERENCE_FAULTS"
	envReferenceBinary  = "JOBCONFORM_REFERENCE_BINARY"
	envDispatcherBinary = "JOBCONFORM_DISPATCHER_BINARY"
	envKueueVersion     = "JOBCONFORM_KUEUE_VERSION"
	envNoOracle         = "JOBCONFORM_NO_ORACLE"
	envOracleFrom       = "JOBCONFORM_ORACLE_FROM"
	envScenarios        = "JOBCONFORM_SCENARIOS"
	envBuiltinScenarios = "JOBCONFORM_BUILTIN_SCENARIOS"
	envChaosSeed        = "JOBCONFORM_CHAOS_SEED"
	envDrillPath        = "JOBCONFORM_DRILL_PATH"
	envDrills           = "JOBCONFORM_DRILLS"
	envUnsupportedSkew  = "JOBCONFORM_UNSUPPORTED_SKEW"
	envProgressFile     = "JOBCONFORM_PROGRESS_FILE"
	envScale            = "JOBCONFORM_SCALE"

	// Settings of the machine rather than of a run, read where they are
	// used through CacheDir and ComponentGOMAXPROCS.
	envCacheDir   = "JOBCONFORM_CACHE_DIR"
	envBinaries   = "JOBCONFORM_BINARIES"
	envK8sURL     = "JOBCONFORM_KUBERNETES_DOWNLOAD_URL"
	envEtcdURL    = "JOBCONFORM_ETCD_DOWNLOAD_URL"
	envGoMaxProcs = "JOBCONFORM_COMPONENT_GOMAXPROCS"
	envArtifacts  = "ARTIFACTS"
)

// FromEnv is what the environment says: Options as jobconform serialized
// them (Env), else the JOBCONFORM_* variables over Defaults(). Errors name
// the variable to fix.
func FromEnv() (Options, error) {
	if s := os.Getenv(Env); s != "" {
		o, err := Decode(s)
		if err != nil {
			return o, fmt.Errorf("%s: %w", Env, err)
		}
		return o, nil
	}
	o := Defaults()
	var errs []error
	str := func(dst *string, name string) {
		if v := os.Getenv(name); v != "" {
			*dst = v
		}
	}
	list := func(dst *[]string, name, sep string) {
		if v := os.Getenv(name); v != "" {
			*dst = splitList(v, sep)
		}
	}
	boolean := func(dst *bool, name string) {
		switch v := os.Getenv(name); v {
		case "":
		case "true", "false":
			*dst = v == "true"
		default:
			errs = append(errs, fmt.Errorf("%s=%q: write true or false", name, v))
		}
	}
	str(&o.Version, envVersion)
	if o.Version != "" {
		o.Run.Versions = []string{o.Version}
	}
	str(&o.Provider, envProvider)
	str(&o.Kubeconfig, envKubeconfig)
	str(&o.Nodes, envNodes)
	if v := os.Getenv(envFeatureGates); v != "" {
		g, err := ParseGates(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", envFeatureGates, err))
		}
		o.FeatureGates = g
	}
	list(&o.Controllers, envControllers, ",")
	str(&o.External.ManagedBy, envExternalName)
	str(&o.External.Command, envExternalCommand)
	str(&o.External.Finalizer, envExternalFinal)
	list(&o.ReferenceFaults, envReferenceFaults, ",")
	str(&o.ReferenceBinary, envReferenceBinary)
	str(&o.DispatcherBinary, envDispatcherBinary)
	str(&o.KueueVersion, envKueueVersion)
	boolean(&o.Oracle.Off, envNoOracle)
	str(&o.Oracle.From, envOracleFrom)
	list(&o.ScenarioDirs, envScenarios, string(os.PathListSeparator))
	boolean(&o.BuiltinScenarios, envBuiltinScenarios)
	if v := os.Getenv(envChaosSeed); v != "" {
		seed, err := ParseSeed(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", envChaosSeed, err))
		}
		o.ChaosSeed = seed
	}
	str(&o.DrillPath, envDrillPath)
	list(&o.Drills, envDrills, ",")
	boolean(&o.UnsupportedSkew, envUnsupportedSkew)
	str(&o.ProgressFile, envProgressFile)
	str(&o.Scale, envScale)
	return o, errors.Join(errs...)
}

// Encode is o as Env carries it.
func (o Options) Encode() (string, error) {
	data, err := json.Marshal(o)
	return string(data), err
}

// Decode reads what Encode wrote; an unknown field is an error (a suite
// binary older than the jobconform that started it).
func Decode(s string) (Options, error) {
	var o Options
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return o, fmt.Errorf("not jobconform's options: %w", err)
	}
	return o, nil
}

// Environ is the variable to add to a suite process's environment.
func (o Options) Environ() (string, error) {
	s, err := o.Encode()
	return Env + "=" + s, err
}

// Validate checks o and fills what follows from it (the provider of a
// kubeconfig, the release's canonical form). Its errors name the flag.
func (o *Options) Validate() error {
	switch {
	case o.Kubeconfig != "" && o.Provider == "":
		o.Provider = "existing"
	case o.Kubeconfig != "" && o.Provider != "existing":
		return fmt.Errorf("--kubeconfig and --provider %s: choose one (an existing cluster, or one jobconform creates)", o.Provider)
	case o.Provider == "existing" && o.Kubeconfig == "":
		return errors.New("--provider existing needs --kubeconfig")
	}
	if o.Provider != "" && !slices.Contains(Providers, o.Provider) {
		return fmt.Errorf("--provider %q: use one of %s (or --kubeconfig for an existing cluster)", o.Provider, strings.Join(Providers, ", "))
	}
	switch o.Nodes {
	case "", NodesKwok:
	case NodesKubelet:
		if o.ProviderName() != "local" {
			return fmt.Errorf("--nodes kubelet is a setting of the local provider; the %s provider has the nodes it has", o.ProviderName())
		}
	default:
		return fmt.Errorf("--nodes %q: use %s or %s", o.Nodes, NodesKwok, NodesKubelet)
	}
	if o.ChaosEngine != "" && !slices.Contains(ChaosEngines, o.ChaosEngine) {
		return fmt.Errorf("--chaos-engine %q: use %s", o.ChaosEngine, strings.Join(ChaosEngines, ", "))
	}
	if o.ProviderName() != "existing" && o.ChaosEngine == "chaos-mesh" {
		return errors.New("--chaos-engine chaos-mesh needs a cluster where Chaos Mesh is installed, given by --kubeconfig: the clusters jobconform creates have none")
	}
	if o.ProviderName() != "existing" && o.Existing != (Existing{}) {
		return errors.New("--allow-node-disruption, --pod-image, --pause-image and --pod-host-network are for a cluster given by --kubeconfig: jobconform's own clusters run its own images and are its to disrupt")
	}
	if o.ProviderName() == "existing" {
		if o.Version != "" {
			return errors.New("--k8s-version and --kubeconfig: an existing cluster runs its own release; drop --k8s-version")
		}
		if len(o.FeatureGates) > 0 {
			return errors.New("--feature-gates and --kubeconfig: jobconform does not configure an existing cluster")
		}
	}
	if _, _, err := ParseShard(o.Run.Shard); err != nil {
		return err
	}
	if len(o.Controllers) == 0 {
		return fmt.Errorf("--controllers: name at least one of %s", strings.Join(Controllers, ", "))
	}
	for _, c := range o.Controllers {
		if !slices.Contains(Controllers, c) {
			return fmt.Errorf("--controllers: unknown controller %q (use %s)", c, strings.Join(Controllers, ", "))
		}
	}
	for _, d := range Dispatchers {
		if !slices.Contains(o.Controllers, d) {
			continue
		}
		if o.ProviderName() != "local" {
			return fmt.Errorf("--controllers %s brings up a worker cluster beside the manager; the %s provider cannot: use the local provider", d, o.ProviderName())
		}
		if len(o.Run.Suites) > 0 && !slices.Contains(o.Run.Suites, "conformance") {
			return fmt.Errorf("--controllers %s is judged by the conformance suite alone (chaos, drills and scale across clusters are not built yet): add conformance to --suites, or drop %s", d, d)
		}
		if o.Nodes == NodesKubelet {
			return fmt.Errorf("--controllers %s: its worker cluster has kwok nodes; drop --nodes kubelet, or %s (--kubelet-conformance runs without it)", d, d)
		}
	}
	if o.KueueVersion != "" {
		if !slices.Contains(o.Controllers, "multikueue") {
			return fmt.Errorf("--kueue-version %s without multikueue in --controllers: add it, or drop the version", o.KueueVersion)
		}
		if !semver.IsValid(o.KueueVersion) || semver.Canonical(o.KueueVersion) != o.KueueVersion {
			return fmt.Errorf("--kueue-version %q: give a Kueue release tag such as v0.17.0 (go list -m -versions sigs.k8s.io/kueue lists those the module proxy serves)", o.KueueVersion)
		}
	}
	if slices.Contains(o.Controllers, "external") && o.External.ManagedBy == "" {
		return errors.New("--controllers external: give --external-managed-by, the spec.managedBy value your controller answers to")
	}
	if o.External.Command != "" && !slices.Contains(o.Controllers, "external") {
		return errors.New("--external-command without external in --controllers: add it, or drop the command")
	}
	if o.Scale != "" && !slices.Contains(ScaleForms, o.Scale) {
		return fmt.Errorf("--scale %q: use %s", o.Scale, strings.Join(ScaleForms, " or "))
	}
	if slices.Contains(o.Run.Suites, "scale") {
		if o.ProviderName() != "local" {
			return fmt.Errorf("--suites scale brings up a local cluster of hundreds of kwok nodes and measures its processes; the %s provider cannot: drop scale from --suites", o.ProviderName())
		}
		if o.Nodes == NodesKubelet {
			return errors.New("--suites scale runs on kwok nodes (thousands of pods): drop --nodes kubelet, or scale from --suites")
		}
	}
	if !o.BuiltinScenarios && len(o.ScenarioDirs) == 0 {
		return errors.New("--builtin-scenarios=false and no --scenarios: there is no scenario to run")
	}
	return o.Run.validate(o.ProviderName())
}

// ResolveReleases names every release of o as resolve does (internal/release:
// "1.36" is v1.36.x, "previous" the minor before the default) and refuses one
// given twice. The caller passes resolve: the settings import no jobconform
// package, so every package may read them.
func (o *Options) ResolveReleases(resolve func(string) (string, error)) error {
	if o.Version != "" { // one suite process's release
		v, err := resolve(o.Version)
		if err != nil {
			return fmt.Errorf("--k8s-version: %w", err)
		}
		o.Version = v
	}
	seen := map[string]string{}
	for _, list := range []struct {
		flag string
		vs   []string
	}{{"--k8s-version", o.Run.Versions}, {"--builtin-at", o.Run.BuiltinAt}} {
		for i, v := range list.vs {
			if v == "" {
				return fmt.Errorf("%s: empty Kubernetes version", list.flag)
			}
			pv, err := resolve(v)
			if err != nil {
				return fmt.Errorf("%s: %w", list.flag, err)
			}
			if other, dup := seen[pv]; dup {
				return fmt.Errorf("%s %s: already given with %s", list.flag, pv, other)
			}
			seen[pv] = list.flag
			list.vs[i] = pv
		}
	}
	return nil
}

func (r *Run) validate(provider string) error {
	if provider == "existing" && (len(r.Versions) > 0 || len(r.BuiltinAt) > 0) {
		return errors.New("--k8s-version and --kubeconfig: an existing cluster runs its own release; drop --k8s-version")
	}
	if provider == "existing" && r.KubeletConformance {
		return errors.New("--kubelet-conformance and --kubeconfig: kubelet nodes are a setting of the local provider")
	}
	if len(r.Suites) == 0 {
		return fmt.Errorf("--suites: name at least one of %s", strings.Join(Suites, ", "))
	}
	for _, s := range r.Suites {
		if !slices.Contains(Suites, s) {
			return fmt.Errorf("--suites: unknown suite %q (use %s)", s, strings.Join(Suites, ", "))
		}
	}
	if r.KubeletConformance && !slices.Contains(r.Suites, "conformance") {
		return errors.New("--kubelet-conformance runs the conformance suite again: add conformance to --suites")
	}
	if r.Procs < 1 {
		return fmt.Errorf("--procs %d: give at least 1", r.Procs)
	}
	if r.ClusterProcs < 1 {
		return fmt.Errorf("--cluster-procs %d: give at least 1", r.ClusterProcs)
	}
	if r.Artifacts == "" {
		return errors.New("--artifacts: give a directory")
	}
	if r.Timeout < 0 {
		return fmt.Errorf("--timeout %s: give a positive duration (or none: each suite's own limit)", r.Timeout)
	}
	return nil
}

// ProviderName is the provider a run uses.
func (o Options) ProviderName() string {
	if o.Provider == "" {
		return "local"
	}
	return o.Provider
}

// ControllerNames are the names specs carry: builtin, reference, and the
// external controller's managedBy value.
func (o Options) ControllerNames() []string {
	var out []string
	for _, c := range o.Controllers {
		if c == "external" {
			c = o.External.ManagedBy
		}
		out = append(out, c)
	}
	return out
}

// AddClusterFlags binds the flags that describe a cluster to o: every
// command that brings one up takes them, under these names (--k8s-version
// is each command's own: one release, or several).
func (o *Options) AddClusterFlags(fs *flag.FlagSet) {
	AddBinariesFlag(fs)
	fs.StringVar(&o.Nodes, "nodes", o.Nodes, "what plays the local cluster's nodes: kwok (default) or kubelet (real kubelets on containerd: root and Debian's containerd, runc, busybox-static)")
	fs.Func("feature-gates", "feature gates for every component of the cluster, e.g. JobManagedBy=true (to judge a delegated controller on 1.31)", func(s string) error {
		g, err := ParseGates(s)
		o.FeatureGates = g
		return err
	})
}

// AddVersionsFlag binds the repeatable --k8s-version to o.Run.Versions.
func (o *Options) AddVersionsFlag(fs *flag.FlagSet, usage string) {
	given := false
	fs.Func("k8s-version", usage+" (repeatable; default: jobconform's default release)", func(s string) error {
		if !given { // the flags replace what the environment said
			o.Run.Versions, given = nil, true
		}
		o.Run.Versions = append(o.Run.Versions, s)
		return nil
	})
}

// AddFlags binds every flag of jobconform run to o.
func (o *Options) AddFlags(fs *flag.FlagSet) {
	o.AddClusterFlags(fs)
	o.AddVersionsFlag(fs, "Kubernetes release of the local clusters: each release is a run of its own")
	fs.Func("builtin-at", "also judge the built-in controller alone at this release, with the conformance and chaos suites (repeatable; \"previous\": the minor before the default release; empty: none)", func(s string) error {
		if s == "" {
			o.Run.BuiltinAt = nil
			return nil
		}
		o.Run.BuiltinAt = append(o.Run.BuiltinAt, s)
		return nil
	})
	fs.Func("suites", "suites to run, comma-separated: "+strings.Join(Suites, ", ")+" (default conformance,chaos)", func(s string) error {
		o.Run.Suites = splitList(s, ",")
		return nil
	})
	fs.StringVar(&o.Run.LabelFilter, "label-filter", o.Run.LabelFilter, "Ginkgo label filter over scenario features, e.g. 'podReplacementPolicy || suspend'")
	fs.StringVar(&o.Run.Focus, "focus", o.Run.Focus, "run only specs whose text matches this regular expression, as Ginkgo's --focus: the text is the suite's description, then the spec's, e.g. \"jobconform conformance conformance [reference] prp-failed-eviction\" (so anchor with $, not ^: 'reference.*eviction$')")
	fs.BoolVar(&o.Run.FailFast, "fail-fast", o.Run.FailFast, "stop each suite at its first failing spec (the specs already running end first)")
	fs.StringVar(&o.Run.Baseline, "baseline", o.Run.Baseline, "an earlier run's artifacts directory (or its Ginkgo JSON reports, comma-separated): say what newly fails, newly passes and got slower, in the terminal and summary.md")
	fs.IntVar(&o.Run.Procs, "procs", o.Run.Procs, "parallel Ginkgo processes of the conformance suite, on one cluster (at most 12 on kubelet nodes, where each pod is a real container)")
	fs.IntVar(&o.Run.ClusterProcs, "cluster-procs", o.Run.ClusterProcs, "parallel Ginkgo processes of the chaos and drill suites, each spec on a cluster of its own (that many clusters at once)")
	fs.StringVar(&o.Run.Artifacts, "artifacts", o.Run.Artifacts, "directory for JUnit, Ginkgo JSON, report.html and summary.md (default $ARTIFACTS or _artifacts)")
	fs.DurationVar(&o.Run.Timeout, "timeout", o.Run.Timeout, "time limit of each suite run (default: 90m; the scale suite's 10k form 8h)")
	fs.StringVar(&o.Run.Shard, "shard", o.Run.Shard, "run the K-th of N shards of every suite, e.g. 2/4: the scenarios split by their measured duration, the same way on every machine (the drill suite runs in shard 1); jobconform report merge joins the shards' reports")
	fs.BoolVar(&o.Run.KubeletConformance, "kubelet-conformance", o.Run.KubeletConformance, "run the conformance suite again on kubelet nodes at the first release, and write the fidelity table (kwok beside kubelet)")
	fs.StringVar(&o.Provider, "provider", o.Provider, "cluster provider: "+strings.Join(Providers, ", ")+" (default local; existing with --kubeconfig)")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "run on this existing cluster instead of creating one")
	fs.Func("controllers", "controllers under test, comma-separated: "+strings.Join(Controllers, ", ")+" (default builtin,reference)", func(s string) error {
		o.Controllers = splitList(s, ",")
		return nil
	})
	fs.StringVar(&o.KueueVersion, "kueue-version", o.KueueVersion, "with --controllers multikueue: the Kueue release to run, built from its Go module and cached (default: the release known to build here, which jobconform build --kueue default names)")
	fs.StringVar(&o.External.ManagedBy, "external-managed-by", o.External.ManagedBy, "the external controller's spec.managedBy value (with --controllers external)")
	fs.StringVar(&o.External.Command, "external-command", o.External.Command, "shell command that starts the external controller (KUBECONFIG is set to the cluster's; run from this directory); empty: it already runs")
	fs.StringVar(&o.External.Finalizer, "external-finalizer", o.External.Finalizer, "the external controller's pod tracking finalizer, if it uses one")
	fs.BoolVar(&o.Oracle.Off, "no-oracle", o.Oracle.Off, "skip the differential verdict (each controller's run compared with the built-in's of the same scenario and release; the built-in is run for it when it is not under test)")
	fs.StringVar(&o.Oracle.From, "oracle-from", o.Oracle.From, "read the built-in's runs from this directory (an earlier run's <artifacts>/<release>/oracle) instead of running it")
	fs.Func("reference-faults", "run the reference controller broken by these mutants of internal/mutants (comma-separated; built from the checkout): what jobconform mutate does", func(s string) error {
		o.ReferenceFaults = splitList(s, ",")
		return nil
	})
	o.AddScenarioFlags(fs)
	fs.Func("chaos-seed", "seed of the chaos suite's random choices (default: from the clock; printed)", func(s string) error {
		seed, err := ParseSeed(s)
		o.ChaosSeed = seed
		return err
	})
	fs.StringVar(&o.ChaosEngine, "chaos-engine", o.ChaosEngine, "what carries out the chaos suite's pod kills and pod failures: chaos-mesh (as PodChaos experiments; its CRDs and controller must be installed), builtin (jobconform's own API calls), or auto (default: chaos-mesh where its CRDs are installed)")
	fs.BoolVar(&o.Existing.AllowNodeDisruption, "allow-node-disruption", o.Existing.AllowNodeDisruption, "with --kubeconfig: let chaos cordon, drain and taint the cluster's nodes and preempt pods there, disturbing whatever else runs on them (restored after each scenario); without it those scenarios are not applicable")
	fs.StringVar(&o.Existing.PodImage, "pod-image", o.Existing.PodImage, "with --kubeconfig: the image the scenarios' pods run instead of busybox (a busybox your cluster can pull)")
	fs.StringVar(&o.Existing.PauseImage, "pause-image", o.Existing.PauseImage, "with --kubeconfig: the image a pod-failure puts in place of a pod's containers (default "+DefaultPauseImage+")")
	fs.BoolVar(&o.Existing.HostNetwork, "pod-host-network", o.Existing.HostNetwork, "with --kubeconfig: run the scenarios' pods on their nodes' network (nodes without a pod network, such as jobconform cluster --nodes kubelet's)")
	fs.StringVar(&o.DrillPath, "drill-path", o.DrillPath, "drill suite: fly this path of releases (e.g. v1.36.3,v1.37.1,v1.36.3,v1.37.1) with the default drill's flights")
	fs.Func("drills", "drill suite: the catalog's drills to fly, comma-separated (default "+strings.Join(DefaultDrills, ",")+")", func(s string) error {
		o.Drills = splitList(s, ",")
		return nil
	})
	fs.BoolVar(&o.UnsupportedSkew, "unsupported-skew", o.UnsupportedSkew, "drill suite: allow a --drill-path the version-skew policy forbids (labelled so)")
	fs.StringVar(&o.Scale, "scale", o.Scale, "scale suite: 1k (1,000-pod Jobs on 100 kwok nodes; default) or 10k (10,000-pod Jobs on 1,000 nodes)")
}

// AddScenarioFlags binds the flags that choose the scenarios to o.
func (o *Options) AddScenarioFlags(fs *flag.FlagSet) {
	given := false
	fs.Func("scenarios", "directory of your own scenario files (*.yaml; repeatable)", func(s string) error {
		if !given { // the flags replace what the environment said
			o.ScenarioDirs, given = nil, true
		}
		o.ScenarioDirs = append(o.ScenarioDirs, s)
		return nil
	})
	fs.BoolVar(&o.BuiltinScenarios, "builtin-scenarios", o.BuiltinScenarios, "use jobconform's own catalog too (false: only --scenarios)")
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

// ParseSeed reads a chaos seed ("" is none).
func ParseSeed(s string) (*uint64, error) {
	if s == "" {
		return nil, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("chaos seed %q: give an unsigned integer", s)
	}
	return &n, nil
}

// CacheDir is where built binaries are kept: $JOBCONFORM_CACHE_DIR, else
// the user's cache directory. It is outside any checkout so that fresh
// clones and CI on the same machine reuse it.
func CacheDir() (string, error) {
	if d := os.Getenv(envCacheDir); d != "" {
		return filepath.Abs(d)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory (%v): set %s to a writable directory", err, envCacheDir)
	}
	return filepath.Join(d, "jobconform"), nil
}

// Binaries says where the Kubernetes and etcd binaries come from.
type Binaries struct {
	// Source: "build" (from their Go modules, the default), "download" (the
	// official release binaries, their published checksums verified) or
	// "auto" (download, else build).
	Source string
	// KubernetesURL serves <version>/bin/<os>/<arch>/<binary> and its
	// .sha256, as https://dl.k8s.io/release does; EtcdURL serves
	// <version>/etcd-<version>-<os>-<arch>.tar.gz and <version>/SHA256SUMS,
	// as etcd's GitHub releases do.
	KubernetesURL, EtcdURL string
}

// The official download sites (Binaries' defaults).
const (
	KubernetesDownloads = "https://dl.k8s.io/release"
	EtcdDownloads       = "https://github.com/etcd-io/etcd/releases/download"
)

// BinarySources are the values of --binaries and $JOBCONFORM_BINARIES.
var BinarySources = []string{"build", "download", "auto"}

// BinariesFromEnv is where binaries come from: $JOBCONFORM_BINARIES, with
// $JOBCONFORM_KUBERNETES_DOWNLOAD_URL and $JOBCONFORM_ETCD_DOWNLOAD_URL (a
// mirror laid out like the official sites), else building them. A setting
// of the machine, as the cache is: whether it can reach the download sites.
func BinariesFromEnv() (Binaries, error) {
	b := Binaries{Source: "build", KubernetesURL: KubernetesDownloads, EtcdURL: EtcdDownloads}
	if v := os.Getenv(envBinaries); v != "" {
		if !slices.Contains(BinarySources, v) {
			return b, fmt.Errorf("%s=%q: write one of %s", envBinaries, v, strings.Join(BinarySources, ", "))
		}
		b.Source = v
	}
	for _, u := range []struct {
		dst  *string
		name string
	}{{&b.KubernetesURL, envK8sURL}, {&b.EtcdURL, envEtcdURL}} {
		if v := os.Getenv(u.name); v != "" {
			if p, err := url.Parse(v); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
				return b, fmt.Errorf("%s=%q: give an http(s) URL", u.name, v)
			}
			*u.dst = strings.TrimSuffix(v, "/")
		}
	}
	return b, nil
}

// AddBinariesFlag binds --binaries: it sets $JOBCONFORM_BINARIES, so that
// every process of the run (suites, clusters) gets its binaries alike.
func AddBinariesFlag(fs *flag.FlagSet) {
	fs.Func("binaries", "where the Kubernetes and etcd binaries come from: build (from Go modules; default), download (official release binaries, checksums verified; $"+envK8sURL+" and $"+envEtcdURL+" name a mirror) or auto (download, else build)", func(s string) error {
		if !slices.Contains(BinarySources, s) {
			return fmt.Errorf("%q: want one of %s", s, strings.Join(BinarySources, ", "))
		}
		return os.Setenv(envBinaries, s)
	})
}

// ComponentGOMAXPROCS is GOMAXPROCS for the Go components the harness runs
// ($JOBCONFORM_COMPONENT_GOMAXPROCS; 0: the Go runtime's default).
func ComponentGOMAXPROCS() (int, error) {
	v := os.Getenv(envGoMaxProcs)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a whole number of Ps for each component (0: the Go runtime's default, one per core)", envGoMaxProcs, v)
	}
	return n, nil
}

// Artifacts is where reports go by default: $ARTIFACTS, else _artifacts.
func Artifacts() string {
	if a := os.Getenv(envArtifacts); a != "" {
		return a
	}
	return "_artifacts"
}

func splitList(s, sep string) []string {
	var out []string
	for _, x := range strings.Split(s, sep) {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}
