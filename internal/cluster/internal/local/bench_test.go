package local_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/jobconform/jobconform/internal/cluster/internal/local"
	"github.com/jobconform/jobconform/internal/cluster/internal/local/kubeletnode"
	"github.com/jobconform/jobconform/internal/k8sbin"
	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/release"
)

// BenchmarkStartToReady measures local.Start until the cluster is ready (3
// kwok nodes, binaries cached) and prints the median; teardown is not timed.
// make bench runs it with -benchtime 5x.
func BenchmarkStartToReady(b *testing.B) { benchStart(b, local.NodesKwok) }

// BenchmarkStartToReadyKubelet is the same with 3 kubelet nodes (each with
// its containerd, images imported, registered and Ready).
func BenchmarkStartToReadyKubelet(b *testing.B) {
	if err := kubeletnode.Check(); err != nil {
		b.Skip(err.Error())
	}
	benchStart(b, local.NodesKubelet)
}

func benchStart(b *testing.B, kind string) {
	o, err := options.FromEnv() // JOBCONFORM_K8S_VERSION, as for the suites
	if err != nil {
		b.Fatal(err)
	}
	v, err := release.Resolve(o.Version)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	builder := &k8sbin.Builder{Progress: os.Stderr}
	if _, err := builder.Ensure(ctx, v); err != nil {
		b.Fatal(err)
	}
	if kind == local.NodesKubelet {
		if _, err := builder.EnsureKubelet(ctx, v); err != nil {
			b.Fatal(err)
		}
	}
	logs := b.TempDir()
	var runs []time.Duration
	startCPU := map[string][]time.Duration{}
	var idleCPU map[string]time.Duration
	phases := map[string][]local.Phase{}
	var order []string
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		c, err := local.Start(ctx, local.Config{Version: v, NodeKind: kind, LogDir: fmt.Sprintf("%s/run-%d", logs, i)})
		d := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		atReady := c.CPU()
		for name, d := range atReady {
			startCPU[name] = append(startCPU[name], d)
		}
		if i == b.N-1 && b.N >= 3 {
			// What the cluster costs while nothing happens: a measurement
			// over a fixed window, not a wait for anything.
			time.Sleep(idleWindow)
			idleCPU = map[string]time.Duration{}
			for name, d := range c.CPU() {
				idleCPU[name] = d - atReady[name]
			}
		}
		if err := c.Stop(); err != nil {
			b.Fatal(err)
		}
		runs = append(runs, d)
		for _, p := range c.Phases() {
			if _, seen := phases[p.Name]; !seen {
				order = append(order, p.Name)
			}
			phases[p.Name] = append(phases[p.Name], p)
		}
		b.StartTimer()
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i] < runs[j] })
	median := runs[len(runs)/2]
	b.ReportMetric(median.Seconds(), "s-median")
	if b.N >= 3 {
		fmt.Printf("start-to-ready: %.2fs (median of %d runs; min %.2fs, max %.2fs; Kubernetes %s, 3 %s nodes)\n",
			median.Seconds(), len(runs), runs[0].Seconds(), runs[len(runs)-1].Seconds(), v, kind)
		// Where it went: each phase's median start, end and length (the
		// components started together overlap).
		for _, name := range order {
			ps := phases[name]
			fmt.Printf("  %-46s %5.2fs → %5.2fs  (%.2fs)\n", name,
				medianOf(ps, func(p local.Phase) time.Duration { return p.Start }).Seconds(),
				medianOf(ps, func(p local.Phase) time.Duration { return p.End }).Seconds(),
				medianOf(ps, func(p local.Phase) time.Duration { return p.End - p.Start }).Seconds())
		}
		// What it cost: the CPU each process used to get there (median),
		// and while idle afterwards (one window, the last run).
		names := make([]string, 0, len(startCPU))
		for name := range startCPU {
			names = append(names, name)
		}
		sort.Strings(names)
		var startSum, idleSum time.Duration
		fmt.Printf("  CPU to start (median) and idle (%s after the last start), by control-plane process:\n", idleWindow)
		for _, name := range names {
			s := medianDuration(startCPU[name])
			startSum += s
			idleSum += idleCPU[name]
			fmt.Printf("    %-24s %5.2fs  %4.1f%% of a core idle\n", name, s.Seconds(), 100*idleCPU[name].Seconds()/idleWindow.Seconds())
		}
		fmt.Printf("    %-24s %5.2fs  %4.1f%% of a core idle\n", "all", startSum.Seconds(), 100*idleSum.Seconds()/idleWindow.Seconds())
	}
}

// idleWindow is how long make bench watches an idle cluster's CPU.
const idleWindow = 20 * time.Second

func medianDuration(ds []time.Duration) time.Duration {
	ds = append([]time.Duration(nil), ds...)
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

func medianOf(ps []local.Phase, f func(local.Phase) time.Duration) time.Duration {
	var ds []time.Duration
	for _, p := range ps {
		ds = append(ds, f(p))
	}
	return medianDuration(ds)
}
