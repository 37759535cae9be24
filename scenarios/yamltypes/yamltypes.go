// Package yamltypes holds the small value types that scenario files, the
// chaos steps inside them and the invariants share (durations, release
// constraints). It imports nothing of jobconform, so both
// scenarios and chaos can use it without importing each other.
package yamltypes

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/version"
)

// Duration is a time.Duration written as "5s" or "1m30s".
type Duration struct{ time.Duration }

// UnmarshalJSON reads "5s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: write it like 5s or 1m30s", s)
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes "5s".
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

// Applies tells whether a version constraint ("" = always) admits release v.
// A constraint is a list of comparisons, all of which must hold, e.g.
// ">=1.32.0 <1.36.0".
func Applies(constraint, v string) (bool, error) {
	if constraint == "" {
		return true, nil
	}
	sv, err := version.ParseSemantic(strings.TrimPrefix(v, "v"))
	if err != nil {
		return false, fmt.Errorf("version %q: %w", v, err)
	}
	for _, part := range strings.Fields(strings.ReplaceAll(constraint, ",", " ")) {
		op := strings.TrimRight(part, "0123456789.v")
		want, err := version.ParseSemantic(strings.TrimPrefix(part[len(op):], "v"))
		if err != nil {
			return false, fmt.Errorf("versions %q: %q is not a release like >=1.32.0", constraint, part)
		}
		c, err := sv.Compare(want.String())
		if err != nil {
			return false, err
		}
		ok := map[string]bool{">=": c >= 0, ">": c > 0, "<=": c <= 0, "<": c < 0, "=": c == 0, "": c == 0}
		res, known := ok[op]
		if !known {
			return false, fmt.Errorf("versions %q: operator %q (use >=, >, <=, <, =)", constraint, op)
		}
		if !res {
			return false, nil
		}
	}
	return true, nil
}

// KnownBug is an upstream bug of the built-in Job controller of some
// releases that breaks a promise: a run there still fails, and the verdict
// names the bug.
type KnownBug struct {
	// Releases is a constraint like "<1.36.3" (Applies), each side of it
	// learned by running there or reading that release's source.
	Releases string `json:"releases"`
	// Bug says what goes wrong and where, the upstream issue if there is one,
	// and the releases that fixed it.
	Bug string `json:"bug"`
}

// Affects tells whether release v has the bug.
func (b KnownBug) Affects(v string) bool {
	ok, err := Applies(b.Releases, v)
	return err == nil && ok && v != ""
}

// Describe is the bug as a verdict names it on release v.
func (b KnownBug) Describe(v string) string {
	return fmt.Sprintf("known upstream bug of Kubernetes %s (%s): %s", v, b.Releases, b.Bug)
}

// KnownBugOf returns the first bug of bugs that release v has.
func KnownBugOf(bugs []KnownBug, v string) (KnownBug, bool) {
	for _, b := range bugs {
		if b.Affects(v) {
			return b, true
		}
	}
	return KnownBug{}, false
}
