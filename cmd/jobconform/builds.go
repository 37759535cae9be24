package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/jobconform/jobconform/internal/options"
)

// builds are the binaries a run needs, built one release after another in
// the background: a job starts as soon as its own release is built, beside
// the builds of the others. On a fresh machine the first suite then starts
// after one release's build, not all of them (about 17 of 36 minutes on
// two cores); with the cache warm every build is done at once.
type builds struct {
	mu   sync.Mutex
	done map[string]chan struct{} // closed when that build has ended
	errs map[string]error
	all  chan struct{}   // closed when every build has ended
	told map[string]bool // builds whose error a job was given
}

// kubeletBuild names the kubelet's build (of the first release) among the
// releases'.
const kubeletBuild = "kubelet"

// startBuilds builds versions, then more (the built-in's other releases),
// then, if asked, the first release's kubelet, in that order: the first
// release's suites come first in both streams. build is buildReleases's
// work for one release (and the kubelet with kubelet set).
func startBuilds(ctx context.Context, versions, more []string, kubelet bool, build func(ctx context.Context, v string, kubelet bool) error) *builds {
	b := &builds{done: map[string]chan struct{}{}, errs: map[string]error{}, all: make(chan struct{}), told: map[string]bool{}}
	var order []string
	for _, v := range append(slices.Clone(versions), more...) {
		if v != "" && !slices.Contains(order, v) {
			order = append(order, v)
		}
	}
	if kubelet && len(order) > 0 {
		order = append(order, kubeletBuild)
	}
	for _, v := range order {
		b.done[v] = make(chan struct{})
	}
	go func() {
		defer close(b.all)
		for _, v := range order {
			var err error
			if v == kubeletBuild {
				err = build(ctx, order[0], true)
			} else {
				err = build(ctx, v, false)
			}
			b.mu.Lock()
			b.errs[v] = err
			b.mu.Unlock()
			close(b.done[v])
		}
	}()
	return b
}

// needs are the builds job j waits for: its release, the kubelet on
// kubelet nodes, and for a drill every release (a drill flies several).
func (j job) needs() []string {
	switch {
	case j.suite == "drill":
		return nil // nil: all of them
	case j.o.Nodes == options.NodesKubelet:
		return []string{j.o.Version, kubeletBuild}
	case j.o.Version == "":
		return []string{} // an existing cluster: nothing to build
	}
	return []string{j.o.Version}
}

// wait blocks until the builds j needs have ended, saying so when it has
// to wait, and returns the first of their errors.
func (b *builds) wait(ctx context.Context, j job, tag string) error {
	if b == nil {
		return nil
	}
	needs := j.needs()
	chans := []<-chan struct{}{b.all}
	if needs != nil {
		chans = nil
		for _, n := range needs {
			if c, ok := b.done[n]; ok {
				chans = append(chans, c)
			}
		}
	}
	for _, c := range chans {
		select {
		case <-c:
			continue
		default:
		}
		what := "every release's binaries"
		if needs != nil {
			what = "the binaries of " + strings.Join(needs, " and ")
		}
		fmt.Fprintf(os.Stderr, "jobconform: %s the %s waits for %s (building beside the suites)\n", tag, j, what)
		select {
		case <-c:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for v, err := range b.errs {
		if err != nil && (needs == nil || slices.Contains(needs, v)) {
			b.told[v] = true
			return fmt.Errorf("build of %s: %w", v, err)
		}
	}
	return nil
}

// finish waits for every build and returns the errors no job was given.
func (b *builds) finish(ctx context.Context) error {
	if b == nil {
		return nil
	}
	select {
	case <-b.all:
	case <-ctx.Done():
		return ctx.Err()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for v, err := range b.errs {
		if err != nil && !b.told[v] {
			return fmt.Errorf("build of %s: %w", v, err)
		}
	}
	return nil
}
