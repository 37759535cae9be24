package reports

import (
	"fmt"
	"html"
	"sort"
	"strings"
	"time"
)

// Colours of pod states and counters; the legend in the HTML uses them too.
var (
	stateColours = []struct{ State, Colour string }{
		{"pending", "#b8b8b8"}, {"running", "#3b82c4"}, {"terminating", "#e69a28"},
		{"succeeded", "#2e9e5b"}, {"failed", "#c8372d"},
	}
	counterColours = []struct{ Name, Colour string }{
		{"active", "#3b82c4"}, {"ready", "#17a2b8"}, {"terminating", "#e69a28"},
		{"failed", "#c8372d"}, {"succeeded", "#2e9e5b"},
	}
)

func colourOf(state string) string {
	for _, s := range stateColours {
		if s.State == state {
			return s.Colour
		}
	}
	return "#000"
}

func podState(e Event) string {
	switch {
	case e.Phase == "Succeeded":
		return "succeeded"
	case e.Phase == "Failed":
		return "failed"
	case e.Deleting:
		return "terminating"
	case e.Phase == "Running":
		return "running"
	}
	return "pending"
}

// geometry of a timeline drawing
const (
	svgWidth   = 960
	labelWidth = 170
	laneHeight = 18
	chartH     = 90
)

// Timeline draws one run: a lane per pod (state by colour), the Job's
// counters as step lines, condition and chaos markers, broken invariants in red.
func Timeline(r Run) string {
	if len(r.Events) == 0 {
		return ""
	}
	f := newFrame(r.Events)
	pods, byPod := podEvents(r.Events)
	compact := len(pods) > maxLanes
	f.chartTop = 30 + laneHeight*len(pods) + 20
	if compact {
		f.chartTop = 30 + bandHeight + 20
	}
	height := f.chartTop + chartH + 40
	fmt.Fprintf(&f.b, `<svg class="timeline" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="timeline of %s">`,
		svgWidth, height, svgWidth, height, html.EscapeString(r.Scenario))
	f.axis()
	if compact {
		f.podBand(r.Events, len(pods))
	} else {
		f.podLanes(pods, byPod)
	}
	f.conditions(f.counters(r.Events))
	f.versionBands(r.Chaos)
	f.chaos(r.Chaos)
	f.violations(r.Violations)
	f.b.WriteString(`</svg>`)
	return f.b.String()
}

// frame is a timeline being drawn: its time span and where the chart of
// the Job's counters starts.
type frame struct {
	b        strings.Builder
	t0, t1   time.Time
	span     float64
	chartTop int
}

func newFrame(events []Event) *frame {
	t0, t1 := events[0].Time, events[len(events)-1].Time
	for _, e := range events {
		if e.Time.Before(t0) {
			t0 = e.Time
		}
		if e.Time.After(t1) {
			t1 = e.Time
		}
	}
	t1 = t1.Add(time.Second)
	return &frame{t0: t0, t1: t1, span: t1.Sub(t0).Seconds()}
}

// x is where time t is drawn.
func (f *frame) x(t time.Time) float64 {
	return labelWidth + (svgWidth-labelWidth-20)*t.Sub(f.t0).Seconds()/f.span
}

// at reads a clock time of the run's day (chaos and drills print them), and
// tells whether it falls within a minute of the run.
func (f *frame) at(clock string) (time.Time, bool) {
	c, err := time.ParseInLocation("15:04:05.000", clock, f.t0.Location())
	if err != nil {
		return time.Time{}, false
	}
	t0 := f.t0
	t := time.Date(t0.Year(), t0.Month(), t0.Day(), c.Hour(), c.Minute(), c.Second(), c.Nanosecond(), t0.Location())
	ok := !t.Before(t0.Add(-time.Minute)) && !t.After(f.t1.Add(time.Minute))
	if t.Before(t0) {
		t = t0 // just before the run (a drill's change): at its left edge
	}
	return t, ok
}

// podEvents are the pods in order of appearance, and each one's events.
func podEvents(events []Event) ([]string, map[string][]Event) {
	var pods []string
	byPod := map[string][]Event{}
	for _, e := range events {
		if e.Kind != "Pod" {
			continue
		}
		if _, ok := byPod[e.Name]; !ok {
			pods = append(pods, e.Name)
		}
		byPod[e.Name] = append(byPod[e.Name], e)
	}
	return pods, byPod
}

