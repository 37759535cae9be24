package reports

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteMirrorTable writes, per dispatcher and release, how late the
// worker's copy's statuses reached the manager's Job over its runs
// (Run.MirrorLags): how many, the median, the 90th percentile and the
// worst, with the scenario of the worst. Nothing without such runs.
func WriteMirrorTable(w io.Writer, runs []Run) {
	type key struct{ controller, version string }
	lags := map[key][]float64{}
	worst := map[key]string{}
	worstLag := map[key]float64{}
	var keys []key
	for _, r := range runs {
		if len(r.MirrorLags) == 0 || len(r.Faults) > 0 {
			continue
		}
		k := key{r.Controller, r.Version}
		if _, ok := lags[k]; !ok {
			keys = append(keys, k)
		}
		lags[k] = append(lags[k], r.MirrorLags...)
		for _, l := range r.MirrorLags {
			if l >= worstLag[k] {
				worstLag[k], worst[k] = l, r.Scenario
			}
		}
	}
	if len(keys) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "dispatcher\tKubernetes\tstatuses\tmedian\tp90\tworst\tworst in")
	for _, k := range keys {
		ls := lags[k]
		slices.Sort(ls)
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.3fs\t%.3fs\t%.3fs\t%s\n", k.controller, k.version, len(ls),
			percentile(ls, 50), percentile(ls, 90), ls[len(ls)-1], worst[k])
	}
	tw.Flush()
}

// MirrorTable is WriteMirrorTable's text.
func MirrorTable(runs []Run) string {
	var b strings.Builder
	WriteMirrorTable(&b, runs)
	return b.String()
}

// percentile of sorted values (nearest rank).
func percentile(sorted []float64, p int) float64 {
	i := (len(sorted)*p + 99) / 100
	return sorted[max(min(i, len(sorted))-1, 0)]
}
