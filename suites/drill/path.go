package drill

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/jobconform/jobconform/scenarios"
)

// A drill's path of control-plane states, read.

func describePath(d *scenarios.Drill) string {
	var parts []string
	for _, s := range d.Path {
		parts = append(parts, s.String())
	}
	return strings.Join(parts, " → ")
}

// describeVersions is the path as a report column: the releases in order.
func describeVersions(d *scenarios.Drill) string {
	var parts []string
	for _, s := range d.Path {
		v := s.Version
		if s.EmulatedVersion != "" {
			v += "(" + s.EmulatedVersion + ")"
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, "→")
}

// lowest is the oldest release of the path: the flights are checked with the
// promises every release of the path makes.
func lowest(d *scenarios.Drill) string {
	low := d.Path[0].Version
	for _, s := range d.Path[1:] {
		if version.MustParseSemantic(s.Version).LessThan(version.MustParseSemantic(low)) {
			low = s.Version
		}
	}
	return low
}

// down tells whether going from a to b is a downgrade (release or emulated version).
func down(a, b scenarios.DrillState) bool {
	va, vb := version.MustParseSemantic(a.Version), version.MustParseSemantic(b.Version)
	if !va.EqualTo(vb) {
		return vb.LessThan(va)
	}
	return b.EmulatedVersion != "" && a.EmulatedVersion == ""
}

// emulated is the --emulated-version of state s: its own, or — on a path
// that emulates anywhere — the binary's own minor, which ends an emulation.
func emulated(d *scenarios.Drill, s scenarios.DrillState) string {
	if s.EmulatedVersion != "" {
		return s.EmulatedVersion
	}
	for _, o := range d.Path {
		if o.EmulatedVersion != "" {
			v := version.MustParseSemantic(s.Version)
			return fmt.Sprintf("%d.%d", v.Major(), v.Minor())
		}
	}
	return ""
}
