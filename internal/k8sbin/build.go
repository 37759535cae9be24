package k8sbin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"
	"golang.org/x/mod/modfile"

	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/release"
)

// Binary names one executable of a cluster.
type Binary string

// The binaries a local cluster runs.
const (
	Etcd              Binary = "etcd"
	APIServer         Binary = "kube-apiserver"
	ControllerManager Binary = "kube-controller-manager"
	Scheduler         Binary = "kube-scheduler"
	Kubelet           Binary = "kubelet" // built only for kubelet nodes (EnsureKubelet)
	Kwok              Binary = "kwok"
)

// KwokVersion is the kwok release whose controller simulates the nodes.
const KwokVersion = "v0.8.0"

// Set is the binaries of one Kubernetes version, all present on disk.
type Set struct {
	Version     string // Kubernetes release, vX.Y.Z
	EtcdVersion string // etcd release built for it (the client version Kubernetes requires)
	paths       map[Binary]string
}

// Path returns the executable of b.
func (s *Set) Path(b Binary) string { return s.paths[b] }

// Builder builds and caches binaries.
type Builder struct {
	// CacheDir holds the binaries; default: $JOBCONFORM_CACHE_DIR, else
	// <user cache dir>/jobconform.
	CacheDir string
	// Progress receives one line per step and a heartbeat during long builds;
	// nil means os.Stderr.
	Progress io.Writer
	// Heartbeat is how often a running build or download reports; default 20s.
	Heartbeat time.Duration
	// Binaries says whether to build, download, or try downloading first
	// (download.go); nil: the environment's setting (options.BinariesFromEnv).
	Binaries *options.Binaries
	// Client fetches downloads; nil: a client with the environment's proxy.
	Client *http.Client

	mu sync.Mutex // one progress line at a time: builds run side by side
}

func (b *Builder) progress() io.Writer { return lockedWriter{b} }

type lockedWriter struct{ b *Builder }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.b.mu.Lock()
	defer w.b.mu.Unlock()
	if w.b.Progress == nil {
		return os.Stderr.Write(p)
	}
	return w.b.Progress.Write(p)
}

func (b *Builder) cacheDir() (string, error) {
	if b.CacheDir != "" {
		return b.CacheDir, nil
	}
	return options.CacheDir()
}

// Ensure returns the binaries of Kubernetes version v (see ParseVersion),
// building whatever is not cached yet. Concurrent callers, in this process or
// others, wait for one build instead of racing it.
func (b *Builder) Ensure(ctx context.Context, v string) (*Set, error) {
	v, err := release.Parse(v)
	if err != nil {
		return nil, err
	}
	if _, err := exec.LookPath("go"); err != nil {
		return nil, fmt.Errorf("building Kubernetes %s needs the go command on PATH: %w", v, err)
	}
	root, err := b.cacheDir()
	if err != nil {
		return nil, err
	}
	set := &Set{Version: v, paths: map[Binary]string{}}

	// kwok needs nothing of the release, so a cold kwok build (minutes) runs
	// beside the release's, using the cores while that one waits on the
	// module proxy or links. Neither cancels the other: a failed kwok build
	// must not throw away minutes of the release's, which stays cached.
	wdir := filepath.Join(root, "kwok", KwokVersion)
	set.paths[Kwok] = filepath.Join(wdir, string(Kwok))
	var kwokErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		kwokErr = b.ensure(ctx, wdir, []Binary{Kwok}, func(tmp string) error {
			return b.buildModule(ctx, tmp, "kwok "+KwokVersion, "sigs.k8s.io/kwok", KwokVersion, nil,
				map[string]Binary{"sigs.k8s.io/kwok/cmd/kwok": Kwok},
				"-X sigs.k8s.io/kwok/pkg/consts.Version="+strings.TrimPrefix(KwokVersion, "v"))
		})
	}()
	releaseErr := b.ensureRelease(ctx, root, set)
	wg.Wait()
	if err := errors.Join(releaseErr, kwokErr); err != nil {
		return nil, err
	}
	return set, nil
}

