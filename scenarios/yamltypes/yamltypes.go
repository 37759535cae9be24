// Package yamltypes holds the small value types that scenario files and the
// chaos steps inside them share. It imports nothing of jobconform, so both
// scenarios and chaos can use it without importing each other.
package yamltypes

import (
	"fmt"
	"strings"
	"time"
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
