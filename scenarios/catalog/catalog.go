// Package catalog embeds jobconform's scenario catalogs: conformance/*.yaml,
// which the conformance suite runs on any cluster; chaos/*.yaml, whose
// steps inject disruptions and which the chaos suite runs on clusters the
// harness controls; scale/<form>/*.yaml, the scale suite's Jobs of
// thousands of pods; and explored/*.yaml, the cases jobconform explore kept
// (its corpus), which the conformance suite runs beside conformance/.
// Assemble adds the scenarios of a user's directories.
package catalog

import (
	"embed"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jobconform/jobconform/scenarios"
)

//go:embed conformance/*.yaml chaos/*.yaml scale/*/*.yaml flights/*.yaml drills/*.yaml explored
var files embed.FS

// LoadFlights returns the Jobs the drills keep in flight, by name.
func LoadFlights() (map[string]*scenarios.Scenario, error) {
	all, err := load("flights")
	if err != nil {
		return nil, err
	}
	out := map[string]*scenarios.Scenario{}
	for _, s := range all {
		out[s.Name] = s
	}
	return out, nil
}

// LoadDrills returns the drills, each validated against the flights.
func LoadDrills() ([]*scenarios.Drill, map[string]*scenarios.Scenario, error) {
	flights, err := LoadFlights()
	if err != nil {
		return nil, nil, err
	}
	sub, err := fs.Sub(files, "drills")
	if err != nil {
		return nil, nil, err
	}
	drills, err := scenarios.LoadDrills(sub)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range drills {
		if err := d.Validate(flights); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", d.File, err)
		}
	}
	return drills, flights, nil
}

// ScaleForms are the sizes of the scale suite's catalog: scale/<form>/*.yaml,
// and the kwok nodes each form's cluster has (groups of nodes, one kwok
// process per group), with how long their leases are valid (0: a kubelet's
// 40 s, renewed every 10 s). 1,000 nodes renewing every 10 s took 0.9 of this
// machine's two cores while idle (kwok 0.32, the apiserver 0.42, etcd 0.11):
// the 10k form's renew every minute, leaving the cores to the Jobs.
var ScaleForms = map[string]struct{ NodeGroups, NodesPerGroup, NodeLeaseSeconds int }{
	"1k":  {4, 25, 0},     // 100 nodes, 1,000-pod Jobs
	"10k": {10, 100, 240}, // 1,000 nodes, 10,000-pod Jobs
	"600": {2, 25, 0},     // 50 nodes, 600-pod Jobs: make test's
}

// LoadScale returns the scale suite's scenarios of one form (a key of
// ScaleForms), validated.
func LoadScale(form string) ([]*scenarios.Scenario, error) {
	if _, ok := ScaleForms[form]; !ok {
		return nil, fmt.Errorf("unknown scale form %q: use one of %s", form, strings.Join(slices.Sorted(maps.Keys(ScaleForms)), ", "))
	}
	return load("scale/" + form)
}

// Load returns every conformance scenario, validated.
func Load() ([]*scenarios.Scenario, error) { return load("conformance") }

// LoadExplored returns the cases explore kept (explored/), validated.
func LoadExplored() ([]*scenarios.Scenario, error) { return load("explored") }

// LoadChaos returns every chaos scenario, validated.
func LoadChaos() ([]*scenarios.Scenario, error) { return load("chaos") }

func load(dir string) ([]*scenarios.Scenario, error) {
	sub, err := fs.Sub(files, dir)
	if err != nil {
		return nil, err
	}
	return scenarios.Load(sub)
}

// Set is the scenarios of one run, by suite.
type Set struct {
	Conformance []*scenarios.Scenario
	Chaos       []*scenarios.Scenario
	// Builtin tells whether jobconform's catalog is in the set.
	Builtin bool
}

// Assemble returns the embedded catalog (when builtin) and every scenario of
// the user's directories, validated; a user's scenario with a chaos step goes
// to the chaos suite, the others to the conformance suite. Errors name the
// file: a directory that cannot be read or holds no scenario, an invalid
// scenario, a name used twice.
func Assemble(builtin bool, dirs ...string) (*Set, error) {
	set := &Set{Builtin: builtin}
	where := map[string]string{} // scenario name → file
	var errs []string
	add := func(s *scenarios.Scenario, file string) {
		if prev, dup := where[s.Name]; dup {
			errs = append(errs, fmt.Sprintf("%s: scenario name %q is also used in %s: rename one", file, s.Name, prev))
			return
		}
		where[s.Name] = file
		if s.HasChaos() {
			set.Chaos = append(set.Chaos, s)
		} else {
			set.Conformance = append(set.Conformance, s)
		}
	}
	if builtin {
		for _, part := range []struct {
			dir  string
			load func() ([]*scenarios.Scenario, error)
		}{{"conformance/", Load}, {"explored/", LoadExplored}, {"chaos/", LoadChaos}} {
			dir := part.dir
			all, err := part.load()
			if err != nil {
				return nil, err
			}
			for _, s := range all {
				add(s, "jobconform's catalog ("+dir+s.File+")")
			}
		}
	}
	for _, dir := range dirs {
		info, err := os.Stat(dir)
		if err != nil {
			errs = append(errs, fmt.Sprintf("scenario directory %s: %v", dir, err))
			continue
		}
		if !info.IsDir() {
			errs = append(errs, fmt.Sprintf("scenario directory %s is a file: give the directory that holds it", dir))
			continue
		}
		all, err := scenarios.Load(os.DirFS(dir))
		if err != nil {
			errs = append(errs, fmt.Sprintf("scenario directory %s: %v", dir, err))
			continue
		}
		if len(all) == 0 {
			errs = append(errs, fmt.Sprintf("scenario directory %s holds no scenario (*.yaml or *.yml files; see jobconform schema)", dir))
			continue
		}
		for _, s := range all {
			s.File = filepath.Join(dir, s.File)
			add(s, s.File)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return set, nil
}
