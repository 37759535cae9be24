// What an action asks of the cluster beyond the API of the Job's namespace.

package chaos

import (
	"fmt"
	"slices"
)

// Need is a control an action needs beyond the API of the scenario's
// namespace. An Environment that lacks one says why (Lacks), and a scenario
// needing it is not applicable there, with that reason: on a cluster the
// harness did not create, the control plane and the kubelets are not its to
// stop, and nodes others use are not its to disturb unless it was told so.
type Need string

const (
	// NeedNodeDisruption: cordons, drains or taints nodes, or preempts pods
	// on them: whatever else runs there is disturbed too.
	NeedNodeDisruption Need = "node-disruption"
	// NeedKubelet: stops and starts nodes' kubelets (node loss and return,
	// and declaring a lost node shut down).
	NeedKubelet Need = "kubelet"
	// NeedController: restarts or stops the controller under test, or
	// changes its feature gates.
	NeedController Need = "controller"
	// NeedAPIServer: restarts kube-apiserver.
	NeedAPIServer Need = "apiserver"
)

// kindNeeds are the needs of each kind of action; kinds absent need the
// namespace's API alone. A node return undoes what came before it (a node
// loss, which needs the kubelet; a drain or a taint, undone through the API).
var kindNeeds = map[string]Need{
	KindPreempt:           NeedNodeDisruption,
	KindDrain:             NeedNodeDisruption,
	KindTaint:             NeedNodeDisruption,
	KindNodeLoss:          NeedKubelet,
	KindOutOfService:      NeedKubelet,
	KindNodeDelete:        NeedKubelet,
	KindFeatureGates:      NeedController,
	KindControllerCrash:   NeedController,
	KindControllerRestart: NeedController,
	KindControllerStop:    NeedController,
	KindControllerStart:   NeedController,
	KindAPIServerRestart:  NeedAPIServer,
}

// Needs are the controls the action needs (a Random plan: those of every
// kind on its menu), in a stable order.
func (a Action) Needs() []Need {
	kinds := []string{a.Kind()}
	if a.Random != nil {
		kinds = a.Random.Menu
	}
	var out []Need
	for _, k := range kinds {
		if n, ok := kindNeeds[k]; ok && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// Unmet says why env cannot carry out the actions ("" when it can): the
// first need env lacks, and the action that needs it.
func Unmet(env Environment, actions ...Action) string {
	for _, a := range actions {
		for _, n := range a.Needs() {
			if why := env.Lacks(n); why != "" {
				return fmt.Sprintf("%s: %s", a.Kind(), why)
			}
		}
	}
	return ""
}
