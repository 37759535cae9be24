// Checking the settings: --shard, the whole of a run, and the releases
// resolved (the command resolves them; the settings know no release).

package options

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/mod/semver"
)

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

// Validate checks o and fills what follows from it (the provider of a
// kubeconfig, the release's canonical form). Its errors name the flag.
func (o *Options) Validate() error {
	switch {
	case o.Kubeconfig != "" && o.Provider == "":
		o.Provider = "existing"
	case o.Kubeconfig != "" && o.Provider != "existing":
		return fmt.Errorf("--kubeconfig and --provider %s: choose one (an existing cluster, or one jobconform creates)", o.Provider)
	case o.Context != "" && o.Provider != "existing":
		return fmt.Errorf("--context %s names a context of a kubeconfig: give --kubeconfig, or --provider existing for kubectl's ($KUBECONFIG, else ~/.kube/config)", o.Context)
	}
	if o.Oracle.Twice && (o.Oracle.Off || o.Oracle.From != "") {
		return errors.New("--oracle-twice runs the built-in twice for the differential verdict: not with --no-oracle or --oracle-from (kept runs are read, not run)")
	}
	if o.Oracle.Require && o.Oracle.Off {
		return errors.New("--require-oracle and --no-oracle: choose one (the first fails a run the second leaves uncompared; make run, make test and jobconform test require the oracle: add --require-oracle=false with --no-oracle)")
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
		return fmt.Errorf("--scale %q: use one of %s", o.Scale, strings.Join(ScaleForms, ", "))
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
	if provider != "local" && r.Coverage {
		return fmt.Errorf("--coverage with the %s provider: it runs the built-in controller-manager built with coverage, which only the local provider can run (drop --kubeconfig or --provider)", provider)
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
