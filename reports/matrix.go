package reports

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"
)

// WriteMatrix writes the release matrix of runs as Markdown: for each
// controller, a row per Kubernetes release and a column per feature label,
// each cell "pass (n)" when every run of the feature's scenarios passed, "n/a"
// when none applied (all skipped: a promise that release or controller does
// not make), or "FAIL [k]" with a footnote per failed run naming the scenario
// and its first failure (which names the upstream bug where one is known).
// Negative controls (controllers broken on purpose) are left out. A first
// line names the releases and the suites their runs come from.
func WriteMatrix(w io.Writer, runs []Run) error {
	runs, _ = split(runs)
	features := map[string]bool{}
	controllers := map[string]bool{}
	suitesOf := map[string]map[string]bool{}
	for _, r := range runs {
		controllers[r.Controller] = true
		if suitesOf[release(r)] == nil {
			suitesOf[release(r)] = map[string]bool{}
		}
		if r.Suite != "" {
			suitesOf[release(r)][strings.TrimPrefix(r.Suite, "jobconform ")] = true
		}
		for _, f := range r.Features {
			if f != "chaos" {
				features[f] = true
			}
		}
	}
	var releases []string
	for _, v := range sortVersions(keysOf(suitesOf)) {
		if suites := sortedKeys(suitesOf[v]); len(suites) > 0 {
			releases = append(releases, v+" ("+strings.Join(suites, ", ")+")")
		} else {
			releases = append(releases, v)
		}
	}
	fmt.Fprintf(w, "From %d runs: %s.\n", len(runs), strings.Join(releases, "; "))
	cols := sortedKeys(features)
	var notes []string
	for _, ctl := range sortedKeys(controllers) {
		type key struct{ version, feature string }
		pass, fail, seen := map[key]int{}, map[key][]int{}, map[string]bool{}
		for _, r := range runs {
			if r.Controller != ctl {
				continue
			}
			seen[release(r)] = true
			var note int
			if r.Verdict == "FAIL" {
				first := strings.TrimSpace(strings.Join(r.Failures, "\n"))
				first, _, _ = strings.Cut(first, "\n")
				// A named bug is named by its ID and releases; scenarios/bugs says the rest.
				first = bugDetail.ReplaceAllString(first, "$1")
				notes = append(notes, fmt.Sprintf("%s %s, %s: %s", ctl, release(r), r.Scenario, first))
				note = len(notes)
			}
			for _, f := range r.Features {
				k := key{release(r), f}
				switch r.Verdict {
				case "PASS":
					pass[k]++
				case "FAIL":
					fail[k] = append(fail[k], note)
				}
			}
		}
		fmt.Fprintf(w, "\n**%s**\n\n| release | %s |\n|---|%s\n", ctl, strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
		for _, v := range sortVersions(sortedKeys(seen)) {
			cells := make([]string, len(cols))
			for i, f := range cols {
				k := key{v, f}
				switch {
				case len(fail[k]) > 0:
					var refs []string
					for _, n := range fail[k] {
						refs = append(refs, fmt.Sprintf("[%d]", n))
					}
					cells[i] = "**FAIL** " + strings.Join(refs, "")
				case pass[k] > 0:
					cells[i] = fmt.Sprintf("pass (%d)", pass[k])
				default:
					cells[i] = "n/a"
				}
			}
			fmt.Fprintf(w, "| %s | %s |\n", v, strings.Join(cells, " | "))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for i, n := range notes {
			fmt.Fprintf(w, "%d. %s\n", i+1, strings.ReplaceAll(n, "|", `\|`))
		}
	}
	return nil
}

// release is a matrix row: the Kubernetes release, and the feature gates the
// cluster was given where it was given some (a delegated controller judged on
// 1.31 needs JobManagedBy=true).
func release(r Run) string {
	if r.Gates == "" {
		return r.Version
	}
	return r.Version + " with " + r.Gates
}

var bugDetail = regexp.MustCompile(`(known upstream bug of Kubernetes \S+ \([^)]*\)): .*$`)

func sortedKeys(m map[string]bool) []string {
	out := keysOf(m)
	sort.Strings(out)
	return out
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// sortVersions orders releases by version (v1.9.0 < v1.31.14), not as text.
func sortVersions(vs []string) []string {
	sort.SliceStable(vs, func(i, j int) bool {
		vi, _, _ := strings.Cut(vs[i], " ")
		vj, _, _ := strings.Cut(vs[j], " ")
		a, errA := version.ParseGeneric(vi)
		b, errB := version.ParseGeneric(vj)
		if errA != nil || errB != nil || vi == vj {
			return vs[i] < vs[j]
		}
		return a.LessThan(b)
	})
	return vs
}
