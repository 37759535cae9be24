package catalog

import (
	"errors"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/scenarios"
)

func TestDrillsLoad(t *testing.T) {
	drills, flights, err := LoadDrills()
	if err != nil {
		t.Fatal(err)
	}
	if len(drills) < 3 || len(flights) < 7 {
		t.Fatalf("%d drills, %d flights", len(drills), len(flights))
	}
	for _, d := range drills {
		for _, f := range d.Flights {
			if s := flights[f]; s.HasChaos() {
				t.Errorf("flight %s has a chaos step: the drill is the disruption", f)
			}
		}
	}
}

func TestDrillSkewRefused(t *testing.T) {
	_, flights, err := LoadDrills()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path []scenarios.DrillState
		want string
	}{
		{[]scenarios.DrillState{{Version: "v1.35.4"}, {Version: "v1.37.1"}}, "across more than one minor"},
		{[]scenarios.DrillState{{Version: "v1.37.1"}, {Version: "v1.35.4"}}, "across more than one minor"},
		{[]scenarios.DrillState{{Version: "v1.37.1"}, {Version: "v1.37.1", EmulatedVersion: "1.35"}}, "the emulated version must be"},
	} {
		d := &scenarios.Drill{Name: "x", Path: c.path, Flights: []string{"flight-long-runner"}}
		err := d.Validate(flights)
		var skew scenarios.SkewError
		if !errors.As(err, &skew) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("path %v: %v; want a skew error saying %q", c.path, err, c.want)
		}
		d.UnsupportedSkew = true
		if err := d.Validate(flights); err != nil {
			t.Errorf("path %v with unsupportedSkew: %v", c.path, err)
		}
	}
	if _, err := scenarios.ParseDrillPath("v1.36.3,1.37"); err == nil {
		t.Error("a path with a non-release was accepted")
	}
}