// ensureRelease builds the control plane of set.Version, then the etcd its
// go.mod names, into set.
func (b *Builder) ensureRelease(ctx context.Context, root string, set *Set) error {
	v := set.Version
	kdir := filepath.Join(root, "kubernetes", v)
	// No kubectl: nothing the harness runs needs it (the harness uses client-go),
	// and it costs minutes of a cold start.
	k8sBins := []Binary{APIServer, ControllerManager, Scheduler}
	paths := map[Binary]string{}
	for _, bin := range k8sBins {
		paths[bin] = filepath.Join(kdir, string(bin))
	}
	err := b.ensure(ctx, kdir, k8sBins, func(tmp string) error {
		return b.obtain(tmp, "Kubernetes "+v, func() error {
			return b.downloadKubernetes(ctx, v, tmp, k8sBins, true)
		}, func() error {
			return b.buildKubernetes(ctx, v, tmp, map[string]Binary{
				"k8s.io/kubernetes/cmd/kube-apiserver":          APIServer,
				"k8s.io/kubernetes/cmd/kube-controller-manager": ControllerManager,
				"k8s.io/kubernetes/cmd/kube-scheduler":          Scheduler,
			})
		})
	})
	if err != nil {
		return err
	}

	etcdVersion, err := os.ReadFile(filepath.Join(kdir, "etcd-version"))
	if err != nil {
		return fmt.Errorf("cache entry %s lacks etcd-version (%v): delete that directory to rebuild it", kdir, err)
	}
	ev := strings.TrimSpace(string(etcdVersion))
	edir := filepath.Join(root, "etcd", ev)
	paths[Etcd] = filepath.Join(edir, string(Etcd))
	err = b.ensure(ctx, edir, []Binary{Etcd}, func(tmp string) error {
		return b.obtain(tmp, "etcd "+ev, func() error {
			return b.downloadEtcd(ctx, ev, tmp)
		}, func() error {
			return b.buildModule(ctx, tmp, "etcd "+ev, "go.etcd.io/etcd/server/v3", ev, nil,
				map[string]Binary{"go.etcd.io/etcd/server/v3": Etcd}, "")
		})
	})
	if err != nil {
		return err
	}
	// The only writes to set while the kwok build runs: that one wrote its
	// path before either started.
	set.EtcdVersion = ev
	for bin, p := range paths {
		set.paths[bin] = p
	}
	return nil
}

// EnsureKubelet returns the kubelet of release v, building it (into the same
// cache entry as the control plane) when it is not there yet. It is separate
// from Ensure because only clusters with kubelet nodes need it.
func (b *Builder) EnsureKubelet(ctx context.Context, v string) (string, error) {
	v, err := release.Parse(v)
	if err != nil {
		return "", err
	}
	if _, err := exec.LookPath("go"); err != nil {
		return "", fmt.Errorf("building the kubelet of %s needs the go command on PATH: %w", v, err)
	}
	root, err := b.cacheDir()
	if err != nil {
		return "", err
	}
	kdir := filepath.Join(root, "kubernetes", v)
	err = b.ensure(ctx, kdir, []Binary{Kubelet}, func(tmp string) error {
		return b.obtain(tmp, "the kubelet of "+v, func() error {
			return b.downloadKubernetes(ctx, v, tmp, []Binary{Kubelet}, false)
		}, func() error {
			return b.buildKubernetes(ctx, v, tmp, map[string]Binary{"k8s.io/kubernetes/cmd/kubelet": Kubelet})
		})
	})
	return filepath.Join(kdir, string(Kubelet)), err
}

