package k8sbin

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/internal/options"
)

// mirror is a local HTTP server laid out like dl.k8s.io/release (under
// /k8s) and etcd's GitHub releases (under /etcd), serving files from the
// binary cache where this machine has them (so the bytes are a release's
// real binaries), else, and in -short, small stand-ins.
type mirror struct {
	srv   *httptest.Server
	files map[string][]byte // URL path → content
	want  map[Binary][]byte // what each binary must be once installed
}

const mirrorRelease = "v1.37.1"

func newMirror(t *testing.T, etcdVersion string) *mirror {
	t.Helper()
	m := &mirror{files: map[string][]byte{}, want: map[Binary][]byte{}}
	cache, _ := options.CacheDir()
	content := func(path string, b Binary) []byte {
		if testing.Short() {
			return []byte("#!/bin/sh\necho stand-in for " + string(b) + "\n")
		}
		if data, err := os.ReadFile(path); err == nil && len(data) > 0 {
			return data
		}
		return []byte("#!/bin/sh\necho stand-in for " + string(b) + "\n")
	}
	for _, b := range []Binary{APIServer, ControllerManager, Scheduler, Kubelet} {
		data := content(filepath.Join(cache, "kubernetes", mirrorRelease, string(b)), b)
		p := fmt.Sprintf("/k8s/%s/bin/%s/%s/%s", mirrorRelease, runtime.GOOS, runtime.GOARCH, b)
		m.files[p] = data
		m.files[p+".sha256"] = []byte(digest(data) + "\n")
		m.want[b] = data
	}
	etcd := content(filepath.Join(cache, "etcd", etcdVersion, string(Etcd)), Etcd)
	name := fmt.Sprintf("etcd-%s-%s-%s", etcdVersion, runtime.GOOS, runtime.GOARCH)
	tarball := tarGz(t, map[string][]byte{name + "/README.md": []byte("etcd\n"), name + "/etcd": etcd, name + "/etcdctl": []byte("ctl")})
	m.files["/etcd/"+etcdVersion+"/"+name+".tar.gz"] = tarball
	m.files["/etcd/"+etcdVersion+"/SHA256SUMS"] = []byte(fmt.Sprintf("%s  %s.zip\n%s  %s.tar.gz\n", digest([]byte("other")), name, digest(tarball), name))
	m.want[Etcd] = etcd
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, ok := m.files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		_, _ = w.Write(data)
	}))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *mirror) binaries(source string) *options.Binaries {
	return &options.Binaries{Source: source, KubernetesURL: m.srv.URL + "/k8s", EtcdURL: m.srv.URL + "/etcd"}
}

