package k8sbin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/semver"
)

// Kueue is Kueue's manager (sigs.k8s.io/kueue/cmd/kueue): the MultiKueue
// dispatcher issue #31 judges.
const Kueue Binary = "kueue"

// KueueVersion is the Kueue release built unless another is asked for: the
// newest the Go module proxy reachable here serves (probed 2026-11-26 with
// go list -m -versions: v0.17.0 alone; its go.mod has no replace directive,
// and it builds against k8s.io/client-go v0.35.3).
const KueueVersion = "v0.17.0"

// kueueCRDs is where a Kueue module keeps its CustomResourceDefinitions,
// kueueWebhooks its webhook configurations (service-based, as kustomize
// renders them before it adds the install's namespace).
const (
	kueueCRDs     = "config/components/crd/bases"
	kueueWebhooks = "config/components/webhook/manifests.yaml"
)

// KueueSet is a cached Kueue build: its manager and the CRDs of the same
// module version (one *.yaml per CRD).
type KueueSet struct {
	Version string
	Manager string
	CRDDir  string
	// Webhooks is the module's webhook configurations (kueueWebhooks).
	Webhooks string
}

// EnsureKueue returns Kueue version v (default KueueVersion), building the
// manager from the Go module proxy and keeping its CRDs beside it unless
// they are cached already.
func (b *Builder) EnsureKueue(ctx context.Context, v string) (*KueueSet, error) {
	if v == "" {
		v = KueueVersion
	}
	if !semver.IsValid(v) || semver.Canonical(v) != v {
		return nil, fmt.Errorf("Kueue version %q: write a release tag such as %s", v, KueueVersion)
	}
	if _, err := exec.LookPath("go"); err != nil {
		return nil, fmt.Errorf("building Kueue %s needs the go command on PATH: %w", v, err)
	}
	root, err := b.cacheDir()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(root, "kueue", v)
	set := &KueueSet{Version: v, Manager: filepath.Join(dir, string(Kueue)), CRDDir: filepath.Join(dir, "crds"), Webhooks: filepath.Join(dir, "webhooks.yaml")}
	err = b.ensure(ctx, dir, []Binary{Kueue}, func(tmp string) error {
		what := "Kueue " + v
		if err := b.buildModule(ctx, tmp, what, "sigs.k8s.io/kueue", v, nil,
			map[string]Binary{"sigs.k8s.io/kueue/cmd/kueue": Kueue}, ""); err != nil {
			return fmt.Errorf("%w\n(a Kueue release that does not build here: choose another with --kueue-version; %s is known to build)", err, KueueVersion)
		}
		return copyCRDs(ctx, filepath.Join(tmp, "src"), filepath.Join(tmp, "out", "crds"))
	})
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(set.Webhooks); err != nil {
		// Kept beside the build since it was cached (a cache from before
		// has the binary and the CRDs only): from the module, no rebuild.
		if err := copyWebhooks(ctx, v, set.Webhooks); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// copyWebhooks copies the webhook configurations of Kueue module version v
// to out, downloading the module (source only) if the module cache lacks it.
func copyWebhooks(ctx context.Context, v, out string) error {
	tmp, err := os.MkdirTemp("", "jobconform-kueue-webhooks-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", "sigs.k8s.io/kueue@"+v)
	cmd.Dir, cmd.Env = tmp, goEnv()
	js, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("download the Kueue module %s%s: %w", v, stderrOf(err), err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(js, &mod); err != nil || mod.Dir == "" {
		return fmt.Errorf("go mod download -json sigs.k8s.io/kueue@%s: no module directory in %s", v, js)
	}
	data, err := os.ReadFile(filepath.Join(mod.Dir, kueueWebhooks))
	if err != nil {
		return fmt.Errorf("the Kueue module %s has no %s: %w", v, kueueWebhooks, err)
	}
	if err := os.WriteFile(out+".tmp", data, 0o644); err != nil {
		return err
	}
	return os.Rename(out+".tmp", out)
}

// copyCRDs copies the Kueue module's CRDs, as the build module src resolved
// it, into out.
func copyCRDs(ctx context.Context, src, out string) error {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kueue")
	cmd.Dir, cmd.Env = src, goEnv()
	dirOut, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("find the Kueue module's source%s: %w", stderrOf(err), err)
	}
	return copyYAMLs(filepath.Join(strings.TrimSpace(string(dirOut)), kueueCRDs), out)
}
