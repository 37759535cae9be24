package k8sbin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/jobconform/jobconform/internal/release"
)

// A kube-controller-manager built with Go's coverage instrumentation of
// upstream's Job controller (issue #69): what `--coverage` runs as the
// built-in, so that the statements of pkg/controller/job a run reached
// can be counted (internal/coverage reads them).

// CoveredPackages are the packages whose statements the covered build
// counts: upstream's Job controller and the packages under it.
const CoveredPackages = "k8s.io/kubernetes/pkg/controller/job/..."

// CoverBuild is a cached covered kube-controller-manager of one release.
type CoverBuild struct {
	Version string
	// ControllerManager writes its counters into $GOCOVERDIR: every
	// few seconds and on SIGTERM or SIGINT (coverMain).
	ControllerManager string
	// Module is the module it was built from: go tool cover and go test
	// run there find upstream's source (the module cache) through it.
	Module string
}

// coverMain is the command built: upstream's kube-controller-manager main
// (cmd/kube-controller-manager/controller-manager.go, the same imports),
// with a goroutine that keeps the process's counters on disk. Go writes
// them at exit, but a signal ends kube-controller-manager through paths
// (a second signal, the harness's kill after its grace, a chaos kill)
// that never reach it; so a snapshot is written every few seconds and at
// the first signal, each replacing the last (each is cumulative). A
// counters file Go writes at exit may stand beside the last snapshot:
// counts add up twice, what was reached is the same (all that is read).
const coverMain = `// Command kube-controller-manager is upstream's, built by jobconform with
// Go's coverage instrumentation; see jobconform's internal/k8sbin/cover.go.
package main

import (
	"os"
	"os/signal"
	"path/filepath"
	"runtime/coverage"
	"slices"
	"syscall"
	"time"
	_ "time/tzdata" // for CronJob Time Zone support

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	if dir := os.Getenv("GOCOVERDIR"); dir != "" {
		go keepCounters(dir)
	}
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}

func keepCounters(dir string) {
	_ = coverage.WriteMetaDir(dir)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	tick := time.NewTicker(` + "%d" + ` * time.Second)
	last := ""
	for {
		select {
		case <-tick.C:
		case <-signals:
		}
		last = snapshot(dir, last)
	}
}

// snapshot writes the counters so far and removes the file the last
// snapshot wrote (each holds every count since the start); it returns
// the new file's name. Only its own files: another process of the same
// pid may have written into dir before.
func snapshot(dir, last string) string {
	before, _ := filepath.Glob(filepath.Join(dir, "covcounters.*"))
	if coverage.WriteCountersDir(dir) != nil {
		return last
	}
	after, _ := filepath.Glob(filepath.Join(dir, "covcounters.*"))
	for _, f := range after {
		if !slices.Contains(before, f) {
			if last != "" {
				_ = os.Remove(last)
			}
			return f
		}
	}
	return last
}
`

// CoverInterval is how often the covered controller-manager writes its
// counters: what a SIGKILL (a chaos kill of the controller) can lose.
const CoverInterval = 5 * time.Second

// EnsureCovered returns release v's covered kube-controller-manager,
// building it (about as long as the plain one) unless it is cached.
func (b *Builder) EnsureCovered(ctx context.Context, v string) (*CoverBuild, error) {
	v, err := release.Parse(v)
	if err != nil {
		return nil, err
	}
	if _, err := exec.LookPath("go"); err != nil {
		return nil, fmt.Errorf("building the covered controller-manager of %s needs the go command on PATH: %w", v, err)
	}
	root, err := b.cacheDir()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, "kubernetes", v, "covered")
	cb := &CoverBuild{Version: v, ControllerManager: filepath.Join(dir, string(ControllerManager)), Module: filepath.Join(dir, "src")}
	err = b.ensure(ctx, dir, []Binary{ControllerManager}, func(tmp string) error {
		what := "the covered kube-controller-manager of " + v
		m, err := b.kubernetesModule(ctx, v)
		if err != nil {
			return err
		}
		start := time.Now()
		main := fmt.Sprintf(coverMain, int(CoverInterval/time.Second))
		src, err := b.writeModule(ctx, tmp, what, "k8s.io/kubernetes", v, m.pins, map[string]string{"main.go": main})
		if err != nil {
			return err
		}
		args := []string{"build", "-v", "-trimpath", "-cover", "-covermode=atomic",
			"-coverpkg=" + buildModulePath + "," + CoveredPackages,
			"-ldflags", strings.TrimSpace("-s -w " + m.ldflags),
			"-o", filepath.Join(tmp, "out", string(ControllerManager)), "."}
		if err := b.run(ctx, src, what+": compiling", start, "go", args...); err != nil {
			return fmt.Errorf("build %s: %w", what, err)
		}
		fmt.Fprintf(b.progress(), "built %s in %s\n", what, time.Since(start).Round(time.Second))
		// The module goes along: go tool cover -html and go test run in it.
		return os.Rename(src, filepath.Join(tmp, "out", "src"))
	})
	if err != nil {
		return nil, err
	}
	return cb, nil
}
