package k8sbin

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jobconform/jobconform/internal/options"
)

// The official release binaries, where they can be had, take seconds where
// building them takes minutes: kube-apiserver, kube-controller-manager,
// kube-scheduler and the kubelet as dl.k8s.io publishes them (each with a
// .sha256 beside it), etcd as its GitHub releases do (a tarball, and
// SHA256SUMS). kwok is always built: it is small, and its releases publish
// no checksums.

// binaries is where b's binaries come from (Builder.Binaries, else the
// environment's setting).
func (b *Builder) binaries() (options.Binaries, error) {
	if b.Binaries != nil {
		return *b.Binaries, nil
	}
	return options.BinariesFromEnv()
}

// obtain fills tmp/out with what for the cache: downloaded, built, or
// downloaded else built, as the source says.
func (b *Builder) obtain(tmp, what string, download, build func() error) error {
	src, err := b.binaries()
	if err != nil {
		return err
	}
	switch src.Source {
	case "download":
		if err := download(); err != nil {
			return fmt.Errorf("download %s: %w\n(--binaries build compiles it from Go modules instead; auto tries the download first)", what, err)
		}
		return nil
	case "auto":
		err := download()
		if err == nil {
			return nil
		}
		fmt.Fprintf(b.progress(), "could not download %s (%v): building it from Go modules instead\n", what, err)
		if err := os.RemoveAll(filepath.Join(tmp, "out")); err != nil {
			return err
		}
		return build()
	default:
		return build()
	}
}

// downloadKubernetes fetches bins of release v into tmp/out, each checked
// against its published .sha256; with withEtcd it also writes etcd-version,
// the etcd release v's go.mod requires (what a build records).
func (b *Builder) downloadKubernetes(ctx context.Context, v, tmp string, bins []Binary, withEtcd bool) error {
	src, err := b.binaries()
	if err != nil {
		return err
	}
	out := filepath.Join(tmp, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if withEtcd {
		gomod, err := b.kubernetesGoMod(ctx, v)
		if err != nil {
			return err
		}
		ev, err := requiredEtcd(gomod, v)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, "etcd-version"), []byte(ev+"\n"), 0o644); err != nil {
			return err
		}
	}
	for _, bin := range bins {
		u := fmt.Sprintf("%s/%s/bin/%s/%s/%s", src.KubernetesURL, v, runtime.GOOS, runtime.GOARCH, bin)
		sum, err := b.fetchText(ctx, u+".sha256")
		if err != nil {
			return err
		}
		want, err := hexDigest(strings.Fields(sum), u+".sha256")
		if err != nil {
			return err
		}
		if err := b.fetchVerified(ctx, u, want, filepath.Join(out, string(bin)), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// downloadEtcd fetches etcd release ev's tarball into tmp, checked against
// the release's SHA256SUMS, and unpacks its etcd into tmp/out.
func (b *Builder) downloadEtcd(ctx context.Context, ev, tmp string) error {
	src, err := b.binaries()
	if err != nil {
		return err
	}
	name := fmt.Sprintf("etcd-%s-%s-%s.tar.gz", ev, runtime.GOOS, runtime.GOARCH)
	sums, err := b.fetchText(ctx, src.EtcdURL+"/"+ev+"/SHA256SUMS")
	if err != nil {
		return err
	}
	var want string
	sc := bufio.NewScanner(strings.NewReader(sums))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && strings.TrimPrefix(f[1], "*") == name {
			if want, err = hexDigest(f[:1], src.EtcdURL+"/"+ev+"/SHA256SUMS"); err != nil {
				return err
			}
		}
	}
	if want == "" {
		return fmt.Errorf("%s/%s/SHA256SUMS lists no %s", src.EtcdURL, ev, name)
	}
	tarball := filepath.Join(tmp, name)
	if err := b.fetchVerified(ctx, src.EtcdURL+"/"+ev+"/"+name, want, tarball, 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(tmp, "out"), 0o755); err != nil {
		return err
	}
	return untarOne(tarball, path.Join(strings.TrimSuffix(name, ".tar.gz"), "etcd"), filepath.Join(tmp, "out", string(Etcd)))
}

// hexDigest is the SHA-256 a checksum file gives as its first field.
func hexDigest(fields []string, from string) (string, error) {
	if len(fields) == 0 {
		return "", fmt.Errorf("%s is empty", from)
	}
	d := strings.ToLower(fields[0])
	if b, err := hex.DecodeString(d); err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("%s does not start with a SHA-256 digest (%q)", from, fields[0])
	}
	return d, nil
}

func (b *Builder) client() *http.Client {
	if b.Client != nil {
		return b.Client
	}
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   30 * time.Second,
		ResponseHeaderTimeout: time.Minute,
	}}
}

func (b *Builder) get(ctx context.Context, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := b.client().Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return resp, nil
}

// fetchText is a small file's content (a checksum file).
func (b *Builder) fetchText(ctx context.Context, u string) (string, error) {
	resp, err := b.get(ctx, u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", u, err)
	}
	return string(data), nil
}

// fetchVerified downloads u to dst, reporting progress, and keeps it only
// when its SHA-256 is want: a corrupt or tampered file is removed and
// refused.
func (b *Builder) fetchVerified(ctx context.Context, u, want, dst string, mode os.FileMode) error {
	start := time.Now()
	fmt.Fprintf(b.progress(), "downloading %s\n", u)
	resp, err := b.get(ctx, u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
	if err != nil {
		return err
	}
	var n atomic.Int64
	stop := b.heartbeat(func() {
		total := "?"
		if resp.ContentLength > 0 {
			total = fmt.Sprintf("%.1f", float64(resp.ContentLength)/1e6)
		}
		fmt.Fprintf(b.progress(), "  %s … %.1f of %s MB, %s elapsed\n", path.Base(u), float64(n.Load())/1e6, total, time.Since(start).Round(time.Second))
	})
	h := sha256.New()
	_, err = io.Copy(io.MultiWriter(f, h, counter{&n}), resp.Body)
	stop()
	if err = errors.Join(err, f.Close()); err != nil {
		os.Remove(dst)
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		os.Remove(dst)
		return fmt.Errorf("%s: SHA-256 %s, but its published checksum is %s: refused (a corrupt or tampered download)", u, got, want)
	}
	fmt.Fprintf(b.progress(), "downloaded %s (%.1f MB, checksum verified) in %s\n", path.Base(u), float64(n.Load())/1e6, time.Since(start).Round(100*time.Millisecond))
	return nil
}

type counter struct{ n *atomic.Int64 }

func (c counter) Write(p []byte) (int, error) { c.n.Add(int64(len(p))); return len(p), nil }

// heartbeat calls beat every Heartbeat until the returned stop is called.
func (b *Builder) heartbeat(beat func()) (stop func()) {
	every := b.Heartbeat
	if every <= 0 {
		every = 20 * time.Second
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				beat()
			}
		}
	}()
	return func() { close(done); <-finished }
}

// untarOne writes the regular file member of a gzipped tarball to dst,
// executable.
func untarOne(tarball, member, dst string) error {
	f, err := os.Open(tarball)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", tarball, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return fmt.Errorf("%s has no %s", filepath.Base(tarball), member)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(tarball), err)
		}
		if path.Clean(h.Name) != member || h.Typeflag != tar.TypeReg {
			continue
		}
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, tr)
		return errors.Join(err, out.Close())
	}
}
