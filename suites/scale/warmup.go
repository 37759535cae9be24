package scale

import (
	"context"
	"fmt"
	"time"

	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/suites/internal/runner"
)

// warmUpDoc is the Job run, unmeasured, before the first spec: a burst of
// the form's parallelism created, failed by one pod at once, the rest
// deleted and released — the requests every spec makes. On a cluster just
// brought up the first spec, whichever controller ran it, took 1.6–1.7× as
// long as the same spec later in the run (10k backoff-limit-midway, v1.37.1:
// the built-in 80.9 s first, 48.7 s later; the reference 74.9 s first, 47.0 s
// later; the first had 748 requests refused 429 against 111–214), so the
// table compared the order of the specs, not the controllers.
const warmUpDoc = `
name: scale-warm-up
description: not measured; readies the cluster for the first measured spec
features: [backoff]
nodes: kwok
timeout: 15m
job:
  parallelism: %[1]d
  completions: %[1]d
  completionMode: Indexed
  backoffLimit: 0
pods:
  run: 60s
  byIndex:
    "0": {run: 1s, exitCode: 1}
steps:
- await: {conditions: [Failed/BackoffLimitExceeded], active: 0, terminating: 0}
  timeout: 10m
`

// warmUpScenario is warmUpDoc at the largest parallelism among all.
func warmUpScenario(all []*scenarios.Scenario) (*scenarios.Scenario, error) {
	p := int32(1)
	for _, s := range all {
		p = max(p, ptr.Deref(s.Job.Parallelism, 1))
	}
	return scenarios.Parse(fmt.Appendf(nil, warmUpDoc, p))
}

// warmUp runs the warm-up Job with controller c and waits for its namespace
// to go. Its verdict is shown, never counted: the specs judge c.
func warmUp(ctx context.Context, s *scenarios.Scenario, c runner.Controller) {
	start := time.Now()
	spec := fmt.Sprintf("[%s] %s (not measured)", c.Name, s.Name)
	fmt.Fprintf(env.progress, "%s: %d pods\n", spec, ptr.Deref(s.Job.Parallelism, 1))
	r := runner.RunWith(ctx, env.client, env.version, s, c, runner.Options{Pods: env.setup.Pods})
	fmt.Fprintf(env.progress, "%s: %s after %s\n", spec, outcome(r), time.Since(start).Round(time.Second))
	if r.Namespace != "" {
		if gone, waited := awaitRemoved(ctx, env.progress, env.client, spec, r.Namespace); !gone {
			fmt.Fprintf(env.progress, "%s: namespace %s still there after %s: the first spec's figures include its removal\n", spec, r.Namespace, waited.Round(time.Second))
		}
	}
}