// axis draws the time axis, every 5s (or coarser).
func (f *frame) axis() {
	step := 5.0
	for f.span/step > 12 {
		step *= 2
	}
	for s := 0.0; s <= f.span; s += step {
		xx := f.x(f.t0.Add(time.Duration(s * float64(time.Second))))
		fmt.Fprintf(&f.b, `<line class="grid" x1="%.1f" y1="20" x2="%.1f" y2="%d" stroke="#eee"/>`, xx, xx, f.chartTop+chartH)
		fmt.Fprintf(&f.b, `<text x="%.1f" y="14" font-size="10" text-anchor="middle" fill="#666">%gs</text>`, xx, s)
	}
}

// podLanes draws a lane per pod, its states by colour.
func (f *frame) podLanes(pods []string, byPod map[string][]Event) {
	for i, name := range pods {
		y := 30 + laneHeight*i
		fmt.Fprintf(&f.b, `<text x="4" y="%d" font-size="11" fill="#222">%s</text>`, y+12, html.EscapeString(shortName(name)))
		evs := byPod[name]
		for k, e := range evs {
			if e.Type == "DELETED" {
				break
			}
			end := f.t1
			if k+1 < len(evs) {
				end = evs[k+1].Time
			}
			st := podState(e)
			fmt.Fprintf(&f.b, `<rect class="pod-state %s" x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s %s from %s</title></rect>`,
				st, f.x(e.Time), y+2, max(f.x(end)-f.x(e.Time), 0.8), laneHeight-4, colourOf(st), html.EscapeString(name), st, e.Time.Format("15:04:05.000"))
		}
	}
}

// A Job of more than maxLanes pods is drawn as how many of its pods are in
// each state over time, in bandBins columns: a lane per pod would make a
// 10,000-pod timeline tens of thousands of shapes, too many for a browser.
const (
	maxLanes   = 200
	bandHeight = 120
	bandBins   = 240
)

// podBand draws the pods' states as stacked columns, one per time bin: the
// pods in each state at the bin's end.
func (f *frame) podBand(events []Event, pods int) {
	evs := make([]Event, 0, len(events))
	for _, e := range events {
		if e.Kind == "Pod" {
			evs = append(evs, e)
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Time.Before(evs[j].Time) })
	state := map[string]string{} // pod → its state now
	counts := map[string]int{}
	cols := make([]map[string]int, bandBins)
	peak, next := 1, 0
	for b := range bandBins {
		end := f.t0.Add(time.Duration(float64(b+1) / bandBins * f.span * float64(time.Second)))
		for ; next < len(evs) && !evs[next].Time.After(end); next++ {
			e := evs[next]
			if old, ok := state[e.Name]; ok {
				counts[old]--
			}
			if e.Type == "DELETED" {
				delete(state, e.Name)
				continue
			}
			st := podState(e)
			state[e.Name] = st
			counts[st]++
		}
		cols[b] = map[string]int{}
		for st, n := range counts {
			cols[b][st] = n
		}
		peak = max(peak, len(state))
	}
	fmt.Fprintf(&f.b, `<text x="4" y="42" font-size="11" fill="#222">%d pods</text>`, pods)
	fmt.Fprintf(&f.b, `<text x="4" y="56" font-size="10" fill="#666">(at most %d at once;</text>`, peak)
	fmt.Fprintf(&f.b, `<text x="4" y="68" font-size="10" fill="#666">by state, stacked)</text>`)
	w := (svgWidth - labelWidth - 20) / float64(bandBins)
	for b, col := range cols {
		x := labelWidth + w*float64(b)
		y := float64(30 + bandHeight)
		var title []string
		var rects strings.Builder
		for _, sc := range stateColours {
			n := col[sc.State]
			if n <= 0 {
				continue
			}
			h := float64(bandHeight) * float64(n) / float64(peak)
			y -= h
			fmt.Fprintf(&rects, `<rect class="pod-band %s" x="%.1f" y="%.1f" width="%.2f" height="%.1f" fill="%s"/>`, sc.State, x, y, w, h, sc.Colour)
			title = append(title, fmt.Sprintf("%d %s", n, sc.State))
		}
		if rects.Len() == 0 {
			continue
		}
		at := f.t0.Add(time.Duration(float64(b+1) / bandBins * f.span * float64(time.Second)))
		fmt.Fprintf(&f.b, `<g><title>%s: %s</title>%s</g>`, at.Format("15:04:05.000"), strings.Join(title, ", "), rects.String())
	}
}

