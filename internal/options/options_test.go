package options

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A child process of this test prints what it was told, as a suite process
// would read it.
func TestMain(m *testing.M) {
	if os.Getenv("OPTIONS_TEST_ECHO") == "1" {
		o, err := FromEnv()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		s, _ := o.Encode()
		fmt.Print(s)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fill sets every settable field under v to a value that is not its zero
// value, so that a field added to Options is covered with no change here.
func fill(t *testing.T, v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fill(t, v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	case reflect.String:
		v.SetString("value of " + path)
	case reflect.Bool:
		v.SetBool(!v.Bool()) // flips a default of true too
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		v.SetUint(7)
	case reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), path)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := 0; i < 2; i++ {
			fill(t, v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(t, k, path+"[key]")
		fill(t, e, path+"[value]")
		m.SetMapIndex(k, e)
		v.Set(m)
	default:
		t.Fatalf("%s: fill knows no %s: teach it (and check Options still serializes)", path, v.Kind())
	}
}

// A setting added to Options reaches a suite process with no other file
// changed: every field, set to a value of its own, is read back whole by a
// child process given only what jobconform sets (Environ).
func TestEverySettingReachesTheSuites(t *testing.T) {
	want := Defaults()
	fill(t, reflect.ValueOf(&want).Elem(), "Options")
	env, err := want.Environ()
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), "OPTIONS_TEST_ECHO=1", env)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	got, err := Decode(string(out))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		a, _ := json.MarshalIndent(want, "", " ")
		b, _ := json.MarshalIndent(got, "", " ")
		t.Errorf("the suite process read\n%s\nwant\n%s", b, a)
	}
}

// Env wins over the single variables, which only a run started without
// jobconform (go test, go tool ginkgo) uses.
func TestFromEnvFallback(t *testing.T) {
	t.Setenv(Env, "")
	t.Setenv(envControllers, "reference, external")
	t.Setenv(envExternalName, "example.com/x")
	t.Setenv(envScenarios, "a"+string(os.PathListSeparator)+"b")
	t.Setenv(envBuiltinScenarios, "false")
	t.Setenv(envChaosSeed, "42")
	t.Setenv(envFeatureGates, "JobManagedBy=true")
	o, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o.Controllers, []string{"reference", "external"}) || o.BuiltinScenarios ||
		!reflect.DeepEqual(o.ScenarioDirs, []string{"a", "b"}) || *o.ChaosSeed != 42 || !o.FeatureGates["JobManagedBy"] {
		t.Errorf("FromEnv = %+v", o)
	}
	if got := o.ControllerNames(); !reflect.DeepEqual(got, []string{"reference", "example.com/x"}) {
		t.Errorf("ControllerNames = %v", got)
	}

	enc, _ := Defaults().Encode()
	t.Setenv(Env, enc)
	if o, err := FromEnv(); err != nil || len(o.ScenarioDirs) != 0 {
		t.Errorf("with %s set, FromEnv = %+v, %v; want the serialized options alone", Env, o, err)
	}
	t.Setenv(Env, `{"controlers":["builtin"]}`)
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), Env) {
		t.Errorf("an unknown field: %v, want an error naming %s", err, Env)
	}
	t.Setenv(Env, "")
	t.Setenv(envChaosSeed, "-1")
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), envChaosSeed) {
		t.Errorf("a bad seed: %v, want an error naming %s", err, envChaosSeed)
	}
}

