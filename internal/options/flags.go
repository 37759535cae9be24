// The flags: every flag of jobconform run bound to Options, and the
// small syntaxes they share (feature gates, a seed).

package options

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

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
	fs.BoolVar(&o.Run.NoColor, "no-color", o.Run.NoColor || os.Getenv("NO_COLOR") != "", "no colour in the suites' output (default: colour on a terminal unless NO_COLOR is set)")
	fs.StringVar(&o.Run.RerunFailed, "rerun-failed", o.Run.RerunFailed, "an earlier run's artifacts directory (or its Ginkgo JSON reports, comma-separated): run again only the specs that failed there, at the releases and on the nodes where they failed (the built-in's spec beside another controller's, as its oracle); fold the rerun into the first with jobconform report merge --rerun")
	fs.StringVar(&o.Run.Baseline, "baseline", o.Run.Baseline, "an earlier run's artifacts directory (or its Ginkgo JSON reports, comma-separated): say what newly fails, newly passes and got slower, in the terminal and summary.md")
	fs.IntVar(&o.Run.Procs, "procs", o.Run.Procs, "parallel Ginkgo processes of the conformance suite, on one cluster (at most 12 on kubelet nodes, where each pod is a real container)")
	fs.IntVar(&o.Run.ClusterProcs, "cluster-procs", o.Run.ClusterProcs, "parallel Ginkgo processes of the chaos and drill suites, each spec on a cluster of its own (that many clusters at once)")
	fs.StringVar(&o.Run.Artifacts, "artifacts", o.Run.Artifacts, "directory for JUnit, Ginkgo JSON, report.html and summary.md (default $ARTIFACTS or _artifacts)")
	fs.DurationVar(&o.Run.Timeout, "timeout", o.Run.Timeout, "time limit of each suite run (default: 90m; the scale suite's 10k form 8h)")
	fs.StringVar(&o.Run.Shard, "shard", o.Run.Shard, "run the K-th of N shards of every suite, e.g. 2/4: the scenarios split by their measured duration, the same way on every machine (the drill suite runs in shard 1); jobconform report merge joins the shards' reports")
	fs.BoolVar(&o.Run.Coverage, "coverage", o.Run.Coverage, "measure how much of upstream's Job controller the run reaches: the built-in controller-manager of the local clusters built with Go's coverage (once per release, cached), statements reached per file and function, the blocks never reached and the source coloured, in <artifacts>/coverage/<release>/")
	fs.BoolVar(&o.Run.KubeletConformance, "kubelet-conformance", o.Run.KubeletConformance, "run the conformance suite again on kubelet nodes at the first release, and write the fidelity table (kwok beside kubelet)")
	fs.StringVar(&o.Provider, "provider", o.Provider, "cluster provider: "+strings.Join(Providers, ", ")+" (default local; existing with --kubeconfig)")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "run on this existing cluster instead of creating one ($KUBECONFIG is read only with --provider existing, as kubectl reads it; never to replace the local cluster)")
	fs.StringVar(&o.Context, "context", o.Context, "the kubeconfig's context to use (default: its current context); with --kubeconfig or --provider existing")
	fs.Func("controllers", "controllers under test, comma-separated: "+strings.Join(Controllers, ", ")+" (default builtin,reference)", func(s string) error {
		o.Controllers = splitList(s, ",")
		return nil
	})
	fs.StringVar(&o.KueueVersion, "kueue-version", o.KueueVersion, "with --controllers multikueue: the Kueue release to run, built from its Go module and cached (default: the release known to build here, which jobconform build --kueue default names)")
	fs.StringVar(&o.External.ManagedBy, "external-managed-by", o.External.ManagedBy, "the external controller's spec.managedBy value (with --controllers external)")
	fs.StringVar(&o.External.Command, "external-command", o.External.Command, "shell command that starts the external controller (KUBECONFIG is set to the cluster's; run from this directory); empty: it already runs")
	fs.StringVar(&o.External.Finalizer, "external-finalizer", o.External.Finalizer, "the external controller's pod tracking finalizer, if it uses one")
	fs.BoolVar(&o.Oracle.Require, "require-oracle", o.Oracle.Require, "fail the run when a run of a controller other than the built-in was not compared with the built-in's (not judged by the differential verdict: the reasons are in the verdicts)")
	fs.BoolVar(&o.Oracle.Off, "no-oracle", o.Oracle.Off, "skip the differential verdict (each controller's run compared with the built-in's of the same scenario and release; the built-in is run for it when it is not under test)")
	fs.BoolVar(&o.Oracle.Twice, "oracle-twice", o.Oracle.Twice, "run the built-in twice per scenario: what its own runs differ in is that scenario's noise, not compared; a scenario whose two runs end apart is racy, not judged (jobconform explore sets it)")
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
	fs.StringVar(&o.Scale, "scale", o.Scale, "scale suite: 1k (1,000-pod Jobs on 100 kwok nodes; default), 10k (10,000-pod Jobs on 1,000 nodes) or 600 (600-pod Jobs on 50 nodes: make test's)")
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
