package main

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobconform/jobconform/internal/options"
)

// A job starts once its own release is built, while the others still
// build; a drill waits for all; a failed build fails the jobs that need it
// and no other.
func TestBuildsLetJobsStartOnTheirOwnRelease(t *testing.T) {
	release := map[string]chan struct{}{"v1.37.1": make(chan struct{}), "v1.36.3": make(chan struct{}), "kubelet-v1.37.1": make(chan struct{})}
	var mu sync.Mutex
	var order []string
	build := func(ctx context.Context, v string, kubelet bool) error {
		key := v
		if kubelet {
			key = "kubelet-" + v
		}
		mu.Lock()
		order = append(order, key)
		mu.Unlock()
		<-release[key]
		if key == "v1.36.3" {
			return errors.New("go build: out of memory")
		}
		return nil
	}
	ctx := context.Background()
	b := startBuilds(ctx, []string{"v1.37.1"}, []string{"v1.36.3", "v1.37.1"}, true, build)
	jobAt := func(suite, v, nodes string) job {
		o := options.Defaults()
		o.Version, o.Nodes = v, nodes
		return job{suite: suite, o: o}
	}
	waitFor := func(j job) <-chan error {
		c := make(chan error, 1)
		go func() { c <- b.wait(ctx, j, "[test]") }()
		return c
	}
	conformance := waitFor(jobAt("conformance", "v1.37.1", ""))
	drill := waitFor(jobAt("drill", "v1.37.1", ""))
	kubelet := waitFor(jobAt("conformance", "v1.37.1", options.NodesKubelet))
	previous := waitFor(jobAt("chaos", "v1.36.3", ""))
	existing := waitFor(jobAt("conformance", "", ""))
	expectNone := func(name string, c <-chan error) {
		t.Helper()
		select {
		case err := <-c:
			t.Fatalf("%s went on (%v) before its build ended", name, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := <-existing; err != nil {
		t.Errorf("a job on an existing cluster waits for nothing, got %v", err)
	}
	expectNone("conformance", conformance)
	close(release["v1.37.1"])
	if err := <-conformance; err != nil {
		t.Fatalf("conformance at v1.37.1 once it is built: %v", err)
	}
	expectNone("drill", drill)
	expectNone("kubelet conformance", kubelet)
	close(release["v1.36.3"])
	if err := <-previous; err == nil || !strings.Contains(err.Error(), "build of v1.36.3: go build: out of memory") {
		t.Errorf("a job at a release whose build failed: %v", err)
	}
	expectNone("kubelet conformance", kubelet)
	close(release["kubelet-v1.37.1"])
	if err := <-kubelet; err != nil {
		t.Errorf("kubelet conformance needs v1.37.1 and the kubelet, both built: %v", err)
	}
	if err := <-drill; err == nil {
		t.Error("a drill flies every release: v1.36.3's failed build is its failure too")
	}
	if err := b.finish(ctx); err != nil {
		t.Errorf("finish repeats an error the jobs were given: %v", err)
	}
	if want := []string{"v1.37.1", "v1.36.3", "kubelet-v1.37.1"}; strings.Join(order, ",") != strings.Join(want, ",") {
		t.Errorf("built %v, want %v (each release once, the first first, the kubelet last)", order, want)
	}
}