func digest(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

func tarGz(t *testing.T, members map[string][]byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, data := range members {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(tw.Close(), zw.Close()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The etcd release Kubernetes v1.37.1 runs with, as a build records it.
func mirrorEtcd(t *testing.T) string {
	t.Helper()
	gomod, err := (&Builder{}).kubernetesGoMod(context.Background(), mirrorRelease)
	if err != nil {
		t.Skipf("the Go module proxy does not answer for k8s.io/kubernetes %s: %v", mirrorRelease, err)
	}
	ev, err := requiredEtcd(gomod, mirrorRelease)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func installed(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("not installed: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes (sha256 %s), want the mirror's %d (%s)", path, len(got), digest(got)[:12], len(want), digest(want)[:12])
	}
	if st, _ := os.Stat(path); st.Mode()&0o111 == 0 {
		t.Fatalf("%s is not executable", path)
	}
}

// --binaries download: a release's control plane, its etcd and its kubelet
// come from the mirror into an empty cache, each checked against its
// published checksum, and are then as cached as built ones.
func TestDownloadFromMirror(t *testing.T) {
	ev := mirrorEtcd(t)
	m := newMirror(t, ev)
	var log strings.Builder
	b := &Builder{CacheDir: t.TempDir(), Progress: &log, Binaries: m.binaries("download")}
	set := &Set{Version: mirrorRelease, paths: map[Binary]string{}}
	if err := b.ensureRelease(context.Background(), b.CacheDir, set); err != nil {
		t.Fatal(err)
	}
	if set.EtcdVersion != ev {
		t.Errorf("etcd %s, want %s (what v1.37.1's go.mod requires)", set.EtcdVersion, ev)
	}
	for _, bin := range []Binary{APIServer, ControllerManager, Scheduler, Etcd} {
		installed(t, set.Path(bin), m.want[bin])
	}
	kubelet, err := b.EnsureKubelet(context.Background(), mirrorRelease)
	if err != nil {
		t.Fatal(err)
	}
	installed(t, kubelet, m.want[Kubelet])
	if n := strings.Count(log.String(), "checksum verified"); n != 5 {
		t.Errorf("%d downloads verified, want 5:\n%s", n, log.String())
	}
	if strings.Contains(log.String(), "building") {
		t.Errorf("built something although every download was there:\n%s", log.String())
	}
}

// A file whose bytes do not match its published checksum is refused, and
// nothing of it is cached: the next run tries again.
func TestCorruptDownloadRefused(t *testing.T) {
	ev := mirrorEtcd(t)
	m := newMirror(t, ev)
	p := fmt.Sprintf("/k8s/%s/bin/%s/%s/%s", mirrorRelease, runtime.GOOS, runtime.GOARCH, Scheduler)
	corrupt := bytes.Clone(m.files[p])
	corrupt[len(corrupt)/2] ^= 0xff
	m.files[p] = corrupt
	b := &Builder{CacheDir: t.TempDir(), Progress: &testWriter{t}, Binaries: m.binaries("download")}
	set := &Set{Version: mirrorRelease, paths: map[Binary]string{}}
	err := b.ensureRelease(context.Background(), b.CacheDir, set)
	if err == nil || !strings.Contains(err.Error(), "refused (a corrupt or tampered download)") || !strings.Contains(err.Error(), "--binaries build") {
		t.Fatalf("err = %v, want the corrupt kube-scheduler refused, saying what to do", err)
	}
	left, _ := filepath.Glob(filepath.Join(b.CacheDir, "kubernetes", "*", "*"))
	for _, f := range left {
		if !strings.HasSuffix(f, ".lock") {
			t.Errorf("%s was left in the cache", f)
		}
	}
	// A corrupt tarball of etcd, likewise.
	m = newMirror(t, ev)
	name := fmt.Sprintf("/etcd/%s/etcd-%s-%s-%s.tar.gz", ev, ev, runtime.GOOS, runtime.GOARCH)
	m.files[name] = append(bytes.Clone(m.files[name]), 0)
	b = &Builder{CacheDir: t.TempDir(), Progress: &testWriter{t}, Binaries: m.binaries("download")}
	if err := b.ensureRelease(context.Background(), b.CacheDir, &Set{Version: mirrorRelease, paths: map[Binary]string{}}); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err = %v, want the corrupt etcd tarball refused", err)
	}
	if present(filepath.Join(b.CacheDir, "etcd", ev), []Binary{Etcd}) {
		t.Error("the corrupt etcd was cached")
	}
}

// --binaries auto: what the mirror lacks (etcd here) is built from its Go
// module instead, saying so; what it has is downloaded.
func TestAutoFallsBackToBuilding(t *testing.T) {
	if testing.Short() {
		t.Skip("builds etcd from its Go module (a minute on a cold build cache)")
	}
	ev := mirrorEtcd(t)
	m := newMirror(t, ev)
	delete(m.files, "/etcd/"+ev+"/SHA256SUMS")
	var log strings.Builder
	b := &Builder{CacheDir: t.TempDir(), Progress: &log, Binaries: m.binaries("auto")}
	set := &Set{Version: mirrorRelease, paths: map[Binary]string{}}
	if err := b.ensureRelease(context.Background(), b.CacheDir, set); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	installed(t, set.Path(APIServer), m.want[APIServer])
	if !strings.Contains(log.String(), "could not download etcd "+ev) || !strings.Contains(log.String(), "building it from Go modules instead") ||
		!strings.Contains(log.String(), "built etcd "+ev) {
		t.Errorf("the fallback is not shown:\n%s", log.String())
	}
	if st, err := os.Stat(set.Path(Etcd)); err != nil || st.Size() < 1<<20 {
		t.Errorf("etcd not built: %v", err)
	}
}

// Only the three sources are accepted, from the flag or the environment.
func TestBinariesSetting(t *testing.T) {
	t.Setenv("JOBCONFORM_BINARIES", "fetch")
	if _, err := options.BinariesFromEnv(); err == nil || !strings.Contains(err.Error(), "build, download, auto") {
		t.Errorf("err = %v, want the three values named", err)
	}
	t.Setenv("JOBCONFORM_BINARIES", "")
	t.Setenv("JOBCONFORM_KUBERNETES_DOWNLOAD_URL", "dl.example/release")
	if _, err := options.BinariesFromEnv(); err == nil || !strings.Contains(err.Error(), "http(s) URL") {
		t.Errorf("err = %v, want a URL asked for", err)
	}
	t.Setenv("JOBCONFORM_KUBERNETES_DOWNLOAD_URL", "")
	got, err := options.BinariesFromEnv()
	if err != nil || got.Source != "build" || got.KubernetesURL != options.KubernetesDownloads {
		t.Errorf("default: %+v, %v; want build from the official sites", got, err)
	}
	// download mode with an unreachable mirror says what to do.
	b := &Builder{CacheDir: t.TempDir(), Progress: &testWriter{t},
		Binaries: &options.Binaries{Source: "download", KubernetesURL: "http://127.0.0.1:1/k8s", EtcdURL: "http://127.0.0.1:1/etcd"}}
	err = b.obtain(t.TempDir(), "Kubernetes "+mirrorRelease, func() error {
		return b.downloadKubernetes(context.Background(), mirrorRelease, t.TempDir(), []Binary{Kubelet}, false)
	}, func() error { t.Fatal("built under --binaries download"); return nil })
	if err == nil || !strings.Contains(err.Error(), "--binaries build") {
		t.Errorf("err = %v, want the download's failure and what to do", err)
	}
}
