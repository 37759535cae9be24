package reports

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// column is one controller at one Kubernetes version, on kwok or kubelet nodes.
type column struct{ Controller, Version, Nodes, Gates string }

func (c column) String() string {
	s := c.Controller
	if c.Version != "" {
		s += " @ " + c.Version
	}
	if c.Nodes != "" {
		s += " on " + c.Nodes + " nodes"
	}
	if c.Gates != "" {
		s += " with " + c.Gates
	}
	return s
}

func columnOf(r Run) column {
	if r.Controller == "" {
		return column{Controller: r.Suite}
	}
	return column{r.Controller, r.Version, r.Nodes, r.Gates}
}

func columns(runs []Run) []column {
	seen := map[column]bool{}
	var out []column
	for _, r := range runs {
		if c := columnOf(r); !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

type cell struct {
	Verdict, Seconds, Anchor string
}

type row struct {
	Scenario string
	Features string
	Cells    []cell
}

type section struct {
	Anchor, Title, Verdict string
	Seed                   uint64
	Failures               []string
	Chaos                  []ChaosAction
	Oracle                 *Oracle
	Unjudged               []string
	Again                  string
	// Machine is the starvation meter's reading of the run, Starved its
	// note when it was red.
	Machine, Starved string
	SVG              template.HTML
}

type latency struct {
	Column           string
	N                int
	Median, P90, Max string
	Histogram        template.HTML
}

// glance is one controller at one release (or a suite's own checks) on
// the report's first screen: its counts and what failed, first message.
type glance struct {
	Column           string
	Pass, Fail, Skip int
	Failed           []failure
	// Oracle is the differential verdict's tally of the column ("" for the
	// built-in's): compared, and not judged with why.
	Oracle string
}

// failure is one failed run, linked to its section.
type failure struct {
	Column, Scenario, First, Anchor string
	More                            int // further failures of the run
}

// matrix is one suite's verdicts: its scenarios by its own columns.
type matrix struct {
	Suite   string
	Columns []string
	Rows    []row
}

type page struct {
	Title            string
	Generated        string
	Glance           []glance
	Failed           []failure
	Matrices         []matrix
	Features         []string
	Sections         []section
	Latencies        []latency
	States           []struct{ State, Colour string }
	Counters         []struct{ Name, Colour string }
	Pass, Fail, Skip int
	// Controls are the runs against controllers broken on purpose, kept
	// apart from the verdicts: a caught fault is the harness working.
	Controls       []control
	Caught, Missed int
	// Scale is the scale suite's side-by-side table (ScaleTable), "" without.
	Scale string
	// Mirror is the dispatchers' mirroring lags (MirrorTable), "" without.
	Mirror string
	// Diff is the comparison with a baseline run (nil: none).
	Diff *Diff
	// Made names the jobconform builds that judged the runs (Makers).
	Made string
}

// Makers are the jobconform builds that judged runs (Run.Jobconform),
// sorted; "unknown" stands for runs of reports older than the field. A
// spec skipped before it ran anything (a control not asked for) judged
// nothing and names no build.
func Makers(runs []Run) []string {
	seen := map[string]bool{}
	for _, r := range runs {
		if r.Jobconform == "" && r.Verdict == "skip" {
			continue
		}
		seen[cmp.Or(r.Jobconform, "unknown")] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// madeBy is the line that names the builds: "judged by jobconform X".
func madeBy(runs []Run) string {
	m := Makers(runs)
	if len(m) == 0 {
		return ""
	}
	return "judged by jobconform " + strings.Join(m, " and ")
}

// control is one fault's row: a controller broken that way, run through
// one or more scenarios, is caught when any of them fails it.
type control struct {
	Faults, Controller, Anchor string
	Runs                       int
	Caught                     bool
	By                         []string // "scenario: what caught it"
}

// faultRows groups the negative-control runs by fault (and controller),
// in order of first appearance; anchor names each run's section.
func faultRows(runs []Run, anchor func(i int) string) []control {
	var out []control
	at := map[string]int{}
	for i, r := range runs {
		if !r.Control() {
			continue
		}
		key := strings.Join(r.Faults, ",") + "|" + columnOf(r).String()
		k, ok := at[key]
		if !ok {
			k = len(out)
			at[key] = k
			out = append(out, control{Faults: strings.Join(r.Faults, ","), Controller: columnOf(r).String(), Anchor: anchor(i)})
		}
		c := &out[k]
		c.Runs++
		if r.Caught() {
			if !c.Caught {
				c.Anchor = anchor(i)
			}
			c.Caught = true
			c.By = append(c.By, r.Scenario+": "+caughtBy(r))
		}
	}
	return out
}

// caughtBy names what caught a control: its first broken invariant, else its first failure.
func caughtBy(r Run) string {
	if len(r.Violations) > 0 {
		return r.Violations[0].Invariant
	}
	if len(r.Failures) > 0 {
		f, _, _ := strings.Cut(r.Failures[0], "\n")
		return f
	}
	return ""
}

// split separates the verdicts from the negative controls.
func split(runs []Run) (verdicts, controls []Run) {
	for _, r := range runs {
		if r.Control() {
			controls = append(controls, r)
		} else {
			verdicts = append(verdicts, r)
		}
	}
	return verdicts, controls
}

func anchor(r Run, i int) string { return fmt.Sprintf("run-%d", i) }

func build(runs []Run, title string) page {
	p := page{Title: title, Generated: time.Now().UTC().Format(time.RFC3339), States: stateColours, Counters: counterColours, Made: madeBy(runs)}
	verdicts, _ := split(runs)
	p.Glance, p.Failed = atAGlance(runs)
	p.Controls = faultRows(runs, func(i int) string { return anchor(runs[i], i) })
	p.Scale, p.Mirror = ScaleTable(runs), MirrorTable(runs)
	for _, c := range p.Controls {
		if c.Caught {
			p.Caught++
		} else {
			p.Missed++
		}
	}
	features := map[string]bool{}
	for i, r := range runs {
		if r.Control() {
			p.Sections = append(p.Sections, section{Anchor: anchor(r, i), Title: r.Scenario + " — " + columnOf(r).String() + " (broken on purpose: " + strings.Join(r.Faults, ",") + ")",
				Verdict: r.Verdict, Seed: r.Seed, Failures: r.Failures, Chaos: r.Chaos, SVG: template.HTML(Timeline(r))})
			continue
		}
		for _, f := range r.Features {
			features[f] = true
		}
		switch r.Verdict {
		case "PASS":
			p.Pass++
		case "FAIL":
			p.Fail++
		default:
			p.Skip++
		}
		if r.Verdict != "skip" {
			s := section{Anchor: anchor(r, i), Title: r.Scenario + " — " + columnOf(r).String(), Verdict: r.Verdict,
				Seed: r.Seed, Failures: r.Failures, Chaos: r.Chaos, Oracle: r.Oracle, Unjudged: r.Unjudged, Again: r.Again, SVG: template.HTML(Timeline(r))}
			if m := r.Starvation; m != nil && m.Samples > 0 {
				s.Machine, s.Starved = m.String(), m.Note()
			}
			p.Sections = append(p.Sections, s)
		}
	}
	for f := range features {
		p.Features = append(p.Features, f)
	}
	sort.Strings(p.Features)
	p.Matrices = matrices(runs)
	for _, c := range columns(verdicts) {
		var ds []time.Duration
		for _, r := range verdicts {
			if columnOf(r) == c {
				ds = append(ds, Latencies(r)...)
			}
		}
		if len(ds) == 0 {
			continue
		}
		n, med, p90, mx := Stats(ds)
		p.Latencies = append(p.Latencies, latency{Column: c.String(), N: n, Median: med.Round(100 * time.Millisecond).String(),
			P90: p90.Round(100 * time.Millisecond).String(), Max: mx.Round(100 * time.Millisecond).String(), Histogram: template.HTML(Histogram(ds))})
	}
	return p
}

// atAGlance is the first screen: one line per controller and release (a
// suite's own checks on a line of their own), then every failed run with
// its first failure, in the order the lines list them.
func atAGlance(runs []Run) ([]glance, []failure) {
	byCol := map[column]*glance{}
	var order []column
	for i, r := range runs {
		if r.Control() {
			continue
		}
		c := columnOf(r)
		g, ok := byCol[c]
		if !ok {
			g = &glance{Column: c.String()}
			if r.Controller == "" {
				g.Column = r.Suite + " (the suite's own checks)"
			}
			byCol[c] = g
			order = append(order, c)
		}
		switch r.Verdict {
		case "PASS":
			g.Pass++
		case "FAIL":
			g.Fail++
			f := failure{Column: g.Column, Scenario: r.Scenario, Anchor: anchor(r, i), First: "failed"}
			if len(r.Failures) > 0 {
				f.First, f.More = r.Failures[0], len(r.Failures)-1
			}
			g.Failed = append(g.Failed, f)
		default:
			g.Skip++
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		// The controllers under test first, then the suites' own checks.
		if (order[i].Version == "") != (order[j].Version == "") {
			return order[j].Version == ""
		}
		return order[i].String() < order[j].String()
	})
	oracle := map[string]string{}
	for _, t := range OracleTallies(runs) {
		oracle[t.Column] = t.String()
	}
	var lines []glance
	var failed []failure
	for _, c := range order {
		byCol[c].Oracle = oracle[byCol[c].Column]
		lines = append(lines, *byCol[c])
		failed = append(failed, byCol[c].Failed...)
	}
	return lines, failed
}

// flightAt reads a drill flight's scenario, "<drill>: <flight> at step N".
var flightAt = regexp.MustCompile(`^(.+): (.+) at step (\d+)$`)

// place is where a run sits: which matrix, which row, which column. A drill's
// flights are rows of a matrix of that drill, each step they started at a
// column of its controller's path; any other run is its scenario's row in
// its suite's matrix, under its controller and release.
func place(r Run) (table, rowName, col string) {
	if m := flightAt.FindStringSubmatch(r.Scenario); m != nil && r.Controller != "" {
		return r.Suite + " — " + m[1], m[2], columnOf(r).String() + " · step " + m[3]
	}
	return r.Suite, r.Scenario, columnOf(r).String()
}

// matrices are the verdicts of each suite apart (a drill's flights apart
// too), each with only the columns that ran in it: one grid of every
// suite's columns is mostly empty.
func matrices(runs []Run) []matrix {
	type at struct{ row, col string }
	type table struct {
		cols, rows []string
		cells      map[at]cell
		features   map[string][]string // by row
	}
	tables := map[string]*table{}
	var names []string
	for i, r := range runs {
		if r.Control() {
			continue
		}
		name, rowName, col := place(r)
		t, ok := tables[name]
		if !ok {
			t = &table{cells: map[at]cell{}, features: map[string][]string{}}
			tables[name] = t
			names = append(names, name)
		}
		if !slices.Contains(t.cols, col) {
			t.cols = append(t.cols, col)
		}
		if _, seen := t.features[rowName]; !seen {
			t.rows = append(t.rows, rowName)
		}
		t.features[rowName] = r.Features
		t.cells[at{rowName, col}] = cell{r.Verdict, fmt.Sprintf("%.0fs", r.Seconds), anchor(r, i)}
	}
	sort.Strings(names)
	var out []matrix
	for _, name := range names {
		t := tables[name]
		sort.Strings(t.cols)
		m := matrix{Suite: name, Columns: t.cols}
		for _, rowName := range t.rows {
			rw := row{Scenario: rowName, Features: " " + strings.Join(t.features[rowName], " ") + " "}
			for _, c := range t.cols {
				rw.Cells = append(rw.Cells, t.cells[at{rowName, c}])
			}
			m.Rows = append(m.Rows, rw)
		}
		out = append(out, m)
	}
	return out
}

var pageTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table.matrix{border-collapse:collapse;font-size:13px}
.matrix th,.matrix td{border:1px solid #ccc;padding:2px 6px;text-align:left}
.matrix td:first-child{white-space:nowrap}.matrix th{max-width:8em;white-space:normal;vertical-align:bottom;font-weight:600}.matrix td{white-space:nowrap}table.glance{border-collapse:collapse;font-size:14px}.glance td{padding:2px 10px}ol.failures{font-size:13px}ol.failures code{white-space:pre-wrap}
p.machine{font-size:12px;color:#666;margin:.3em 0}p.machine.starved{color:#b35900}ul.unjudged{font-size:12px;color:#666;margin:.3em 0}table.oracle{border-collapse:collapse;font-size:12px;margin:.5em 0;max-width:100%}.oracle td,.oracle th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}.oracle code{white-space:pre-wrap;word-break:break-all}.oracle tr.FAIL td:first-child{color:#c00;font-weight:bold}
.PASS{background:#d9f2e0}.FAIL{background:#f8d0cc;font-weight:bold}.skip{background:#eee;color:#777}
.legend span{display:inline-block;margin-right:1em;font-size:12px}
.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}
section.run{margin:1.5em 0;border-top:1px solid #ddd;padding-top:.5em}
pre{font-size:12px;white-space:pre-wrap}
</style></head><body>
<h1>{{.Title}}</h1>
<p>{{.Pass}} passed, {{.Fail}} failed, {{.Skip}} skipped — generated {{.Generated}}{{if .Made}}, {{.Made}}{{end}}</p>
<h2 id="glance">At a glance</h2>
<table class="glance">{{range .Glance}}<tr class="{{if .Fail}}FAIL{{else}}PASS{{end}}"><td>{{.Column}}</td><td>{{.Pass}} passed</td><td>{{.Fail}} failed</td><td>{{.Skip}} not applicable</td><td>{{if .Oracle}}differential verdict: {{.Oracle}}{{end}}</td></tr>
{{end}}</table>
<h2 id="failures">Failures</h2>
{{if .Failed}}<ol class="failures">{{range .Failed}}<li><a href="#{{.Anchor}}">{{.Scenario}}</a> — {{.Column}}: <code>{{.First}}</code>{{if .More}} (and {{.More}} more){{end}}</li>
{{end}}</ol>{{else}}<p class="none">none</p>{{end}}
{{with .Diff}}<h2 id="baseline">Compared with the baseline</h2>
<p>{{len .NewlyFailing}} newly failing, {{len .NewlyPassing}} newly passing, {{len .Slower}} slower beyond noise, {{.Same}} unchanged; {{len .OnlyBefore}} only in the baseline, {{len .OnlyAfter}} new.</p>
{{if .NewlyFailing}}<ul class="failures">{{range .NewlyFailing}}<li class="FAIL">{{.Key}} (was {{.Before}}): <code>{{.First}}</code></li>
{{end}}</ul>{{end}}{{if .NewlyPassing}}<ul>{{range .NewlyPassing}}<li class="PASS">{{.Key}} (was {{.Before}})</li>
{{end}}</ul>{{end}}{{if .Slower}}<ul>{{range .Slower}}<li>{{.Key}}: {{printf "%.0f" .BeforeSec}}s → {{printf "%.0f" .AfterSec}}s</li>
{{end}}</ul>{{end}}{{end}}
<label>Feature <select id="feature" onchange="filterRows(this.value)"><option value="">all</option>{{range .Features}}<option>{{.}}</option>{{end}}</select></label>
{{range .Matrices}}<h2>{{.Suite}}</h2>
<table class="matrix verdicts"><thead><tr><th>scenario</th>{{range .Columns}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr data-features="{{.Features}}"><td>{{.Scenario}}</td>{{range .Cells}}<td class="{{.Verdict}}">{{if .Verdict}}{{if ne .Verdict "skip"}}<a href="#{{.Anchor}}">{{.Verdict}}</a>{{else}}n/a{{end}} {{.Seconds}}{{end}}</td>{{end}}</tr>
{{end}}</tbody></table>{{end}}
{{if .Controls}}<h2>Negative controls: faults caught {{.Caught}}/{{len .Controls}}</h2>
<p>Controllers broken on purpose; the harness must fail each. These are not verdicts on a controller under test.</p>
<table class="matrix controls"><thead><tr><th>fault</th><th>controller</th><th>scenarios run</th><th>caught</th><th>by</th></tr></thead><tbody>
{{range .Controls}}<tr><td><a href="#{{.Anchor}}">{{.Faults}}</a></td><td>{{.Controller}}</td><td>{{.Runs}}</td><td class="{{if .Caught}}PASS{{else}}FAIL{{end}}">{{if .Caught}}caught{{else}}MISSED{{end}}</td><td>{{range .By}}{{.}}<br>{{end}}</td></tr>
{{end}}</tbody></table>{{end}}
{{if .Scale}}<h2>Scale: the controllers side by side</h2>
<p>Ratios in brackets are to the built-in's figure on the same scenario. The built-in's CPU and memory are kube-controller-manager's, every controller it runs.</p>
<pre class="scale">{{.Scale}}</pre>{{end}}
{{if .Mirror}}<h2>Dispatchers: how late the worker's status reached the manager</h2>
<p>For each distinct status of the worker cluster's copy of a Job, the time until the manager's Job showed it (or a later one).</p>
<pre class="scale">{{.Mirror}}</pre>{{end}}
<h2>Replacement latency</h2>
<p>From a pod's deletion or failure to the next pod created.</p>
{{range .Latencies}}<h3>{{.Column}}</h3><p>{{.N}} replacements: median {{.Median}}, 90th percentile {{.P90}}, max {{.Max}}</p>{{.Histogram}}{{end}}
<h2>Runs</h2>
<div class="legend">{{range .States}}<span><i style="background:{{.Colour}}"></i>pod {{.State}}</span>{{end}}{{range .Counters}}<span><i style="background:{{.Colour}}"></i>status.{{.Name}}</span>{{end}}<span><i style="background:#8e44ad"></i>chaos</span><span><i style="background:#e00"></i>broken invariant</span></div>
{{range .Sections}}<section class="run" id="{{.Anchor}}"><h3 class="{{.Verdict}}">{{.Verdict}} {{.Title}}</h3>
{{if .Seed}}<p>chaos seed {{.Seed}}</p>{{end}}
{{if .Failures}}<pre class="failures">{{range .Failures}}{{.}}
{{end}}</pre>{{end}}
{{with .Oracle}}{{if .Note}}<p class="oracle">{{.Note}}</p>{{end}}{{if .Untimed}}<p class="oracle">compared with the built-in's run, its delays not: {{.Untimed}}</p>{{end}}{{if .Differences}}<table class="oracle"><caption>Compared with the built-in's run of this scenario</caption><tr><th>field</th><th>built-in</th><th>this controller</th><th>allowed because</th></tr>
{{range .Differences}}<tr class="{{if .Allowed}}allowed{{else}}FAIL{{end}}"><td>{{.Field}}</td><td><code>{{.BuiltIn}}</code></td><td><code>{{.Other}}</code></td><td>{{.Allowed}}</td></tr>
{{end}}</table>{{end}}{{end}}
{{if .Again}}<p class="again">{{.Again}}</p>{{end}}
{{if .Unjudged}}<ul class="unjudged">{{range .Unjudged}}<li>not judged — {{.}}</li>
{{end}}</ul>{{end}}
{{if .Machine}}<p class="machine{{if .Starved}} starved{{end}}">machine while it ran: {{.Machine}}{{if .Starved}} — <b>starved</b>{{end}}</p>{{end}}
{{if .Chaos}}<pre class="chaos-log">{{range .Chaos}}{{.Time}} {{.Log}} → {{.Effect}}{{if .Error}} (error: {{.Error}}){{end}}{{range .Experiment}}
    {{.}}{{end}}
{{end}}</pre>{{end}}
{{if .SVG}}<template class="timeline">{{.SVG}}</template><div class="timeline-slot"></div>{{end}}</section>
{{end}}
<script>
window.addEventListener('error',function(e){document.body.dataset.errors=(document.body.dataset.errors||'')+e.message+';';});
function filterRows(f){document.querySelectorAll('table.verdicts tbody tr').forEach(function(tr){tr.style.display=(!f||tr.dataset.features.indexOf(' '+f+' ')>=0)?'':'none';});}
filterRows(document.getElementById('feature').value);
// Timelines are drawn when their run comes near the window (or is linked
// to): a report of hundreds of runs would lay out every SVG at load.
function draw(slot){if(slot.dataset.drawn)return;slot.dataset.drawn='1';slot.appendChild(slot.previousElementSibling.content.cloneNode(true));}
var slots=document.querySelectorAll('.timeline-slot');
var io='IntersectionObserver' in window?new IntersectionObserver(function(es){es.forEach(function(e){if(e.isIntersecting){draw(e.target);io.unobserve(e.target);}});},{rootMargin:'600px'}):null;
slots.forEach(function(s){if(!io||s.getBoundingClientRect().top<window.innerHeight+600){draw(s);}else{io.observe(s);}});
document.body.dataset.scrollWidth=document.documentElement.scrollWidth;
document.body.dataset.loadMs=Math.round(performance.now());
document.body.dataset.loaded='ok';
</script>
</body></html>
`))

// WriteHTML writes the report page.
func WriteHTML(w io.Writer, runs []Run, title string) error {
	return pageTemplate.Execute(w, build(runs, title))
}

// WriteMarkdown writes the summary for a CI job page: verdict counts per
// controller and version, then every failure.
func WriteMarkdown(w io.Writer, runs []Run, title string) error {
	runs, controls := split(runs)
	fmt.Fprintf(w, "## %s\n", title)
	if m := madeBy(runs); m != "" {
		fmt.Fprintf(w, "\n%s.\n", strings.ToUpper(m[:1])+m[1:])
	}
	oracle := map[string]string{}
	for _, t := range OracleTallies(runs) {
		oracle[t.Column] = t.String()
	}
	if len(runs) > 0 {
		fmt.Fprintf(w, "\n| controller | passed | failed | skipped | compared with the built-in |\n|---|---|---|---|---|\n")
	}
	for _, c := range columns(runs) {
		var pass, fail, skip int
		for _, r := range runs {
			if columnOf(r) != c {
				continue
			}
			switch r.Verdict {
			case "PASS":
				pass++
			case "FAIL":
				fail++
			default:
				skip++
			}
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %s |\n", c, pass, fail, skip, orDash(oracle[c.String()]))
	}
	var failed []Run
	for _, r := range runs {
		if r.Verdict == "FAIL" {
			failed = append(failed, r)
		}
	}
	if rows := faultRows(controls, func(int) string { return "" }); len(rows) > 0 {
		caught := 0
		for _, c := range rows {
			if c.Caught {
				caught++
			}
		}
		fmt.Fprintf(w, "\nNegative controls (controllers broken on purpose): faults caught %d/%d\n", caught, len(rows))
		for _, c := range rows {
			if !c.Caught {
				fmt.Fprintf(w, "- MISSED: %s (%s), by none of %d scenarios\n", c.Faults, c.Controller, c.Runs)
			}
		}
	}
	if t := ScaleTable(runs); t != "" {
		fmt.Fprintf(w, "\n### Scale: the controllers side by side\n\n%s", t)
	}
	if t := MirrorTable(runs); t != "" {
		fmt.Fprintf(w, "\n### Dispatchers: mirroring lag (worker's copy to the manager's Job)\n\n```\n%s```\n", t)
	}
	if len(failed) == 0 {
		if len(runs) == 0 {
			return nil
		}
		_, err := fmt.Fprintf(w, "\nEvery scenario passed.\n")
		return err
	}
	fmt.Fprintf(w, "\n### Failures\n\n")
	for _, r := range failed {
		fmt.Fprintf(w, "- **%s** (%s)\n", r.Scenario, columnOf(r))
		for _, f := range r.Failures {
			fmt.Fprintf(w, "  - %s\n", strings.ReplaceAll(f, "\n", " "))
		}
	}
	return nil
}

// Write writes report.html and summary.md of runs into dir; it returns the
// HTML file's path.
func Write(dir, title string, runs []Run) (string, error) {
	return WriteCompared(dir, title, runs, nil)
}

// WriteCompared is Write with d, the runs compared with a baseline's (nil:
// none), in both files, below the failures.
func WriteCompared(dir, title string, runs []Run, d *Diff) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	html := func(w io.Writer, runs []Run, title string) error {
		p := build(runs, title)
		p.Diff = d
		return pageTemplate.Execute(w, p)
	}
	markdown := func(w io.Writer, runs []Run, title string) error {
		if err := WriteMarkdown(w, runs, title); err != nil || d == nil {
			return err
		}
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
		return WriteDiff(w, *d)
	}
	htmlPath := filepath.Join(dir, "report.html")
	for path, write := range map[string]func(io.Writer, []Run, string) error{htmlPath: html, filepath.Join(dir, "summary.md"): markdown} {
		f, err := os.Create(path)
		if err != nil {
			return "", err
		}
		if err := write(f, runs, title); err != nil {
			f.Close()
			return "", fmt.Errorf("%s: %w", path, err)
		}
		if err := f.Close(); err != nil {
			return "", err
		}
	}
	return htmlPath, nil
}
