package scale

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/jobconform/jobconform/suites/internal/runner"
)

// cleanupMargin is the time a spec keeps, of its own limit, after waiting
// for its namespace to go: the wait must never be what fails a spec.
const cleanupMargin = time.Minute

// awaitRemoved waits, once a spec is measured, until its namespace ns is
// gone from the cluster, so the next spec is measured alone: a namespace of
// 10,000 pods takes the cluster minutes to remove, and a spec started
// meanwhile shared the apiserver and the kwok nodes with that removal (the
// built-in's 10k run that followed another was slowed by it). The wait ends
// cleanupMargin before ctx's deadline at the latest; it tells whether the
// namespace went, and shows its pods left every progressEvery and when it went.
func awaitRemoved(ctx context.Context, w io.Writer, client kubernetes.Interface, spec, ns string) (gone bool, waited time.Duration) {
	start := time.Now()
	limit := 20 * time.Minute
	if d, ok := ctx.Deadline(); ok && time.Until(d)-cleanupMargin < limit {
		limit = time.Until(d) - cleanupMargin
	}
	if limit <= 0 {
		return false, 0
	}
	shown := start
	err := wait.PollUntilContextTimeout(ctx, time.Second, limit, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if time.Since(shown) >= progressEvery {
			shown = time.Now()
			fmt.Fprintf(w, "%s: namespace %s still being removed after %s (%s)\n", spec, ns, time.Since(start).Round(time.Second), podsLeft(ctx, client, ns))
		}
		return false, nil // a failed read is tried again until the limit
	})
	if err != nil {
		return false, time.Since(start)
	}
	fmt.Fprintf(w, "%s: namespace %s removed in %s\n", spec, ns, time.Since(start).Round(time.Second))
	return true, time.Since(start)
}

// podsLeft says how many pods namespace ns still has, from a one-item list
// (the apiserver counts the rest without sending them).
func podsLeft(ctx context.Context, client kubernetes.Interface, ns string) string {
	l, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return "pods not listed: " + err.Error()
	}
	n := int64(len(l.Items))
	if l.RemainingItemCount != nil {
		n += *l.RemainingItemCount
	}
	return fmt.Sprintf("%d pods left", n)
}

// keepRecording writes a failed run's whole recording to path (gzipped
// JSON lines, as timeline.WriteLines writes them): the report keeps only
// the compact form the reports draw, and judging a violation at 10,000
// pods needs every change — the finalizers, the writers and their times.
func keepRecording(r *runner.Result, path string) {
	err := func() error {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		zw := gzip.NewWriter(f)
		werr := r.Timeline.WriteLines(zw)
		return errors.Join(werr, zw.Close(), f.Close())
	}()
	if err != nil {
		AddReportEntry("recording not kept", fmt.Sprintf("%s: %v", path, err))
		return
	}
	AddReportEntry("recording kept", path)
	fmt.Fprintf(env.progress, "[%s] %s: its whole recording is in %s\n", r.Controller, r.Scenario, path)
}
