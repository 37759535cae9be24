package k8sbin

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestGoBinaryName(t *testing.T) {
	for pkg, want := range map[string]string{
		"go.etcd.io/etcd/server/v3":            "server",
		"k8s.io/kubernetes/cmd/kube-apiserver": "kube-apiserver",
		"sigs.k8s.io/kwok/cmd/kwok":            "kwok",
		"example.com/v2tools":                  "v2tools",
	} {
		if got := goBinaryName(pkg); got != want {
			t.Errorf("goBinaryName(%s) = %s, want %s", pkg, got, want)
		}
	}
}

// fakeBuild writes executables for bins into tmp/out, as buildModule does.
func fakeBuild(bins ...Binary) func(tmp string) error {
	return func(tmp string) error {
		if err := os.MkdirAll(filepath.Join(tmp, "out"), 0o755); err != nil {
			return err
		}
		for _, b := range bins {
			if err := os.WriteFile(filepath.Join(tmp, "out", string(b)), []byte("#!/bin/true\n"), 0o755); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestEnsureBuildsOnceAndReuses(t *testing.T) {
	b := &Builder{CacheDir: t.TempDir(), Progress: &testWriter{t}}
	dir := filepath.Join(b.CacheDir, "x", "v1")
	var builds atomic.Int32
	build := func(tmp string) error { builds.Add(1); return fakeBuild(APIServer, Scheduler)(tmp) }

	var wg sync.WaitGroup
	for i := 0; i < 4; i++ { // concurrent callers wait for one build
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.ensure(context.Background(), dir, []Binary{APIServer, Scheduler}, build); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Fatalf("built %d times, want once", n)
	}
	if !present(dir, []Binary{APIServer, Scheduler}) {
		t.Fatal("binaries not installed")
	}
	if err := b.ensure(context.Background(), dir, []Binary{APIServer, Scheduler}, build); err != nil || builds.Load() != 1 {
		t.Fatalf("cached binaries rebuilt (builds=%d, err=%v)", builds.Load(), err)
	}
}

func TestEnsureFailedBuildLeavesNothing(t *testing.T) {
	b := &Builder{CacheDir: t.TempDir(), Progress: &testWriter{t}}
	dir := filepath.Join(b.CacheDir, "x", "v1")
	boom := errors.New("compiler exploded")
	err := b.ensure(context.Background(), dir, []Binary{APIServer, Scheduler}, func(tmp string) error {
		// Half the work done, then failure: nothing may look cached.
		_ = fakeBuild(APIServer)(tmp)
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the build's error", err)
	}
	if _, err := os.Stat(filepath.Join(dir, string(APIServer))); !os.IsNotExist(err) {
		t.Fatalf("a failed build left %s behind", APIServer)
	}
	left, _ := filepath.Glob(filepath.Join(b.CacheDir, "x", ".v1.build-*"))
	if len(left) != 0 {
		t.Fatalf("temporary build directories left: %v", left)
	}
	// A build that "succeeds" without producing a binary is an error too.
	if err := b.ensure(context.Background(), dir, []Binary{APIServer, Scheduler}, fakeBuild(APIServer)); err == nil {
		t.Fatal("incomplete build accepted")
	}
}

func TestEnsureRejectsBadVersionBeforeWork(t *testing.T) {
	b := &Builder{CacheDir: t.TempDir()}
	if _, err := b.Ensure(context.Background(), "v1.29.0"); err == nil {
		t.Fatal("unsupported version accepted")
	}
	entries, _ := os.ReadDir(b.CacheDir)
	if len(entries) != 0 {
		t.Fatalf("cache touched for a rejected version: %v", entries)
	}
}

type testWriter struct{ t *testing.T }

func (w *testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

func TestProxyHint(t *testing.T) {
	if h := proxyHint("reading https://proxy.golang.org/k8s.io/csi-translation-lib/@v/v0.32.13.zip: 403 Forbidden\n\tserver response: This module version is not available."); !strings.Contains(h, "another patch release") {
		t.Errorf("refused module: hint %q", h)
	}
	if h := proxyHint("k8s.io/kubelet@v0.31.13: verifying module: k8s.io/kubelet@v0.31.13: reading https://proxy.golang.org/sumdb/sum.golang.org/lookup/k8s.io/kubelet@v0.31.13: 404 Not Found"); !strings.Contains(h, "GONOSUMDB=k8s.io") {
		t.Errorf("checksum database: hint %q", h)
	}
	if h := proxyHint("undefined: foo"); h != "" {
		t.Errorf("a compile error got a proxy hint: %q", h)
	}
}

// A second builder waits for the first's lock, says so, and gives up with
// its context; once the first lets go it gets the lock.
func TestLockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.lock")
	unlock, err := lockFile(context.Background(), path, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var said strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	if _, err := lockFile(ctx, path, &said); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("lock held elsewhere: err %v, want the context's deadline", err)
	}
	if !strings.Contains(said.String(), "waiting for another build holding "+path) {
		t.Errorf("progress %q does not say what it waits for", said.String())
	}
	unlock()
	again, err := lockFile(context.Background(), path, io.Discard)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	again()
}

// TestEnsureCached: with every binary cached, Ensure builds nothing (the
// release and kwok are looked up side by side) and returns each one's path
// and the etcd version the release's build recorded.
func TestEnsureCached(t *testing.T) {
	b := &Builder{CacheDir: t.TempDir(), Progress: &testWriter{t}}
	kdir := filepath.Join(b.CacheDir, "kubernetes", "v1.37.1")
	for dir, bins := range map[string][]Binary{
		kdir: {APIServer, ControllerManager, Scheduler},
		filepath.Join(b.CacheDir, "etcd", "v3.7.0"):    {Etcd},
		filepath.Join(b.CacheDir, "kwok", KwokVersion): {Kwok},
	} {
		tmp := t.TempDir()
		if err := fakeBuild(bins...)(tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(tmp, "out"), dir); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(kdir, "etcd-version"), []byte("v3.7.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := b.Ensure(context.Background(), "v1.37.1")
	if err != nil {
		t.Fatal(err)
	}
	if set.EtcdVersion != "v3.7.0" {
		t.Errorf("EtcdVersion = %q, want v3.7.0", set.EtcdVersion)
	}
	for bin, want := range map[Binary]string{
		APIServer: filepath.Join(kdir, "kube-apiserver"),
		Scheduler: filepath.Join(kdir, "kube-scheduler"),
		Etcd:      filepath.Join(b.CacheDir, "etcd", "v3.7.0", "etcd"),
		Kwok:      filepath.Join(b.CacheDir, "kwok", KwokVersion, "kwok"),
	} {
		if got := set.Path(bin); got != want {
			t.Errorf("Path(%s) = %s, want %s", bin, got, want)
		}
	}
	// A cache entry without its etcd version is reported, not guessed.
	if err := os.Remove(filepath.Join(kdir, "etcd-version")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Ensure(context.Background(), "v1.37.1"); err == nil || !strings.Contains(err.Error(), "lacks etcd-version") {
		t.Errorf("err = %v, want the missing etcd-version named", err)
	}
}

// A long go command reports a heartbeat with the lines it printed so far,
// and its failure carries the tail of its output.
func TestRunReportsProgress(t *testing.T) {
	var log strings.Builder
	var mu sync.Mutex
	b := &Builder{Progress: writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return log.Write(p) }), Heartbeat: 50 * time.Millisecond}
	if err := b.run(context.Background(), t.TempDir(), "a build", time.Now(), "sh", "-c", "echo pkg/a; echo pkg/b; sleep 0.3"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := log.String()
	mu.Unlock()
	if !strings.Contains(got, "a build … ") || !strings.Contains(got, "2 packages so far") {
		t.Errorf("no heartbeat with the count:\n%s", got)
	}
	err := b.run(context.Background(), t.TempDir(), "a build", time.Now(), "sh", "-c", "echo cannot find package x; exit 1")
	if err == nil || !strings.Contains(err.Error(), "cannot find package x") {
		t.Errorf("err = %v, want the output's tail", err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