func TestValidate(t *testing.T) {
	bad := map[string]func(*Options){
		"--nodes":       func(o *Options) { o.Nodes = "vm" },
		"--provider":    func(o *Options) { o.Provider = "gke" },
		"--kubeconfig":  func(o *Options) { o.Kubeconfig = "k"; o.Provider = "kind" },
		"--context":     func(o *Options) { o.Context = "kind-a" },
		"--controllers": func(o *Options) { o.Controllers = []string{"builtin", "kueue"} },
		"--external-managed-by": func(o *Options) {
			o.Controllers = []string{"external"}
		},
		"--external-command":  func(o *Options) { o.External.Command = "x" },
		"--builtin-scenarios": func(o *Options) { o.BuiltinScenarios = false },
		"--nodes kubelet":     func(o *Options) { o.Nodes = NodesKubelet; o.Provider = "kind" },
		"--feature-gates and": func(o *Options) { o.Kubeconfig = "k"; o.FeatureGates = map[string]bool{"A": true} },
		"--scale":             func(o *Options) { o.Scale = "100k" },
		"--suites scale runs on kwok nodes": func(o *Options) {
			o.Run.Suites = []string{"scale"}
			o.Nodes = NodesKubelet
		},
		"--suites scale brings up a local cluster": func(o *Options) {
			o.Run.Suites = []string{"scale"}
			o.Provider = "kind"
		},
		"--kueue-version v0.17.0 without multikueue": func(o *Options) { o.KueueVersion = "v0.17.0" },
		"--chaos-engine \"litmus\"":                  func(o *Options) { o.ChaosEngine = "litmus" },
		"--chaos-engine chaos-mesh needs a cluster":  func(o *Options) { o.ChaosEngine = "chaos-mesh" },
		"--require-oracle and --no-oracle":           func(o *Options) { o.Oracle.Require, o.Oracle.Off = true, true },
		"are for a cluster given by --kubeconfig":    func(o *Options) { o.Existing.AllowNodeDisruption = true },
		"--pod-image": func(o *Options) { o.Existing.PodImage = "x" },
		"--kueue-version \"0.17\": give a Kueue release tag": func(o *Options) {
			o.Controllers, o.KueueVersion = []string{"multikueue"}, "0.17"
		},
		"--controllers dispatcher brings up a worker cluster": func(o *Options) {
			o.Controllers = []string{"dispatcher"}
			o.Provider = "kind"
		},
		"--controllers dispatcher is judged by the conformance suite alone": func(o *Options) {
			o.Controllers = []string{"dispatcher"}
			o.Run.Suites = []string{"chaos"}
		},
		"--controllers dispatcher: its worker cluster has kwok nodes": func(o *Options) {
			o.Controllers, o.Run.Suites = []string{"builtin", "dispatcher"}, []string{"conformance"}
			o.Nodes = NodesKubelet
		},
	}
	for flagName, breakIt := range bad {
		o := Defaults()
		breakIt(&o)
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), flagName) {
			t.Errorf("%s: Validate() = %v, want an error naming %s", flagName, err, flagName)
		}
	}
	o := Defaults()
	o.Controllers = []string{"builtin", "dispatcher"}
	if err := o.Validate(); err != nil {
		t.Errorf("--controllers builtin,dispatcher: %v", err)
	}
	// kubectl's kubeconfig, with or without a context of it.
	for _, ctx := range []string{"", "kind-a"} {
		o = Defaults()
		o.Provider, o.Context = "existing", ctx
		if err := o.Validate(); err != nil {
			t.Errorf("--provider existing --context %q: %v", ctx, err)
		}
	}
}

// ResolveReleases names each release as the resolver given does, and refuses
// one named twice, the flag named.
func TestResolveReleases(t *testing.T) {
	resolve := func(v string) (string, error) {
		switch v {
		case "previous", "1.36.3", "v1.36.3":
			return "v1.36.3", nil
		case "v1.37.1":
			return v, nil
		}
		return "", fmt.Errorf("no release %q", v)
	}
	bad := map[string]func(*Options){
		"--k8s-version: no release":            func(o *Options) { o.Version = "v1.30.0" },
		"already given with --k8s-version":     func(o *Options) { o.Run.Versions = []string{"v1.36.3"}; o.Run.BuiltinAt = []string{"1.36.3"} },
		"--builtin-at: no release":             func(o *Options) { o.Run.BuiltinAt = []string{"latest"} },
		"--k8s-version: empty":                 func(o *Options) { o.Run.Versions = []string{""} },
		"--k8s-version v1.37.1: already given": func(o *Options) { o.Run.Versions = []string{"v1.37.1", "v1.37.1"} },
	}
	for want, breakIt := range bad {
		o := Defaults()
		breakIt(&o)
		if err := o.ResolveReleases(resolve); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: ResolveReleases() = %v", want, err)
		}
	}
	o := Defaults()
	o.Version, o.Run.BuiltinAt = "1.36.3", []string{"previous"}
	if err := o.ResolveReleases(resolve); err != nil || o.Version != "v1.36.3" || o.Run.BuiltinAt[0] != "v1.36.3" {
		t.Errorf("ResolveReleases() = %v: version %q, --builtin-at %v", err, o.Version, o.Run.BuiltinAt)
	}
}

