// Package release names Kubernetes releases: which ones jobconform supports,
// the default, and how a release maps to its staging modules' versions.
package release

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

// Default is the Kubernetes release used when none is asked for: the
// release every suite and test has been judged at. (The Go module proxy
// refused k8s.io/kubernetes v1.37.2's zip until late November 2026; it serves
// it now, and v1.37.2 is in make matrix, but the default moves only once the
// whole test suite has run there.)
const Default = "v1.37.1"

// Previous is the previous minor's release judged beside Default (make run
// judges the built-in controller there too; the integration tests run at both).
const Previous = "v1.36.3"

// Min is the oldest release the harness supports: deferred terminal
// conditions and the Job features it asserts start there.
const Min = "v1.31.0"

// Parse checks that v names a full Kubernetes release (vX.Y.Z, the "v"
// optional) at or after Min and returns it in canonical "vX.Y.Z" form.
func Parse(v string) (string, error) {
	s := strings.TrimSpace(v)
	if s == "" {
		return "", fmt.Errorf("empty Kubernetes version: give a release such as %s", Default)
	}
	parsed, err := version.ParseSemantic(strings.TrimPrefix(s, "v"))
	if err != nil {
		return "", fmt.Errorf("Kubernetes version %q is not a release like %s: %v", v, Default, err)
	}
	if parsed.PreRelease() != "" || parsed.BuildMetadata() != "" {
		return "", fmt.Errorf("Kubernetes version %q is a pre-release; give a stable release such as %s", v, Default)
	}
	if parsed.Major() != 1 || parsed.LessThan(version.MustParseSemantic(Min)) {
		return "", fmt.Errorf("Kubernetes version %q is not supported: jobconform supports %s and later", v, Min)
	}
	return "v" + parsed.String(), nil
}

// Matrix are the releases make matrix judges: the newest patch of each
// minor whose modules the Go module proxy serves (docs/matrix.md says which
// it refuses).
var Matrix = []string{"v1.31.4", "v1.32.5", "v1.33.13", "v1.34.10", "v1.35.8", "v1.36.4", "v1.37.2"}

// Resolve is Parse(v), with Default for "" or "default" and Previous for
// "previous".
func Resolve(v string) (string, error) {
	switch v {
	case "", "default":
		v = Default
	case "previous":
		v = Previous
	}
	return Parse(v)
}

// Staging is the version of the k8s.io/<staging> modules (client-go,
// apiserver, ...) published together with Kubernetes release v: v1.Y.Z → v0.Y.Z.
func Staging(v string) string {
	return "v0." + strings.TrimPrefix(v, "v1.")
}

// Minor returns Y of vX.Y.Z; v must have passed Parse.
func Minor(v string) int {
	return int(version.MustParseSemantic(v).Minor())
}
