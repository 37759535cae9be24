package scale

import (
	"context"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
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
// namespace went, and shows its pods left every progressEvery.
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
	return err == nil, time.Since(start)
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
