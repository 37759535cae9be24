// Package mutants breaks the reference controller on purpose, from outside
// its code: each mutant is a realistic mistake of a Job controller's author,
// written as edits to a copy of controller/'s source, so that make mutate
// (and the chaos suite's negative controls) can show the checks catch a
// controller that breaks a promise. The reference controller itself carries
// no fault switch: it stays a model to read beside upstream's.
//
// An edit that no longer applies (its text is gone from controller/, or is
// there twice) and a mutant that no longer compiles are errors naming the
// mutant: mend its edits in catalog*.go beside the change that moved them.
package mutants

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Mutant is one deliberate bug.
type Mutant struct {
	// Name is what --faults and --reference-faults take.
	Name string
	// Breaks says what the broken controller does wrong.
	Breaks string
	// Suite and Labels are the scenarios meant to catch it: the suite
	// ("conformance" or "chaos") and a Ginkgo label filter of it.
	Suite, Labels string
	// Edits turn controller/'s source into the broken controller's.
	Edits []Edit
}

// Edit replaces the one occurrence of Old in File (a file of controller/)
// by New. An Edit with no Old adds File, which must not exist, holding New.
type Edit struct {
	File, Old, New string
}

// All is the catalog, sorted by name.
func All() []Mutant {
	out := slices.Clone(catalog)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Names lists the catalog's names, sorted.
func Names() []string {
	var out []string
	for _, m := range All() {
		out = append(out, m.Name)
	}
	return out
}

// Lookup finds a mutant by name; an unknown name is an error listing the known.
func Lookup(name string) (Mutant, error) {
	for _, m := range catalog {
		if m.Name == name {
			return m, nil
		}
	}
	return Mutant{}, fmt.Errorf("unknown fault %q: use one of %s", name, strings.Join(Names(), ", "))
}

// LookupAll is Lookup of each name.
func LookupAll(names []string) ([]Mutant, error) {
	var out []Mutant
	for _, n := range names {
		m, err := Lookup(n)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Apply reads the files the mutants edit from dir (controller/) and returns
// them edited, by file name. The mutants apply in order, each to what the
// ones before left.
func Apply(dir string, ms ...Mutant) (map[string][]byte, error) {
	files := map[string]string{}
	for _, m := range ms {
		for i, e := range m.Edits {
			src, ok := files[e.File]
			if !ok && e.Old != "" {
				data, err := os.ReadFile(filepath.Join(dir, e.File))
				if err != nil {
					return nil, fmt.Errorf("mutant %s, edit %d: %w", m.Name, i+1, err)
				}
				src = string(data)
			}
			if e.Old == "" {
				if _, err := os.Stat(filepath.Join(dir, e.File)); ok || err == nil {
					return nil, fmt.Errorf("mutant %s, edit %d: adds %s, which exists already", m.Name, i+1, e.File)
				}
				files[e.File] = e.New
				continue
			}
			if n := strings.Count(src, e.Old); n != 1 {
				return nil, fmt.Errorf("mutant %s no longer applies: edit %d expects its text once in controller/%s, found it %d times: %q (mend the edit in internal/mutants/catalog*.go)",
					m.Name, i+1, e.File, n, e.Old)
			}
			files[e.File] = strings.Replace(src, e.Old, e.New, 1)
		}
	}
	out := map[string][]byte{}
	for f, s := range files {
		out[f] = []byte(s)
	}
	return out, nil
}
