// Command jobconform drives the harness: build Kubernetes binaries, bring a
// local cluster up for a person to use, and run the main job.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/jobconform/jobconform/controller/cmd/reference-controller/app"
	dispatcher "github.com/jobconform/jobconform/controller/dispatch/app"
	"github.com/jobconform/jobconform/internal/buildinfo"
)

// subcommand is one of jobconform's commands: its usage line(s) in the help,
// and what runs it. Those that own the process (a suite's Ginkgo process,
// a controller) exit on their own and take no signal context.
type subcommand struct {
	name, args, summary string
	run                 func(ctx context.Context, args []string) error
	owns                func(args []string) int
	hidden              bool // run by jobconform itself, not by people
}

// commands are jobconform's commands in the order the help lists them;
// each lives in a file of its name (run: run.go and jobs.go).
var commands = []subcommand{
	{name: "run", args: "[flags]", summary: "run the suites against Job controllers; write the reports", run: runSuites},
	{name: "validate", args: "FILE|DIR...", summary: "check scenario files without a cluster", run: noContext(validate)},
	{name: "list", args: "[run flags] [-o json]", summary: "what jobconform run would run with the same flags: each suite run (release, nodes, controllers) and its specs; nothing is built or started", run: list},
	{name: "schema", summary: "print the JSON Schema of scenario files", run: noContext(schema)},
	{name: "explore", args: "[--seed S] [--cases N] [--out DIR] [--write-only] [run flags]", summary: "generate Jobs (a scenario file each) and judge the controllers on them against the built-in run twice (its noise learned, racy cases counted, not judged)", run: exploreCmd},
	{name: "coverage", args: "unit [--k8s-version V] | report ARTIFACTS | table DIR...", summary: "how much of upstream's Job controller is reached: unit measures upstream's own unit tests; report writes a run's again from its counters; table compares measurements (run and explore write theirs with --coverage)", run: coverageCmd},
	{name: "reference-controller", args: "[flags]", summary: "run the reference Job controller (e.g. as an external controller)", owns: ownsWith("reference-controller", app.Run)},
	{name: "dispatcher", args: "[flags]", summary: "run the reference dispatcher between a manager and a worker cluster", owns: ownsWith("dispatcher", dispatcher.Run)},
	{name: "build", args: "[--k8s-version vX.Y.Z]...", summary: "build and cache Kubernetes binaries (--kueue V: Kueue's too)", run: build},
	{name: "cluster", args: "[flags]", summary: "run a local cluster until interrupted", run: cluster},
	{name: "cleanup", args: "--kubeconfig K [--run ID] [--dry-run]", summary: "remove what jobconform runs left on a cluster they did not create (namespaces, nodes' cordons and taints)", run: cleanup},
	{name: "report", args: "--out DIR REPORT.json... | diff OLD NEW", summary: "write report.html and summary.md from Ginkgo JSON reports; diff: what newly fails, passes, got slower (exit 1 on a new failure)", run: noContext(report)},
	{name: "matrix", args: "[--out F] REPORT.json...", summary: "the release × feature matrix of runs (Markdown); --run [run flags] runs the suites at every release of the matrix first", run: matrix},
	{name: "fidelity", args: "--kwok R.json --kubelet R.json", summary: "the same scenarios on kwok and on kubelet nodes, compared", run: noContext(fidelity)},
	{name: "bugs", args: "[--out F]", summary: "the known upstream bugs of the built-in controller (Markdown)", run: noContext(bugsPage)},
	{name: "durations", args: "[--out F] REPORT.json...", summary: "record each spec's wall time (the suites run the longest first)", run: noContext(durations)},
	{name: "mutate", args: "[--faults a,b] [flags]", summary: "run the conformance scenarios against the reference controller broken by each mutant; print the mutation score", run: mutate},
	{name: "soak", args: "[--rounds N] [--load N] [run flags]", summary: "run the suites N times against the built-in and the reference, optionally beside spinning processes; count false failures per 1,000 specs", run: soak},
	{name: "test", args: "[run flags]", summary: "from a checkout: install what the tests need, go test every package, then the suites as make test runs them", run: test},
	{name: "bench", args: "[--runs N]", summary: "from a checkout: start-to-ready, then the conformance and chaos suites N times each (median wall time)", run: bench},
	{name: "completion", args: "bash|zsh|fish", summary: "print a shell completion script: the commands, and each command's flags as its -h lists them"}, // run: set in completion.go's init (it reads commands)
	{name: "version", args: "[-o json]", summary: "which jobconform this is: module version, commit, Go, platform (every run prints it first and every report keeps it)", run: noContext(version)},
	{name: "suite-process", hidden: true, owns: suiteProcess},
	{name: "ginkgo", hidden: true, owns: runGinkgo}, // one suite run of jobconform run's (jobs.go)
}

