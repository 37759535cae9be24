package chaos

import (
	"regexp"
	"testing"
)

// validName: what kind accepts for a cluster name, and more strictly.
var validName = regexp.MustCompile(`^[a-z0-9-]+$`)

func TestClusterName(t *testing.T) {
	for _, spec := range []string{"builtin-seeded-soak", "reference-evictions-ignored-by-pod-failure-policy", "reference-node-loss-prp-failed-out-of-service", "broken-replace-terminating"} {
		n := clusterName(spec)
		if len(n) > 40 || !validName.MatchString(n) {
			t.Errorf("clusterName(%q) = %q: want at most 40 characters of [a-z0-9-]", spec, n)
		}
	}
	if a, b := clusterName("reference-node-loss-prp-failed-out-of-service"), clusterName("reference-node-loss-prp-failed-out-of-service-2"); a == b {
		t.Errorf("two specs share the cluster name %q", a)
	}
}
