// Command jobconform drives the harness: build Kubernetes binaries, bring a
// local cluster up for a person to use, and run the main job.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/jobconform/jobconform/controller/cmd/reference-controller/app"
	"github.com/jobconform/jobconform/reports"
	clusterpkg "github.com/jobconform/jobconform/suites/cluster"
	"github.com/jobconform/jobconform/suites/internal/ginkgoreport"
	"github.com/jobconform/jobconform/suites/internal/harness"
	"github.com/jobconform/jobconform/suites/internal/k8sbin"
)

const usage = `jobconform: a conformance and chaos harness for Kubernetes Job controllers.

Usage:
  jobconform run     [flags]                    run the suites against Job controllers; write the reports
  jobconform validate FILE|DIR...               check scenario files without a cluster
  jobconform list    [--scenarios DIR]...       list the scenarios a run would use
  jobconform schema                             print the JSON Schema of scenario files
  jobconform reference-controller [flags]       run the reference Job controller (e.g. as an external controller)
  jobconform build   [--k8s-version vX.Y.Z]...   build and cache Kubernetes binaries
  jobconform cluster [flags]                    run a local cluster until interrupted
  jobconform report  --out DIR REPORT.json...   write report.html and summary.md from Ginkgo JSON reports
  jobconform matrix  [--readme F] REPORT.json... the release × feature matrix of runs (Markdown)
  jobconform fidelity --kwok R.json --kubelet R.json  the same scenarios on kwok and on kubelet nodes, compared
  jobconform durations [--out F] REPORT.json...  record each spec's wall time (the suites run the longest first)
  jobconform mutate  [--faults a,b] [flags]     run the conformance scenarios against the reference
                                                controller broken by each fault; print the mutation score

Run "jobconform <command> -h" for a command's flags.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	// Commands that own the process: a suite's Ginkgo process, the controller.
	switch os.Args[1] {
	case "suite-process":
		os.Exit(suiteProcess(os.Args[2:]))
	case "reference-controller":
		if err := app.Run(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "reference-controller:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "run":
		err = runSuites(ctx, os.Args[2:])
	case "validate":
		err = validate(os.Args[2:])
	case "list":
		err = list(os.Args[2:])
	case "schema":
		err = schema(os.Args[2:])
	case "matrix":
		err = matrix(os.Args[2:])
	case "fidelity":
		err = fidelity(os.Args[2:])
	case "durations":
		err = durations(os.Args[2:])
	case "build":
		err = build(ctx, os.Args[2:])
	case "cluster":
		err = cluster(ctx, os.Args[2:])
	case "report":
		err = report(os.Args[2:])
	case "mutate":
		err = mutate(ctx, os.Args[2:])
	case "-h", "--help", "help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if errors.Is(err, flag.ErrHelp) {
		return // -h: the flags were printed
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "jobconform:", err)
		if errors.Is(err, context.Canceled) {
			os.Exit(130)
		}
		if errors.As(err, new(usageError)) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// stringsFlag collects a repeatable flag's values (--k8s-version, --scenarios).
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

func defaultVersion() string {
	if v := os.Getenv(k8sbin.VersionEnv); v != "" {
		return v
	}
	return k8sbin.DefaultVersion
}

func build(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	var versions stringsFlag
	fs.Var(&versions, "k8s-version", "Kubernetes release to build (repeatable; default $"+k8sbin.VersionEnv+" or "+k8sbin.DefaultVersion+")")
	kubelet := fs.Bool("kubelet", false, "build the kubelet too (for kubelet nodes)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(versions) == 0 {
		versions = stringsFlag{defaultVersion()}
	}
	b := &k8sbin.Builder{Progress: os.Stderr}
	for _, v := range versions {
		set, err := b.Ensure(ctx, v)
		if err != nil {
			return err
		}
		fmt.Printf("Kubernetes %s (etcd %s, kwok %s):\n", set.Version, set.EtcdVersion, k8sbin.KwokVersion)
		for _, bin := range []k8sbin.Binary{k8sbin.APIServer, k8sbin.ControllerManager, k8sbin.Scheduler, k8sbin.Etcd, k8sbin.Kwok} {
			fmt.Printf("  %-24s %s\n", bin, set.Path(bin))
		}
		if *kubelet {
			path, err := b.EnsureKubelet(ctx, v)
			if err != nil {
				return err
			}
			fmt.Printf("  %-24s %s\n", k8sbin.Kubelet, path)
		}
	}
	return nil
}

// clusterFlags are the cluster flags shared by commands.
func clusterFlags(fs *flag.FlagSet) *clusterpkg.Config {
	cfg := &clusterpkg.Config{}
	fs.StringVar(&cfg.Version, "k8s-version", defaultVersion(), "Kubernetes release")
	fs.IntVar(&cfg.Nodes, "nodes", 3, "nodes (on the local provider each is lost and returned alone)")
	fs.StringVar(&cfg.NodeKind, "node-kind", clusterpkg.NodesKwok, "what plays the nodes: kwok, or kubelet (real kubelets on containerd; root and Debian's "+clusterpkg.KubeletPackages+")")
	fs.Func("feature-gates", "feature gates for every component, e.g. JobManagedBy=false,JobPodReplacementPolicy=true", func(s string) error {
		gates, err := harness.ParseGates(s)
		cfg.FeatureGates = gates
		return err
	})
	return cfg
}

func cluster(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	cfg := clusterFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.Progress = os.Stderr
	c, err := clusterpkg.Create(ctx, "local", *cfg)
	if err != nil {
		return err
	}
	defer c.Stop()
	fmt.Printf("cluster ready. Use it with:\n  export KUBECONFIG=%s\nComponent logs: %s\nPress Ctrl-C to stop it.\n", c.Kubeconfig(), c.LogDir())
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "stopping cluster")
	return c.Stop()
}

// report writes the HTML report and the Markdown summary of finished runs.
func report(args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	out := fs.String("out", "", "directory for report.html and summary.md (required)")
	title := fs.String("title", "jobconform", "the report's title")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() == 0 {
		return errors.New("report: give --out DIR and at least one Ginkgo JSON report (e.g. _artifacts/*/report.json)")
	}
	runs, err := ginkgoreport.Load(fs.Args()...)
	if err != nil {
		return err
	}
	path, err := reports.Write(*out, *title, runs)
	if err != nil {
		return err
	}
	fmt.Printf("report: %s (summary %s)\n", path, filepath.Join(*out, "summary.md"))
	return nil
}
