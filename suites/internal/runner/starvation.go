package runner

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/jobconform/jobconform/internal/starvation"
	"github.com/jobconform/jobconform/internal/timeline"
	"github.com/jobconform/jobconform/scenarios/invariants"
)

// meterInterval is how often a run samples the machine: once a second,
// the apiserver every other sample (a GET of a namespace: 24 runs at once
// add a dozen requests a second, nothing beside their own watches).
const meterInterval = time.Second

// startMeter samples the machine and the apiserver client reaches while a
// scenario runs. Any answer of the apiserver counts, a refusal included
// (a user's cluster need not let the harness read namespace default).
func startMeter(ctx context.Context, client kubernetes.Interface) *starvation.Meter {
	return starvation.Start(ctx, meterInterval, func(ctx context.Context) error {
		_, err := client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{})
		var status apierrors.APIStatus
		if err != nil && errors.As(err, &status) && !apierrors.IsTimeout(err) && !apierrors.IsServerTimeout(err) {
			return nil
		}
		return err
	})
}

// starvedBetween reads the meter for invariants.Context.Starved: why the
// machine was starved between two moments ("" when it was not).
func starvedBetween(m *starvation.Meter) func(from, to time.Time) string {
	return func(from, to time.Time) string {
		return starvation.Between(m.Samples(), from, to, meterInterval).Why()
	}
}

// statusLag is the longest a container's end took to show in its pod's
// status as recorded: the first entry showing it terminated, less its
// finishedAt (whole seconds: the lag reads up to a second long); and how
// many runs of a container had their end written again, with another
// finishedAt.
func statusLag(t timeline.Timeline) (worst time.Duration, rewritten int) {
	seen := map[string]time.Time{}
	for _, e := range t {
		p := e.Pod()
		if p == nil {
			continue
		}
		for _, cs := range p.Status.ContainerStatuses {
			term := cs.State.Terminated
			if term == nil || term.FinishedAt.IsZero() {
				continue
			}
			key := invariants.ContainerRun(p, cs)
			first, ok := seen[key]
			switch {
			case !ok:
				seen[key] = term.FinishedAt.Time
				worst = max(worst, e.Time.Sub(term.FinishedAt.Time))
			case !first.Equal(term.FinishedAt.Time):
				seen[key] = term.FinishedAt.Time
				rewritten++
			}
		}
	}
	return worst, rewritten
}
