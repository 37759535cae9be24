package k8sbin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jobconform/jobconform/internal/release"
	"golang.org/x/mod/modfile"
)

// Building from Go modules: Kubernetes' commands from a throwaway module
// that requires k8s.io/kubernetes with its staging modules pinned, etcd at
// the version Kubernetes asks for, and the go command run with progress.

// buildKubernetes builds commands (package → binary) of release v, as
// architecture.md describes: a throwaway module requiring k8s.io/kubernetes and
// pinning every staging module to the matching v0.Y.Z.
func (b *Builder) buildKubernetes(ctx context.Context, v, tmp string, commands map[string]Binary) error {
	m, err := b.kubernetesModule(ctx, v)
	if err != nil {
		return err
	}
	err = b.buildModule(ctx, tmp, "Kubernetes "+v, "k8s.io/kubernetes", v, m.pins, commands, m.ldflags)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(tmp, "out", "etcd-version"), []byte(m.etcd+"\n"), 0o644)
}

// kubernetesModule is what a module building release v's commands needs:
// the staging modules pinned, the version ldflags, the etcd it pairs with.
type kubernetesModule struct {
	pins    []string
	ldflags string
	etcd    string
}

func (b *Builder) kubernetesModule(ctx context.Context, v string) (kubernetesModule, error) {
	gomod, err := b.kubernetesGoMod(ctx, v)
	if err != nil {
		return kubernetesModule{}, err
	}
	var replaces []string
	for _, r := range gomod.Replace {
		if strings.HasPrefix(r.New.Path, "./staging/") {
			replaces = append(replaces, r.Old.Path)
		}
	}
	if len(replaces) == 0 {
		return kubernetesModule{}, fmt.Errorf("k8s.io/kubernetes %s: go.mod has no staging replace block; cannot build it from modules", v)
	}
	etcdVersion, err := requiredEtcd(gomod, v)
	if err != nil {
		return kubernetesModule{}, err
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
	return kubernetesModule{pins: pins, ldflags: strings.Join(ldflags, " "), etcd: etcdVersion}, nil
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
	var imports []string
	var targets []string
	for pkg := range pkgs {
		imports = append(imports, fmt.Sprintf("\t_ %q", pkg))
		targets = append(targets, pkg)
	}
	tools := "//go:build tools\n\npackage tools\n\nimport (\n" + strings.Join(imports, "\n") + "\n)\n"
	src, err := b.writeModule(ctx, tmp, what, mod, version, pins, map[string]string{"tools.go": tools}, sums...)
	if err != nil {
		return err
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

// writeModule writes the throwaway module jobconform.local/build into
// tmp/src (its go.mod requiring mod@version with pins, and files), makes
// tmp/out, and resolves the module's requirements; it returns tmp/src.
func (b *Builder) writeModule(ctx context.Context, tmp, what, mod, version string, pins []string, files map[string]string, sums ...string) (string, error) {
	start := time.Now()
	fmt.Fprintf(b.progress(), "building %s from Go modules (first build takes minutes; cached afterwards)\n", what)
	src := filepath.Join(tmp, "src")
	if err := os.MkdirAll(filepath.Join(tmp, "out"), 0o755); err != nil {
		return "", err
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	gomod := fmt.Sprintf("module %s\n\ngo 1.24\n\nrequire %s %s\n", buildModulePath, mod, version)
	if len(pins) > 0 {
		gomod += "\nreplace (\n" + strings.Join(pins, "\n") + "\n)\n"
	}
	files["go.mod"] = gomod
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	for _, sum := range sums {
		data, err := os.ReadFile(sum)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(src, "go.sum"), data, 0o644); err != nil {
			return "", err
		}
	}
	if err := b.run(ctx, src, what+": resolving modules", start, "go", "mod", "tidy"); err != nil {
		return "", fmt.Errorf("resolve modules for %s: %w%s", what, err, proxyHint(err.Error()))
	}
	return src, nil
}

// buildModulePath is the throwaway module's path.
const buildModulePath = "jobconform.local/build"

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
