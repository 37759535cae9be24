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
// ">=1.32.0 <1.36.0"; alternatives separated by "||" admit v when any does —
// a fix that came in a different patch of each minor, e.g.
// "<1.34.10 || >=1.35.0 <1.35.8 || >=1.36.0 <1.36.3".
func Applies(constraint, v string) (bool, error) {
	if constraint == "" {
		return true, nil
	}
	sv, err := version.ParseSemantic(strings.TrimPrefix(v, "v"))
	if err != nil {
		return false, fmt.Errorf("version %q: %w", v, err)
	}
	admitted := false
	for _, alt := range strings.Split(constraint, "||") {
		if strings.TrimSpace(alt) == "" {
			return false, fmt.Errorf("versions %q: an empty alternative around ||", constraint)
		}
		ok, err := all(constraint, alt, sv)
		if err != nil {
			return false, err
		}
		admitted = admitted || ok
	}
	return admitted, nil
}

// all tells whether every comparison of one alternative holds for sv.
func all(constraint, alt string, sv *version.Version) (bool, error) {
	for _, part := range strings.Fields(strings.ReplaceAll(alt, ",", " ")) {
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
