package k8sbin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"

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
