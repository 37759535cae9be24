package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/suites/leftovers"
)

// cleanup removes what jobconform runs left on a cluster it did not create
// (a run killed before its own sweep): every run's, or one's.
func cleanup(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("cleanup", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", os.Getenv("KUBECONFIG"), "the cluster (default $KUBECONFIG)")
	run := fs.String("run", "", "only this run's leftovers (the ID jobconform run printed); default: every run's")
	dryRun := fs.Bool("dry-run", false, "name what is left, remove nothing")
	timeout := fs.Duration("timeout", 3*time.Minute, "how long to wait for the namespaces to go")
	if err := parseFlags(fs, args); err != nil {
		return usageError{err}
	}
	if *kubeconfig == "" {
		return usageError{fmt.Errorf("give --kubeconfig (or set KUBECONFIG): the cluster to clean")}
	}
	if err := reachable(ctx, *kubeconfig); err != nil {
		return usageError{err}
	}
	client, _, err := kube.Client(*kubeconfig, "")
	if err != nil {
		return err
	}
	left, err := leftovers.Find(ctx, client, *run)
	if err != nil {
		return err
	}
	if len(left) == 0 {
		fmt.Println("nothing of jobconform's on the cluster")
		return nil
	}
	for _, l := range left {
		fmt.Println("left:", l)
	}
	if *dryRun {
		return nil
	}
	if err := leftovers.Remove(ctx, client, *run, *timeout, os.Stdout); err != nil {
		return err
	}
	fmt.Println("removed; nothing of jobconform's left")
	return nil
}

// sweep removes what run left on the cluster of kubeconfig, with a time of
// its own: it runs after the suites, also when they were interrupted.
func sweep(kubeconfig, run string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	client, _, err := kube.Client(kubeconfig, "")
	if err != nil {
		return fmt.Errorf("removing what run %s left: %w (run jobconform cleanup --kubeconfig %s --run %s)", run, err, kubeconfig, run)
	}
	fmt.Fprintf(os.Stderr, "jobconform: removing what run %s left on the cluster\n", run)
	if err := leftovers.Remove(ctx, client, run, 3*time.Minute, os.Stderr); err != nil {
		return fmt.Errorf("removing what run %s left: %w", run, err)
	}
	fmt.Fprintf(os.Stderr, "jobconform: nothing of run %s left on the cluster\n", run)
	return nil
}
