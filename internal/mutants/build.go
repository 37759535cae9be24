package mutants

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const (
	// ControllerPackage is the package the mutants edit.
	ControllerPackage = "github.com/jobconform/jobconform/controller"
	// MainPackage is the reference controller's command, built with them.
	MainPackage = ControllerPackage + "/cmd/reference-controller"
)

// ErrNoSource: the reference controller's source is not where go list
// looks from the working directory (not a checkout of jobconform).
var ErrNoSource = errors.New("mutants are built from jobconform's source: run from a checkout of github.com/jobconform/jobconform")

// SourceDir is controller/ of the jobconform module that go list finds from
// the working directory.
func SourceDir(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "list", "-f", "{{.Dir}}", ControllerPackage).Output()
	if err != nil {
		msg := err.Error()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		return "", fmt.Errorf("%w (go list %s: %s)", ErrNoSource, ControllerPackage, msg)
	}
	return strings.TrimSpace(string(out)), nil
}

// Overlay writes the mutated files into dir and the go build -overlay file
// that puts them in place of controller/'s (src: SourceDir), and returns its path.
func Overlay(src, dir string, ms ...Mutant) (string, error) {
	files, err := Apply(src, ms...)
	if err != nil {
		return "", err
	}
	replace := map[string]string{}
	for name, data := range files {
		path := filepath.Join(dir, "src", name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return "", err
		}
		replace[filepath.Join(src, name)] = path
	}
	data, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		return "", err
	}
	overlay := filepath.Join(dir, "overlay.json")
	return overlay, os.WriteFile(overlay, data, 0o644)
}

// Build compiles the reference controller broken by the mutants into
// dir/reference-controller (Go's build cache keeps the rest of the build) and
// returns its path.
func Build(ctx context.Context, dir string, ms ...Mutant) (string, error) {
	src, err := SourceDir(ctx)
	if err != nil {
		return "", err
	}
	overlay, err := Overlay(src, dir, ms...)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "reference-controller")
	if err := goBuild(ctx, src, overlay, "-o", bin, MainPackage); err != nil {
		return "", fmt.Errorf("mutant %s does not compile (mend its edits in internal/mutants/catalog*.go): %w", names(ms), err)
	}
	return bin, nil
}

func goBuild(ctx context.Context, dir, overlay string, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-overlay", overlay}, args...)...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v\n%s", err, out.String())
	}
	return nil
}

func names(ms []Mutant) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return strings.Join(out, "+")
}
