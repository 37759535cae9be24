package controller

import (
	"k8s.io/component-base/featuregate"
)

// The reference controller's own feature gates. They let a drill turn a
// behaviour off and on again on any Kubernetes version, independently of the
// cluster's gates (which lock once a feature is GA).
const (
	// JobPodReplacementPolicy (KEP-3939). Off, the controller behaves as
	// before the KEP: every deleted pod is replaced at once (as
	// TerminatingOrFailed) and status.terminating is not reported — the
	// KEP's rollback behaviour.
	JobPodReplacementPolicy featuregate.Feature = "JobPodReplacementPolicy"
)

// Gates holds the controller's feature gates; Set/Set-from-flag as featuregate does.
type Gates struct {
	featuregate.MutableFeatureGate
}

// NewGates returns the gates at their defaults.
func NewGates() *Gates {
	g := featuregate.NewFeatureGate()
	// Add can only fail for a duplicate name.
	_ = g.Add(map[featuregate.Feature]featuregate.FeatureSpec{
		JobPodReplacementPolicy: {Default: true, PreRelease: featuregate.Beta},
	})
	return &Gates{g}
}