func TestFlagsSetTheStruct(t *testing.T) {
	o := Defaults()
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	o.AddFlags(fs)
	err := fs.Parse([]string{"--nodes", "kubelet", "--controllers", "reference", "--scenarios", "d1", "--scenarios", "d2",
		"--chaos-seed", "9", "--feature-gates", "JobManagedBy=true", "--drills", "a,b", "--k8s-version", "v1.36.3"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Nodes != NodesKubelet || !reflect.DeepEqual(o.Controllers, []string{"reference"}) || !reflect.DeepEqual(o.ScenarioDirs, []string{"d1", "d2"}) ||
		*o.ChaosSeed != 9 || !o.FeatureGates["JobManagedBy"] || !reflect.DeepEqual(o.Drills, []string{"a", "b"}) || !reflect.DeepEqual(o.Run.Versions, []string{"v1.36.3"}) {
		t.Errorf("flags gave %+v", o)
	}
	if err := fs.Parse([]string{"--builtin-at", "previous", "--builtin-at="}); err != nil || len(o.Run.BuiltinAt) != 0 {
		t.Errorf("--builtin-at= kept %v (%v)", o.Run.BuiltinAt, err)
	}
	if err := fs.Parse([]string{"--chaos-seed", "x"}); err == nil {
		t.Error("--chaos-seed x accepted")
	}
}

func TestParseGates(t *testing.T) {
	g, err := ParseGates("A=true, B=false,")
	if err != nil || len(g) != 2 || !g["A"] || g["B"] {
		t.Fatalf("ParseGates = %v, %v", g, err)
	}
	if got := FormatGates(map[string]bool{"B": false, "A": true}); got != "A=true,B=false" {
		t.Errorf("FormatGates = %q: want name order, as ParseGates reads it", got)
	}
	for _, bad := range []string{"A", "A=yes", "=true"} {
		if _, err := ParseGates(bad); err == nil {
			t.Errorf("ParseGates(%q) accepted", bad)
		}
	}
}

func TestValidateRun(t *testing.T) {
	bad := map[string]func(*Options){
		"--suites":              func(o *Options) { o.Run.Suites = []string{"soak"} },
		"--procs":               func(o *Options) { o.Run.Procs = 0 },
		"--cluster-procs":       func(o *Options) { o.Run.ClusterProcs = 0 },
		"--kubelet-conformance": func(o *Options) { o.Run.KubeletConformance = true; o.Run.Suites = []string{"chaos"} },
		"drop --k8s-version":    func(o *Options) { o.Kubeconfig = "k"; o.Run.Versions = []string{"v1.36.3"} },
	}
	for want, breakIt := range bad {
		o := Defaults()
		breakIt(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: Validate() = %v", want, err)
		}
	}
}

func TestSuiteTimeout(t *testing.T) {
	o := Defaults()
	if got := o.SuiteTimeout("conformance"); got != DefaultSuiteTimeout {
		t.Errorf("conformance: %s", got)
	}
	if got := o.SuiteTimeout("scale"); got != DefaultSuiteTimeout {
		t.Errorf("scale 1k: %s", got)
	}
	o.Scale = "10k"
	if got := o.SuiteTimeout("scale"); got != Scale10kTimeout {
		t.Errorf("scale 10k: %s", got)
	}
	o.Run.Timeout = 20 * time.Minute // given: wins everywhere
	if got := o.SuiteTimeout("scale"); got != 20*time.Minute {
		t.Errorf("--timeout 20m, scale 10k: %s", got)
	}
	o.Run.Timeout = -time.Minute
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--timeout") {
		t.Errorf("--timeout -1m: Validate() = %v", err)
	}
}