// ensure builds bins into dir unless they are all there. build writes its
// results into a temporary directory beside dir; they are renamed into place
// only when the build succeeded, so a half-written binary never looks cached.
func (b *Builder) ensure(ctx context.Context, dir string, bins []Binary, build func(tmp string) error) error {
	if present(dir, bins) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("cache directory: %w", err)
	}
	unlock, err := lockFile(ctx, dir+".lock", b.progress())
	if err != nil {
		return err
	}
	defer unlock()
	if present(dir, bins) { // built by whoever held the lock
		return nil
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".build-")
	if err != nil {
		return fmt.Errorf("cache directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := build(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Side files (etcd-version) first, binaries last: present() looks only at binaries.
	entries, err := os.ReadDir(filepath.Join(tmp, "out"))
	if err != nil {
		return err
	}
	isBin := map[string]bool{}
	for _, bin := range bins {
		isBin[string(bin)] = true
	}
	for _, last := range []bool{false, true} {
		for _, e := range entries {
			if isBin[e.Name()] == last {
				if err := os.Rename(filepath.Join(tmp, "out", e.Name()), filepath.Join(dir, e.Name())); err != nil {
					return fmt.Errorf("install %s: %w", e.Name(), err)
				}
			}
		}
	}
	if !present(dir, bins) {
		return fmt.Errorf("build of %s finished without producing %v", dir, bins)
	}
	return nil
}

func present(dir string, bins []Binary) bool {
	for _, bin := range bins {
		st, err := os.Stat(filepath.Join(dir, string(bin)))
		if err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// lockFile takes an exclusive flock on path, telling the user when it has to wait.
func lockFile(ctx context.Context, path string, progress io.Writer) (func(), error) {
	l := flock.New(path)
	ok, err := l.TryLock()
	if err == nil && !ok {
		fmt.Fprintf(progress, "waiting for another build holding %s\n", path)
		_, err = l.TryLockContext(ctx, 500*time.Millisecond)
	}
	if err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { _ = l.Close() }, nil
}

// buildKubernetes builds commands (package → binary) of release v, as
// architecture.md describes: a throwaway module requiring k8s.io/kubernetes and
// pinning every staging module to the matching v0.Y.Z.
func (b *Builder) buildKubernetes(ctx context.Context, v, tmp string, commands map[string]Binary) error {
	gomod, err := b.kubernetesGoMod(ctx, v)
	if err != nil {
		return err
	}
	var replaces []string
	for _, r := range gomod.Replace {
		if strings.HasPrefix(r.New.Path, "./staging/") {
			replaces = append(replaces, r.Old.Path)
		}
	}
	if len(replaces) == 0 {
		return fmt.Errorf("k8s.io/kubernetes %s: go.mod has no staging replace block; cannot build it from modules", v)
	}
	etcdVersion, err := requiredEtcd(gomod, v)
	if err != nil {
		return err
	}
	sv := release.Staging(v)
	var pins []string
	for _, m := range replaces {
		pins = append(pins, fmt.Sprintf("\t%s => %s %s", m, m, sv))
	}
	minor := release.Minor(v)
	var ldflags []string
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		ldflags = append(ldflags,
			"-X "+pkg+".gitVersion="+v,
			"-X "+pkg+".gitMajor=1",
			fmt.Sprintf("-X %s.gitMinor=%d", pkg, minor),
			"-X "+pkg+".gitTreeState=clean")
	}
	err = b.buildModule(ctx, tmp, "Kubernetes "+v, "k8s.io/kubernetes", v, pins, commands, strings.Join(ldflags, " "))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(tmp, "out", "etcd-version"), []byte(etcdVersion+"\n"), 0o644)
}

// requiredEtcd is the etcd release Kubernetes v's go.mod requires the
// client of: the server release the cache pairs with it.
func requiredEtcd(gomod *modfile.File, v string) (string, error) {
	for _, r := range gomod.Require {
		if r.Mod.Path == "go.etcd.io/etcd/client/v3" {
			return r.Mod.Version, nil
		}
	}
	return "", fmt.Errorf("k8s.io/kubernetes %s: go.mod does not require go.etcd.io/etcd/client/v3; cannot tell which etcd it runs with", v)
}

// kubernetesGoMod fetches only go.mod of k8s.io/kubernetes@v (not the large zip).
func (b *Builder) kubernetesGoMod(ctx context.Context, v string) (*modfile.File, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-json", "k8s.io/kubernetes@"+v)
	cmd.Env = goEnv()
	cmd.Dir = os.TempDir()
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("look up k8s.io/kubernetes %s on the Go module proxy: %v%s", v, err, stderrOf(err))
	}
	var info struct {
		GoMod string
		Error *struct{ Err string }
	}
	if err := json.Unmarshal(out, &info); err != nil {
		return nil, fmt.Errorf("go list -m k8s.io/kubernetes@%s: %w", v, err)
	}
	if info.Error != nil {
		return nil, fmt.Errorf("k8s.io/kubernetes %s: %s (is it a published release?)", v, info.Error.Err)
	}
	data, err := os.ReadFile(info.GoMod)
	if err != nil {
		return nil, err
	}
	return modfile.Parse(info.GoMod, data, nil)
}

