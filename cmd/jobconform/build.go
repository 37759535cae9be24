package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/jobconform/jobconform/internal/k8sbin"
	"github.com/jobconform/jobconform/internal/options"
	"github.com/jobconform/jobconform/internal/release"
)

// versionsFlag parses the repeatable --k8s-version over the environment's.
func versionsFlag(fs *flag.FlagSet, usage string) *options.Options {
	o, err := options.FromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "jobconform: warning:", err)
	}
	o.AddVersionsFlag(fs, usage)
	options.AddBinariesFlag(fs)
	describeReleases(fs)
	return &o
}

// build builds and caches the Kubernetes binaries of the releases asked for.
func build(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	o := versionsFlag(fs, "Kubernetes release to build")
	kubelet := fs.Bool("kubelet", false, "build the kubelet too (for kubelet nodes)")
	kueue := fs.String("kueue", "", "build Kueue's manager of this release too and keep its CRDs (\"default\": "+k8sbin.KueueVersion+"; MultiKueue, issue #31)")
	chaosMesh := fs.Bool("chaos-mesh", false, "build Chaos Mesh's controller-manager ("+k8sbin.ChaosMeshVersion+") too and keep its CRDs: to install on a cluster of yours (issue #47)")
	if err := parseFlags(fs, args); err != nil {
		return usageError{err}
	}
	if *chaosMesh {
		set, err := (&k8sbin.Builder{Progress: os.Stderr}).EnsureChaosMesh(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "Chaos Mesh %s:\n  %-24s %s\n  %-24s %s\n", set.Version, "controller-manager", set.ControllerManager, "CRDs", set.CRDDir)
		if len(o.Run.Versions) == 0 && *kueue == "" {
			return nil
		}
	}
	if *kueue != "" {
		v := *kueue
		if v == "default" {
			v = ""
		}
		if err := buildKueue(ctx, v); err != nil {
			return err
		}
		if len(o.Run.Versions) == 0 {
			return nil
		}
	}
	versions := o.Run.Versions
	if len(versions) == 0 {
		versions = []string{""}
	}
	for i, v := range versions {
		var err error
		if versions[i], err = release.Resolve(v); err != nil { // "previous" too
			return usageError{fmt.Errorf("--k8s-version: %w", err)}
		}
	}
	return buildReleases(ctx, versions, nil, *kubelet)
}

// buildReleases builds (once; cached) the binaries of the releases, and the
// kubelet of the first of versions when kubelet is set, with progress.
func buildReleases(ctx context.Context, versions, more []string, kubelet bool) error {
	build := releaseBuilder()
	for i, v := range append(append([]string(nil), versions...), more...) {
		if v == "" {
			continue // an existing cluster
		}
		if err := build(ctx, v, false); err != nil {
			return err
		}
		if kubelet && i == 0 {
			if err := build(ctx, v, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// releaseBuilder builds (once; cached) one release's binaries, or with
// kubelet set its kubelet, and says where they are.
func releaseBuilder() func(ctx context.Context, v string, kubelet bool) error {
	b := &k8sbin.Builder{Progress: os.Stderr}
	return func(ctx context.Context, v string, kubelet bool) error {
		if kubelet {
			path, err := b.EnsureKubelet(ctx, v)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "Kubernetes %s:\n  %-24s %s\n", v, k8sbin.Kubelet, path)
			return nil
		}
		set, err := b.Ensure(ctx, v)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "Kubernetes %s (etcd %s, kwok %s):\n", set.Version, set.EtcdVersion, k8sbin.KwokVersion)
		for _, bin := range []k8sbin.Binary{k8sbin.APIServer, k8sbin.ControllerManager, k8sbin.Scheduler, k8sbin.Etcd, k8sbin.Kwok} {
			fmt.Fprintf(os.Stderr, "  %-24s %s\n", bin, set.Path(bin))
		}
		return nil
	}
}

// buildKueue builds (once; cached) Kueue's manager of release v (""
// k8sbin.KueueVersion) and keeps its CRDs, with progress.
func buildKueue(ctx context.Context, v string) error {
	set, err := (&k8sbin.Builder{Progress: os.Stderr}).EnsureKueue(ctx, v)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "Kueue %s:\n  %-24s %s\n  %-24s %s\n", set.Version, "manager", set.Manager, "CRDs", set.CRDDir)
	return nil
}
