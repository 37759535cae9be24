// The environment: Options carried whole to the suites' processes (Env),
// the JOBCONFORM_* variables as the flags' fallback, and the settings of
// the machine (the cache, GOMAXPROCS of the components, $ARTIFACTS).

package options

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The variables read when Env is not set: a suite run by go test or
// go tool ginkgo straight from a checkout.
const (
	envVersion          = "JOBCONFORM_K8S_VERSION"
	envProvider         = "JOBCONFORM_PROVIDER"
	envKubeconfig       = "JOBCONFORM_KUBECONFIG"
	envContext          = "JOBCONFORM_CONTEXT"
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
	envOracleTwice      = "JOBCONFORM_ORACLE_TWICE"
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
	str(&o.Context, envContext)
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
	boolean(&o.Oracle.Twice, envOracleTwice)
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
