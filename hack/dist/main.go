// Command dist builds jobconform's release archives (make dist, issue #71):
// for each platform a tar.gz of the binary, LICENSE and README.md, named
// jobconform_<version>_<os>_<arch>.tar.gz, and SHA256SUMS beside them. The
// binaries are static (CGO_ENABLED=0), built with -trimpath, carry the
// commit from git (-buildvcs=true) and the version stamped
// (internal/buildinfo); the one of this machine's platform is run once
// (jobconform version -o json) to check that it says both.
//
//	go run ./hack/dist -version v0.3.0 -out _dist linux/amd64 linux/arm64
package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

func main() {
	version := flag.String("version", "", "the version to stamp (default: git describe --tags --always --dirty)")
	out := flag.String("out", "_dist", "where the archives and SHA256SUMS go")
	flag.Parse()
	platforms := flag.Args()
	if len(platforms) == 0 {
		platforms = []string{"linux/amd64", "linux/arm64"}
	}
	if err := dist(*version, *out, platforms); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

// stampVar is the variable a release build sets (internal/buildinfo).
const stampVar = "github.com/jobconform/jobconform/internal/buildinfo.stamped"

func dist(version, out string, platforms []string) error {
	if version == "" {
		v, err := exec.Command("git", "describe", "--tags", "--always", "--dirty").Output()
		if err != nil {
			return fmt.Errorf("git describe (give -version where the tree has no git): %w", err)
		}
		version = strings.TrimSpace(string(v))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	sums := map[string]string{}
	for _, p := range platforms {
		goos, goarch, ok := strings.Cut(p, "/")
		if !ok {
			return fmt.Errorf("platform %q: write os/arch, e.g. linux/amd64", p)
		}
		start := time.Now()
		fmt.Fprintf(os.Stderr, "dist: building %s for %s ...\n", version, p)
		name, sum, err := archive(version, out, goos, goarch)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		sums[name] = sum
		fmt.Fprintf(os.Stderr, "dist: %s (%s)\n", filepath.Join(out, name), time.Since(start).Round(time.Second))
	}
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s  %s\n", sums[n], n)
	}
	return os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(b.String()), 0o644)
}

// archive builds the binary for goos/goarch, checks it where it can run,
// and writes its archive; it returns the archive's name and SHA-256.
func archive(version, out, goos, goarch string) (name, sum string, err error) {
	tmp, err := os.MkdirTemp("", "jobconform-dist-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "jobconform")
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=true", "-ldflags", "-s -w -X "+stampVar+"="+version, "-o", bin, "./cmd/jobconform")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("go build: %w", err)
	}
	if goos == runtime.GOOS && goarch == runtime.GOARCH {
		if err := check(bin, version); err != nil {
			return "", "", err
		}
	}
	name = fmt.Sprintf("jobconform_%s_%s_%s.tar.gz", version, goos, goarch)
	f, err := os.Create(filepath.Join(out, name))
	if err != nil {
		return "", "", err
	}
	h := sha256.New()
	if err := writeTarGz(io.MultiWriter(f, h), map[string]string{"jobconform": bin, "LICENSE": "LICENSE", "README.md": "README.md"}); err != nil {
		f.Close()
		return "", "", err
	}
	if err := f.Close(); err != nil {
		return "", "", err
	}
	return name, hex.EncodeToString(h.Sum(nil)), nil
}

// check runs the binary's version command: it must say the version stamped
// and the commit git has.
func check(bin, version string) error {
	data, err := exec.Command(bin, "version", "-o", "json").Output()
	if err != nil {
		return fmt.Errorf("%s version: %w", bin, err)
	}
	var got struct{ Version, Commit string }
	if err := json.Unmarshal(data, &got); err != nil {
		return fmt.Errorf("%s version -o json: %w", bin, err)
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	want := strings.TrimSpace(string(head))
	if got.Version != version || (err == nil && got.Commit != want) {
		return fmt.Errorf("the binary says version %q commit %q, want %q and %q", got.Version, got.Commit, version, want)
	}
	return nil
}

// writeTarGz writes files (name in the archive → path here) as a tar.gz,
// in name order, executables 0755.
func writeTarGz(w io.Writer, files map[string]string) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		data, err := os.ReadFile(files[n])
		if err != nil {
			return err
		}
		mode := int64(0o644)
		if n == "jobconform" {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: mode, Size: int64(len(data)), ModTime: time.Unix(0, 0), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}