// buildModule writes a throwaway module in tmp that requires mod@version,
// resolves it and builds each package of pkgs into tmp/out/<name>. sums,
// when given, is a go.sum to start from (a module's own, whose hashes its
// own verified hash vouches for: modules the checksum database lacks).
func (b *Builder) buildModule(ctx context.Context, tmp, what, mod, version string, pins []string, pkgs map[string]Binary, ldflags string, sums ...string) error {
	start := time.Now()
	fmt.Fprintf(b.progress(), "building %s from Go modules (first build takes minutes; cached afterwards)\n", what)
	src := filepath.Join(tmp, "src")
	if err := os.MkdirAll(filepath.Join(tmp, "out"), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	gomod := fmt.Sprintf("module jobconform.local/build\n\ngo 1.24\n\nrequire %s %s\n", mod, version)
	if len(pins) > 0 {
		gomod += "\nreplace (\n" + strings.Join(pins, "\n") + "\n)\n"
	}
	var imports []string
	var targets []string
	for pkg := range pkgs {
		imports = append(imports, fmt.Sprintf("\t_ %q", pkg))
		targets = append(targets, pkg)
	}
	tools := "//go:build tools\n\npackage tools\n\nimport (\n" + strings.Join(imports, "\n") + "\n)\n"
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte(gomod), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(src, "tools.go"), []byte(tools), 0o644); err != nil {
		return err
	}
	for _, sum := range sums {
		data, err := os.ReadFile(sum)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(src, "go.sum"), data, 0o644); err != nil {
			return err
		}
	}
	if err := b.run(ctx, src, what+": resolving modules", start, "go", "mod", "tidy"); err != nil {
		return fmt.Errorf("resolve modules for %s: %w%s", what, err, proxyHint(err.Error()))
	}
	args := []string{"build", "-v", "-trimpath", "-ldflags", strings.TrimSpace("-s -w " + ldflags), "-o", filepath.Join(tmp, "bin") + string(filepath.Separator)}
	args = append(args, targets...)
	if err := b.run(ctx, src, what+": compiling", start, "go", args...); err != nil {
		return fmt.Errorf("build %s: %w", what, err)
	}
	for pkg, bin := range pkgs {
		if err := os.Rename(filepath.Join(tmp, "bin", goBinaryName(pkg)), filepath.Join(tmp, "out", string(bin))); err != nil {
			return fmt.Errorf("build %s: %s not produced: %w", what, pkg, err)
		}
	}
	fmt.Fprintf(b.progress(), "built %s in %s\n", what, time.Since(start).Round(time.Second))
	return nil
}

// goBinaryName is the file name "go build -o dir/" gives pkg's executable: the
// last path element, or the one before a major-version suffix (…/server/v3 → server).
func goBinaryName(pkg string) string {
	elems := strings.Split(pkg, "/")
	last := elems[len(elems)-1]
	if len(elems) > 1 && len(last) > 1 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
		return elems[len(elems)-2]
	}
	return last
}

// run runs a go command, reporting a heartbeat with the number of packages
// compiled so far, and returns the tail of its output on failure.
func (b *Builder) run(ctx context.Context, dir, what string, start time.Time, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = goEnv()
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.Stderr = pw
	var lines atomic.Int64
	tail := make([]string, 0, 40)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines.Add(1)
			if len(tail) == cap(tail) {
				tail = tail[1:]
			}
			tail = append(tail, sc.Text())
		}
	}()
	if err := cmd.Start(); err != nil {
		pw.Close()
		<-done
		return err
	}
	stop := b.heartbeat(func() {
		fmt.Fprintf(b.progress(), "  %s … %s elapsed, %d packages so far\n",
			what, time.Since(start).Round(time.Second), lines.Load())
	})
	err := cmd.Wait()
	pw.Close()
	stop()
	<-done
	if err != nil {
		return fmt.Errorf("%v\n%s", err, strings.Join(tail, "\n"))
	}
	return nil
}

// goEnv is the environment for go commands on throwaway modules: module mode,
// no workspace, no vendoring flags inherited from the caller.
func goEnv() []string {
	env := os.Environ()
	return append(env, "GOWORK=off", "GOFLAGS=-mod=mod", "GO111MODULE=on")
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return ": " + strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}

// proxyHint says what to do when the module proxy or the checksum database
// refused a module (the go command's output is in out).
func proxyHint(out string) string {
	var hints []string
	if strings.Contains(out, "This module version is not available") {
		hints = append(hints, "the Go module proxy does not serve every module of this release (\"This module version is not available\"): "+
			"choose another patch release of the same minor (newer ones first; the proxy may serve an older one)")
	}
	if strings.Contains(out, "verifying module") && strings.Contains(out, "sumdb") {
		hints = append(hints, "the checksum database has no record of some of this release's modules: "+
			"to build them trusting the module proxy alone, run again with GONOSUMDB=k8s.io (an informed choice: the go command then cannot detect a tampered module)")
	}
	if len(hints) == 0 {
		return ""
	}
	return "\n" + strings.Join(hints, "\n")
}