// workerSuffix ends the name of a dispatched Job's copy on the worker
// cluster (recorder.WorkerSuffix).
const workerSuffix = "@worker"

// counters draws the Job's counters as step lines and returns the Job's
// events. A dispatched Job's copy on the worker (workerSuffix) is drawn
// over them dashed: the manager's solid line follows it by the mirroring lag.
func (f *frame) counters(events []Event) []Event {
	var jobs, copies []Event
	maxV := int32(1)
	for _, e := range events {
		if e.Kind == "Job" && e.Type != "DELETED" {
			if strings.HasSuffix(e.Name, workerSuffix) {
				copies = append(copies, e)
			} else {
				jobs = append(jobs, e)
			}
			maxV = max(maxV, e.Active, e.Ready, e.Terminating, e.Failed, e.Succeeded)
		}
	}
	label := "Job status"
	if len(copies) > 0 {
		label = "Job status (dashed: the worker's copy)"
	}
	fmt.Fprintf(&f.b, `<text x="4" y="%d" font-size="11" fill="#222">%s</text>`, f.chartTop+12, label)
	yv := func(v int32) float64 { return float64(f.chartTop+chartH) - float64(chartH-10)*float64(v)/float64(maxV) }
	for _, series := range []struct {
		es    []Event
		class string
		dash  string
	}{{jobs, "counter", ""}, {copies, "counter copy", ` stroke-dasharray="4,3"`}} {
		for ci, c := range counterColours {
			var pts []string
			for k, e := range series.es {
				v := []int32{e.Active, e.Ready, e.Terminating, e.Failed, e.Succeeded}[ci]
				end := f.t1
				if k+1 < len(series.es) {
					end = series.es[k+1].Time
				}
				off := float64(ci) * 0.8 // keep equal lines apart
				pts = append(pts, fmt.Sprintf("%.1f,%.1f %.1f,%.1f", f.x(e.Time), yv(v)-off, f.x(end), yv(v)-off))
			}
			if len(pts) > 0 {
				fmt.Fprintf(&f.b, `<polyline class="%s %s" fill="none" stroke="%s" stroke-width="1.6"%s points="%s"/>`, series.class, c.Name, c.Colour, series.dash, strings.Join(pts, " "))
			}
		}
	}
	fmt.Fprintf(&f.b, `<text x="%d" y="%.1f" font-size="10" fill="#666">%d</text>`, labelWidth-18, yv(maxV)+4, maxV)
	return jobs
}

// conditions marks where each condition first appears.
func (f *frame) conditions(jobs []Event) {
	seen := map[string]bool{}
	for _, e := range jobs {
		for _, c := range e.Conditions {
			if seen[c] {
				continue
			}
			seen[c] = true
			xx := f.x(e.Time)
			fmt.Fprintf(&f.b, `<line class="condition" x1="%.1f" y1="22" x2="%.1f" y2="%d" stroke="#555" stroke-dasharray="3,2"/>`, xx, xx, f.chartTop+chartH)
			fmt.Fprintf(&f.b, `<text class="condition-label" x="%.1f" y="%d" font-size="10" fill="#333">%s</text>`, xx+2, f.chartTop+chartH+12+10*(len(seen)%2), html.EscapeString(c))
		}
	}
}

// versionBands draws a drill's changes of the apiserver's release: bands of
// the version in force.
func (f *frame) versionBands(chaos []ChaosAction) {
	type band struct {
		from    float64
		version string
	}
	var bands []band
	for _, c := range chaos {
		if v, ok := strings.CutPrefix(c.Effect, "kube-apiserver runs "); ok {
			if t, ok := f.at(c.Time); ok {
				bands = append(bands, band{f.x(t), v})
			}
		}
	}
	for i, bd := range bands {
		to := svgWidth - 20.0
		if i+1 < len(bands) {
			to = bands[i+1].from
		}
		fill := "#f3eaf8"
		if i%2 == 1 {
			fill = "#eaf3f8"
		}
		fmt.Fprintf(&f.b, `<rect class="version-band" x="%.1f" y="2" width="%.1f" height="14" fill="%s"><title>from here the apiserver runs %s</title></rect>`,
			bd.from, max(to-bd.from, 1), fill, html.EscapeString(bd.version))
		fmt.Fprintf(&f.b, `<text class="version-label" x="%.1f" y="13" font-size="10" fill="#555">%s</text>`, bd.from+2, html.EscapeString(bd.version))
	}
}

