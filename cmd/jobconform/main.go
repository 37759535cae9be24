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
	"syscall"

	"github.com/jobconform/jobconform/controller/cmd/reference-controller/app"
	dispatcher "github.com/jobconform/jobconform/controller/dispatch/app"
	clusterpkg "github.com/jobconform/jobconform/internal/cluster"
	"github.com/jobconform/jobconform/internal/ginkgoreport"
	"github.com/jobconform/jobconform/internal/k8sbin"
	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/release"
	"github.com/jobconform/jobconform/reports"
)

const usage = `jobconform: a conformance and chaos harness for Kubernetes Job controllers.

Usage:
  jobconform run     [flags]                    run the suites against Job controllers; write the reports
  jobconform validate FILE|DIR...               check scenario files without a cluster
  jobconform list    [--scenarios DIR]...       list the scenarios a run would use
  jobconform schema                             print the JSON Schema of scenario files
  jobconform reference-controller [flags]       run the reference Job controller (e.g. as an external controller)
  jobconform dispatcher [flags]                 run the reference dispatcher between a manager and a worker cluster
  jobconform build   [--k8s-version vX.Y.Z]...   build and cache Kubernetes binaries (--kueue V: Kueue's too)
  jobconform cluster [flags]                    run a local cluster until interrupted
  jobconform report  --out DIR REPORT.json...   write report.html and summary.md from Ginkgo JSON reports
  jobconform matrix  [--out F] REPORT.json...  the release × feature matrix of runs (Markdown);
                     --run [run flags]         runs the suites at every release of the matrix first
  jobconform fidelity --kwok R.json --kubelet R.json  the same scenarios on kwok and on kubelet nodes, compared
  jobconform bugs    [--out F]                  the known upstream bugs of the built-in controller (Markdown)
  jobconform durations [--out F] REPORT.json...  record each spec's wall time (the suites run the longest first)
  jobconform mutate  [--faults a,b] [flags]     run the conformance scenarios against the reference
                                                controller broken by each fault; print the mutation score
  jobconform test    [run flags]                from a checkout: install what the tests need, go test
                                                every package, then the suites as make test runs them
  jobconform bench   [--runs N]                 from a checkout: start-to-ready, then the conformance
                                                and chaos suites N times each (median wall time)

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
	case "ginkgo": // one suite run of jobconform run's (jobs.go)
		os.Exit(runGinkgo(os.Args[2:]))
	case "reference-controller":
		if err := app.Run(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "reference-controller:", err)
			os.Exit(1)
		}
		return
	case "dispatcher":
		if err := dispatcher.Run(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "dispatcher:", err)
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
		err = matrix(ctx, os.Args[2:])
	case "fidelity":
		err = fidelity(os.Args[2:])
	case "bugs":
		err = bugsPage(os.Args[2:])
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
	case "test":
		err = test(ctx, os.Args[2:])
	case "bench":
		err = bench(ctx, os.Args[2:])
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

// versionsFlag parses the repeatable --k8s-version over the environment's.
func versionsFlag(fs *flag.FlagSet, usage string) *options.Options {
	o, err := options.FromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "jobconform: warning:", err)
	}
	o.AddVersionsFlag(fs, usage)
	describeReleases(fs)
	return &o
}

func build(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	o := versionsFlag(fs, "Kubernetes release to build")
	kubelet := fs.Bool("kubelet", false, "build the kubelet too (for kubelet nodes)")
	kueue := fs.String("kueue", "", "build Kueue's manager of this release too and keep its CRDs (\"default\": "+k8sbin.KueueVersion+"; MultiKueue, issue #31)")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *kueue != "" {
		v := *kueue
		if v == "default" {
			v = ""
		}
		if err := buildKueue(ctx, v); err != nil {
			return err
		}
		if len(o.Run.Versions) == 0 {
			return nil
		}
	}
	versions := o.Run.Versions
	if len(versions) == 0 {
		versions = []string{""}
	}
	for i, v := range versions {
		var err error
		if versions[i], err = release.Resolve(v); err != nil { // "previous" too
			return usageError{fmt.Errorf("--k8s-version: %w", err)}
		}
	}
	return buildReleases(ctx, versions, nil, *kubelet)
}

// buildReleases builds (once; cached) the binaries of the releases, and the
// kubelet of the first of versions when kubelet is set, with progress.
func buildReleases(ctx context.Context, versions, more []string, kubelet bool) error {
	b := &k8sbin.Builder{Progress: os.Stderr}
	for i, v := range append(append([]string(nil), versions...), more...) {
		if v == "" {
			continue // an existing cluster
		}
		set, err := b.Ensure(ctx, v)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "Kubernetes %s (etcd %s, kwok %s):\n", set.Version, set.EtcdVersion, k8sbin.KwokVersion)
		for _, bin := range []k8sbin.Binary{k8sbin.APIServer, k8sbin.ControllerManager, k8sbin.Scheduler, k8sbin.Etcd, k8sbin.Kwok} {
			fmt.Fprintf(os.Stderr, "  %-24s %s\n", bin, set.Path(bin))
		}
		if kubelet && i == 0 {
			path, err := b.EnsureKubelet(ctx, v)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "  %-24s %s\n", k8sbin.Kubelet, path)
		}
	}
	return nil
}

// buildKueue builds (once; cached) Kueue's manager of release v (""
// k8sbin.KueueVersion) and keeps its CRDs, with progress.
func buildKueue(ctx context.Context, v string) error {
	set, err := (&k8sbin.Builder{Progress: os.Stderr}).EnsureKueue(ctx, v)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "Kueue %s:\n  %-24s %s\n  %-24s %s\n", set.Version, "manager", set.Manager, "CRDs", set.CRDDir)
	return nil
}

func cluster(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	o, err := options.FromEnv()
	if err != nil {
		return usageError{err}
	}
	o.AddClusterFlags(fs)
	fs.StringVar(&o.Version, "k8s-version", o.Version, "Kubernetes release of the cluster (default "+release.Default+")")
	nodes := fs.Int("node-count", 3, "nodes (on the local provider each is lost and returned alone)")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	o.Run.Versions = nil
	if err := settle(&o); err != nil {
		return usageError{err}
	}
	c, err := clusterpkg.Create(ctx, "local", clusterpkg.Config{Version: o.Version, Nodes: *nodes, NodeKind: o.Nodes, FeatureGates: o.FeatureGates, Progress: os.Stderr})
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