// usage is the help, generated from the commands.
func usage() string {
	var b strings.Builder
	b.WriteString("jobconform: a conformance and chaos harness for Kubernetes Job controllers.\n\nUsage:\n")
	for _, c := range commands {
		if c.hidden {
			continue
		}
		fmt.Fprintf(&b, "  %s\n", strings.TrimSpace("jobconform "+c.name+" "+c.args))
		for _, line := range wrap(c.summary, 80-6) {
			fmt.Fprintf(&b, "      %s\n", line)
		}
	}
	b.WriteString("\nRun \"jobconform help <command>\" (or \"jobconform <command> -h\") for its flags, grouped, and examples.\n")
	return b.String()
}

// wrap breaks s into lines of at most width characters, at spaces.
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			lines, line = append(lines, line), ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}

func noContext(f func(args []string) error) func(context.Context, []string) error {
	return func(_ context.Context, args []string) error { return f(args) }
}

// ownsWith runs a controller's command line in this process.
func ownsWith(name string, run func(args []string) error) func([]string) int {
	return func(args []string) int {
		if err := run(args); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			return 1
		}
		return 0
	}
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage())
		os.Exit(2)
	}
	name, args := os.Args[1], os.Args[2:]
	if name == "help" && len(args) > 0 { // help CMD: CMD's -h
		name, args = args[0], []string{"-h"}
	}
	if name == "-h" || name == "--help" || name == "help" {
		fmt.Print(usage())
		return
	}
	i := slices.IndexFunc(commands, func(c subcommand) bool { return c.name == name })
	if i < 0 {
		fmt.Fprintf(os.Stderr, "unknown command %q\n\n%s", name, usage())
		os.Exit(2)
	}
	c := commands[i]
	if c.owns != nil {
		os.Exit(c.owns(args))
	}
	if announced[name] {
		fmt.Fprintln(os.Stderr, "jobconform:", buildinfo.Read())
	}
	ctx, got, stop := signalContext()
	err := c.run(ctx, args)
	stop()
	code := exitStatus(err)
	if code == exitInterrupted && got() == syscall.SIGTERM {
		code = exitTerminated
	}
	for _, f := range slices.Backward(exitHooks) {
		f()
	}
	os.Exit(code)
}

// exitHooks run when the command has returned, before jobconform exits
// (os.Exit runs no deferred call): the removal of files it made for the
// run alone.
var exitHooks []func()

func atExit(f func()) { exitHooks = append(exitHooks, f) }

// signalContext is a context ended by SIGINT or SIGTERM, and which of the
// two ended it (nil: neither).
func signalContext() (context.Context, func() os.Signal, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	var mu sync.Mutex
	var got os.Signal
	go func() {
		select {
		case s := <-ch:
			mu.Lock()
			got = s
			mu.Unlock()
			cancel()
		case <-ctx.Done():
		}
	}()
	which := func() os.Signal { mu.Lock(); defer mu.Unlock(); return got }
	return ctx, which, func() { signal.Stop(ch); cancel() }
}

// The exit codes, one table (docs/running.md, "Exit codes").
const (
	exitHeld        = 0   // every promise held
	exitBroken      = 1   // a controller broke a promise (or a gate asked for failed)
	exitBadInput    = 2   // the user's input: a flag, a scenario, a cluster that is not there
	exitHarness     = 3   // the harness or its infrastructure failed: a build, a cluster, a spec that could not run
	exitInterrupted = 130 // Ctrl-C (SIGINT)
	exitTerminated  = 143 // SIGTERM
)

// harnessError marks a failure of the harness or its infrastructure, not
// of the controller under test (exit 3): a CI may retry it.
type harnessError struct{ error }

func (h harnessError) Unwrap() error { return h.error }

// brokenError marks the verdict: a controller broke a promise (exit 1),
// which no retry changes. It wins over a harness failure beside it.
type brokenError struct{ error }

func (b brokenError) Unwrap() error { return b.error }

// exitStatus prints err and tells the exit code: 0 (also after -h), 130
// when interrupted, 2 on the user's input, 1 when a controller broke a
// promise, 3 when the harness failed and none did; 1 for any other error.
func exitStatus(err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) { // -h: the flags were printed
		return exitHeld
	}
	fmt.Fprintln(os.Stderr, "jobconform:", err)
	switch {
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.As(err, new(usageError)):
		return exitBadInput
	case errors.As(err, new(brokenError)):
		return exitBroken
	case errors.As(err, new(harnessError)):
		fmt.Fprintln(os.Stderr, "jobconform: the harness or its infrastructure failed, not a controller under test (exit code 3: a retry may pass)")
		return exitHarness
	}
	return exitBroken
}

// parseFlags parses a subcommand's flags: -h prints them to stdout (and
// the command ends with exit code 0); a bad flag is one line, once, with
// where to read the flags (exit code 2) — not the flag package's message
// and usage on stderr followed by the same message again.
func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printHelp(os.Stdout, fs)
		return err
	case err != nil:
		return usageError{fmt.Errorf("%w (jobconform %s -h lists the flags)", err, fs.Name())}
	}
	return nil
}