// chaos marks each chaos action.
func (f *frame) chaos(chaos []ChaosAction) {
	for _, c := range chaos {
		if t, ok := f.at(c.Time); ok {
			xx := f.x(t)
			fmt.Fprintf(&f.b, `<line class="chaos" x1="%.1f" y1="20" x2="%.1f" y2="%d" stroke="#8e44ad" stroke-width="2"><title>%s</title></line>`,
				xx, xx, f.chartTop+chartH, html.EscapeString(c.Log+" → "+c.Effect))
			fmt.Fprintf(&f.b, `<text x="%.1f" y="%d" font-size="10" fill="#8e44ad">⚡</text>`, xx-4, 28)
		}
	}
}

// violations marks each broken invariant, in red.
func (f *frame) violations(vs []Violation) {
	for _, v := range vs {
		if !v.Time.IsZero() {
			xx := f.x(v.Time)
			fmt.Fprintf(&f.b, `<line class="violation" x1="%.1f" y1="20" x2="%.1f" y2="%d" stroke="#e00" stroke-width="3"><title>%s</title></line>`,
				xx, xx, f.chartTop+chartH, html.EscapeString(v.Invariant+": "+v.Message))
			anchor, dx := "start", 3.0
			if xx > svgWidth*0.6 { // keep the label inside the picture
				anchor, dx = "end", -3
			}
			fmt.Fprintf(&f.b, `<text class="violation-label" x="%.1f" y="%d" font-size="11" font-weight="bold" fill="#e00" text-anchor="%s">✗ %s</text>`,
				xx+dx, f.chartTop+chartH+34, anchor, html.EscapeString(v.Invariant))
		}
	}
}

// shortName keeps the part of a pod name after the Job name.
func shortName(n string) string {
	if len(n) > 22 {
		return n[:22] + "…"
	}
	return n
}

// Latencies are the replacement latencies of a run: from a pod's deletion or
// failure (whichever came first) to the next pod created after it.
func Latencies(r Run) []time.Duration {
	var due []time.Time // in order; each new pod stands for the earliest
	counted := map[string]bool{}
	known := map[string]bool{}
	var out []time.Duration
	for _, e := range r.Events {
		if e.Kind != "Pod" {
			continue
		}
		if !known[e.Name] {
			known[e.Name] = true
			if len(due) > 0 && e.Type == "ADDED" {
				out = append(out, e.Time.Sub(due[0]))
				due = due[1:]
			}
			continue
		}
		if !counted[e.Name] && (e.Deleting || e.Phase == "Failed") && e.Phase != "Succeeded" {
			counted[e.Name] = true
			due = append(due, e.Time)
		}
	}
	return out
}

// Histogram draws latencies in 2-second bins up to a minute (the last bin
// holds everything longer).
func Histogram(ds []time.Duration) string {
	const bins, binW, barMax = 31, 24, 80
	counts := make([]int, bins)
	for _, d := range ds {
		i := min(int(d.Seconds()/2), bins-1)
		counts[max(i, 0)]++
	}
	top := 1
	for _, c := range counts {
		top = max(top, c)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="histogram" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d">`, bins*binW+10, barMax+30)
	for i, c := range counts {
		h := float64(barMax) * float64(c) / float64(top)
		fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="#3b82c4"><title>%d–%ds: %d</title></rect>`,
			5+i*binW, float64(barMax)-h+5, binW-3, h, 2*i, 2*i+2, c)
		if i%5 == 0 {
			fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" fill="#666">%ds</text>`, 5+i*binW, barMax+20, 2*i)
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// Stats are count, median, 90th percentile and maximum.
func Stats(ds []time.Duration) (n int, median, p90, maxD time.Duration) {
	if len(ds) == 0 {
		return 0, 0, 0, 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return len(s), s[len(s)/2], s[min(len(s)-1, len(s)*9/10)], s[len(s)-1]
}
