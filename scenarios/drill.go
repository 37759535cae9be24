package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/version"
	"sigs.k8s.io/yaml"
)

// Drill is an upgrade–downgrade drill: a path of control-plane states, with
// Jobs in flight (the flights) started before the first change and again in
// every state, each checked as a scenario is, across the whole drill.
type Drill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Path is the control-plane states in order; the cluster starts in the first.
	Path []DrillState `json:"path"`
	// Flights name scenarios of the flight catalog (scenarios/catalog/flights).
	Flights []string `json:"flights"`
	// TerminateAtSwap name flights one of whose running pods is deleted just
	// before each change: its SIGTERM trap is under way while components swap.
	TerminateAtSwap []string `json:"terminateAtSwap,omitempty"`
	// Hold is how long each state lasts before the next change; default 20s.
	Hold Duration `json:"hold,omitempty"`
	// UnsupportedSkew runs a path that breaks the version-skew policy; the
	// report says the skew was unsupported.
	UnsupportedSkew bool `json:"unsupportedSkew,omitempty"`

	File string `json:"-"`
}

// DrillState is the control plane at one step: the release every component
// runs, its feature gates (beyond the cluster's), its emulated version.
type DrillState struct {
	Version         string          `json:"version"`
	FeatureGates    map[string]bool `json:"featureGates,omitempty"`
	EmulatedVersion string          `json:"emulatedVersion,omitempty"`
}

func (s DrillState) String() string {
	out := s.Version
	if s.EmulatedVersion != "" {
		out += " emulating " + s.EmulatedVersion
	}
	if len(s.FeatureGates) > 0 {
		var g []string
		for k, v := range s.FeatureGates {
			g = append(g, fmt.Sprintf("%s=%t", k, v))
		}
		sort.Strings(g)
		out += " with " + strings.Join(g, ",")
	}
	return out
}

// DefaultHold is how long a state lasts when the drill does not say.
const DefaultHold = 20 * time.Second

// HoldTime is how long each state of the drill lasts.
func (d *Drill) HoldTime() time.Duration {
	if d.Hold.Duration > 0 {
		return d.Hold.Duration
	}
	return DefaultHold
}

// SkewError names the version-skew rule a path breaks.
type SkewError struct{ Rule string }

func (e SkewError) Error() string {
	return "the path breaks the Kubernetes version-skew policy: " + e.Rule + " (set unsupportedSkew: true, or UNSUPPORTED_SKEW=true, to run it anyway, labelled unsupported)"
}

// CheckSkew reports the first change of the path that the version-skew
// policy does not allow. Every change moves kube-apiserver first on the way up
// and last on the way down, with the controller-manager and scheduler next to
// it, so the policy's bounds (those two never newer than the apiserver, at
// most one minor older) hold at every moment exactly when each change moves
// one minor at most.
func CheckSkew(p []DrillState) error {
	for i := 1; i < len(p); i++ {
		a, b := version.MustParseSemantic(p[i-1].Version), version.MustParseSemantic(p[i].Version)
		if a.Major() != b.Major() || diff(a.Minor(), b.Minor()) > 1 {
			return SkewError{fmt.Sprintf("step %d goes from %s to %s, across more than one minor: kube-apiserver moves one minor at a time, and the controller-manager may be at most one minor older", i, p[i-1].Version, p[i].Version)}
		}
	}
	for i, s := range p {
		if e := s.EmulatedVersion; e != "" {
			b := version.MustParseSemantic(s.Version)
			ev, err := version.ParseGeneric(e)
			if err != nil || ev.Major() != b.Major() || ev.Minor() > b.Minor() || b.Minor()-ev.Minor() > 1 {
				return SkewError{fmt.Sprintf("state %d emulates %q on %s: the emulated version must be the binary's minor or the one before (KEP-4330)", i, e, s.Version)}
			}
		}
	}
	return nil
}

func diff(a, b uint) uint {
	if a > b {
		return a - b
	}
	return b - a
}

func isRelease(v string) bool {
	if !strings.HasPrefix(v, "v") {
		return false
	}
	_, err := version.ParseSemantic(v)
	return err == nil
}

// Validate checks a drill against its flight catalog.
func (d *Drill) Validate(flights map[string]*Scenario) error {
	if d.Name == "" {
		return errors.New("a drill needs a name")
	}
	if len(d.Path) < 2 {
		return fmt.Errorf("drill %s: the path needs at least two states", d.Name)
	}
	for i, s := range d.Path {
		if !isRelease(s.Version) {
			return fmt.Errorf("drill %s: state %d: version %q is not a release like v1.37.1", d.Name, i, s.Version)
		}
	}
	if len(d.Flights) == 0 {
		return fmt.Errorf("drill %s: no flights: name scenarios of the flight catalog", d.Name)
	}
	for _, f := range append(append([]string(nil), d.Flights...), d.TerminateAtSwap...) {
		if flights[f] == nil {
			return fmt.Errorf("drill %s: unknown flight %q (the flight catalog has %s)", d.Name, f, strings.Join(sortedKeys(flights), ", "))
		}
	}
	if err := CheckSkew(d.Path); err != nil && !d.UnsupportedSkew {
		return fmt.Errorf("drill %s: %w", d.Name, err)
	}
	return nil
}

func sortedKeys(m map[string]*Scenario) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ParseDrillPath reads a path written as releases, comma-separated
// ("v1.36.3,v1.37.1,v1.36.3,v1.37.1"), as make drill's DRILL takes it.
func ParseDrillPath(s string) ([]DrillState, error) {
	var out []DrillState
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		if !isRelease(v) {
			return nil, fmt.Errorf("drill path %q: %q is not a release like v1.37.1", s, v)
		}
		out = append(out, DrillState{Version: v})
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("drill path %q: give at least two releases, comma-separated", s)
	}
	return out, nil
}

// LoadDrills reads every *.yaml of fsys (documents separated by ---) as drills.
func LoadDrills(fsys fs.FS) ([]*Drill, error) {
	names, err := fs.Glob(fsys, "*.yaml")
	if err != nil {
		return nil, err
	}
	var out []*Drill
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		for i, doc := range bytes.Split(data, []byte("\n---\n")) {
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			d := &Drill{File: path.Base(n)}
			if err := yaml.UnmarshalStrict(doc, d); err != nil {
				return nil, fmt.Errorf("%s (document %d): %w", n, i+1, err)
			}
			out = append(out, d)
		}
	}
	return out, nil
}
