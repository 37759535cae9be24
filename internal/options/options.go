// Package options is jobconform's one configuration type. The flags of
// jobconform parse into Options; the environment is read here and nowhere
// else, as the flags' fallback; and the suites' Ginkgo processes receive the
// whole struct, serialized in one variable (Env), not a dozen. A setting
// added to Options reaches every suite process with no other file changed
// (TestEverySettingReachesTheSuites).
//
// A file per part: the type and its defaults here; flags.go binds the
// flags, env.go reads the environment and carries Options to the suites,
// validate.go checks a run, binaries.go says where binaries come from.
package options

import (
	"path/filepath"
	"time"
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
	// Context is the kubeconfig's context to use (--context; "": its
	// current context). With --provider existing and no --kubeconfig, the
	// kubeconfig is kubectl's: $KUBECONFIG's files, else ~/.kube/config.
	Context string `json:"context,omitempty"`
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
	// NoColor keeps colour out of the suites' output (--no-color, or
	// NO_COLOR set, as no-color.org asks; never on a pipe or a file).
	NoColor bool `json:"noColor,omitempty"`
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
	// Coverage runs the built-in controller-manager of local clusters
	// built with Go's coverage of upstream's Job controller, its counters
	// under Artifacts/coverage/<release>/counters, summed at the run's end
	// (issue #69).
	Coverage bool `json:"coverage,omitempty"`
	// RerunFailed is an earlier run's report (its artifacts directory, or
	// Ginkgo JSON reports): run again only the specs that failed there
	// (jobconform run narrows the plan to them; suite processes do not read it).
	RerunFailed string `json:"rerunFailed,omitempty"`
	// Shard ("K/N") runs the K-th of N parts of every suite's scenarios
	// (harness.InShard): the suite processes read it too. "": all.
	Shard string `json:"shard,omitempty"`
}

// CoverCounters is where the local clusters of a run o asks coverage of
// write their counters ("" when it does not): one directory per release,
// shared by every cluster of it (Run.Coverage).
func CoverCounters(o Options) string {
	if !o.Run.Coverage || o.Version == "" {
		return ""
	}
	return filepath.Join(o.Run.Artifacts, "coverage", o.Version, "counters")
}

// Suites are the suites jobconform knows, in the order it runs them.
var Suites = []string{"conformance", "chaos", "drill", "scale"}

// ScaleForms are the scale suite's sizes (scenarios/catalog.ScaleForms has
// one entry each): 1,000-pod Jobs on 100 kwok nodes (the default),
// 10,000-pod Jobs on 1,000, and make test's 600-pod Jobs on 50.
var ScaleForms = []string{"1k", "10k", "600"}

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
	// Require fails a run in which the differential verdict did not judge
	// a run of a controller other than the built-in (--require-oracle):
	// for CI gates that must not pass on what was never compared. A run
	// not judged for one of reports.AcceptedReasons passes. make run,
	// make test and jobconform test set it.
	Require bool `json:"require,omitempty"`
	// From is a directory of the built-in's observations kept by an
	// earlier run (<artifacts>/<release>/oracle): read, not run again.
	From string `json:"from,omitempty"`
	// Dir is where this run keeps the built-in's observations ("": a
	// temporary directory of the suite's).
	Dir string `json:"dir,omitempty"`
	// Twice runs the built-in twice per scenario (--oracle-twice): what
	// its runs differ in is the scenario's noise, not compared; a
	// scenario whose two runs end apart is racy, not judged.
	Twice bool `json:"twice,omitempty"`
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
