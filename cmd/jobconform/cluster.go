package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	clusterpkg "github.com/jobconform/jobconform/internal/cluster"
	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/pods"
	"github.com/jobconform/jobconform/internal/release"
)

// cluster runs a local cluster until interrupted, for a person to use.
func cluster(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	o, err := options.FromEnv()
	if err != nil {
		return usageError{err}
	}
	o.AddClusterFlags(fs)
	fs.StringVar(&o.Version, "k8s-version", o.Version, "Kubernetes release of the cluster (default "+release.Default+")")
	nodes := fs.Int("node-count", 3, "nodes (on the local provider each is lost and returned alone)")
	if err := parseFlags(fs, args); err != nil {
		return usageError{err}
	}
	o.Run.Versions = nil
	if err := settle(&o); err != nil {
		return usageError{err}
	}
	c, err := clusterpkg.Create(ctx, "local", clusterpkg.Config{Version: o.Version, Nodes: *nodes, NodeKind: o.Nodes, FeatureGates: o.FeatureGates, Progress: os.Stderr})
	if err != nil {
		return err
	}
	defer c.Stop()
	fmt.Printf("cluster ready. Use it with:\n  export KUBECONFIG=%s\nJudge Job controllers on it, as on any cluster of yours, from another shell:\n  jobconform run --kubeconfig %s%s\nComponent logs: %s\nPress Ctrl-C to stop it.\n",
		c.Kubeconfig(), c.Kubeconfig(), podFlags(c.Pods()), c.LogDir())
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "stopping cluster")
	return c.Stop()
}

// podFlags are the flags jobconform run needs to run its pods on nodes that
// need them rendered so (kubelet nodes: a local image, no pod network).
func podFlags(t pods.Target) string {
	var out string
	if t.Image != "" {
		out += " --pod-image " + t.Image
	}
	if t.PauseImage != "" {
		out += " --pause-image " + t.PauseImage
	}
	if t.HostNetwork {
		out += " --pod-host-network"
	}
	return out
}
