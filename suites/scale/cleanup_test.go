package scale

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestAwaitRemoved(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}

	// Removed while waited on: gone.
	client := fake.NewClientset(ns)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		_ = client.CoreV1().Namespaces().Delete(context.Background(), "ns", metav1.DeleteOptions{})
	}()
	var out bytes.Buffer
	if gone, waited := awaitRemoved(context.Background(), &out, client, "[x] s", "ns"); !gone || waited < time.Second {
		t.Errorf("removed after 1.5s: gone=%v after %s", gone, waited)
	}
	if !strings.Contains(out.String(), "[x] s: namespace ns removed in") {
		t.Errorf("the removal is not shown: %q", out.String())
	}

	// Never removed: the wait ends cleanupMargin before the spec's deadline,
	// not at it (a spec must not fail for its clean-up).
	client = fake.NewClientset(ns)
	ctx, cancel := context.WithTimeout(context.Background(), cleanupMargin+2*time.Second)
	defer cancel()
	gone, _ := awaitRemoved(ctx, &out, client, "[x] s", "ns")
	if gone || ctx.Err() != nil {
		t.Errorf("never removed: gone=%v, spec context %v", gone, ctx.Err())
	}
	// No time left: no wait at all.
	ctx2, cancel2 := context.WithTimeout(context.Background(), cleanupMargin/2)
	defer cancel2()
	if gone, waited := awaitRemoved(ctx2, &out, client, "[x] s", "ns"); gone || waited > 100*time.Millisecond {
		t.Errorf("no time left: gone=%v after %s", gone, waited)
	}
}
