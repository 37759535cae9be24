// Package chaos is the disruption vocabulary of jobconform and the injectors
// that carry it out: pod kills in Chaos Mesh's own terms (PodChaos), and, for
// what Chaos Mesh has no word for, evictions, node loss and return, readiness-
// and feature-gate flips and control-plane restarts. Actions are steps of a
// scenario; a Random action expands, from a seed, into a reproducible plan.
//
// The package knows no cluster provider: an Environment (suites/internal/harness
// implements it over internal/cluster) loses nodes and restarts controllers on the local provider or on kind.
package chaos

import (
	"fmt"
	"slices"
	"time"

	"github.com/chaos-mesh/chaos-mesh/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/yamltypes"
)

// Action is one disturbance: exactly one field is set.
type Action struct {
	// PodChaos is Chaos Mesh's PodChaos spec: pod-kill (delete with
	// gracePeriod; 0 deletes at once, as Chaos Mesh does) or container-kill
	// (the container dies with exit code 137). The selector's mode and value
	// choose among the running pods of the scenario's Job; its other fields
	// are ignored, as the harness scopes every action to that Job.
	PodChaos *v1alpha1.PodChaosSpec `json:"podChaos,omitempty"`
	// Evict evicts the selected running pods through the Eviction API
	// (policy/v1), which honours PodDisruptionBudgets.
	Evict *Selection `json:"evict,omitempty"`
	// Preempt has kube-scheduler preempt the selected pods (which must
	// request CPU) for a pod of a higher priority that needs their node.
	Preempt *Selection `json:"preempt,omitempty"`
	// Drain drains the nodes the selected pods run on as kubectl drain does:
	// cordoned, then every pod there evicted (policy/v1, honouring
	// PodDisruptionBudgets) but DaemonSets' and mirror pods. A nodeReturn,
	// or the run's end, uncordons them.
	Drain *Selection `json:"drain,omitempty"`
	// Taint puts a NoExecute taint on the nodes the selected pods run on,
	// whose pods the taint manager then evicts; a nodeReturn, or the run's
	// end, removes it. The nodes stay up: this is the API's node disruption.
	Taint *NodeTaint `json:"taint,omitempty"`
	// NodeLoss stops the kubelet of the nodes the selected pods run on.
	NodeLoss *NodeLoss `json:"nodeLoss,omitempty"`
	// OutOfService declares the lost nodes shut down (see NodeShutdown).
	OutOfService *NodeShutdown `json:"outOfService,omitempty"`
	// NodeReturn brings back every node lost in this run.
	NodeReturn *NodeReturn `json:"nodeReturn,omitempty"`
	// ReadinessGate sets a readiness-gate condition on the selected pods
	// (through pods/status, as the gate's owner would).
	ReadinessGate *GateFlip `json:"readinessGate,omitempty"`
	// FeatureGates restarts the controller under test with these gates
	// (kube-controller-manager's --feature-gates, or the reference controller's).
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
	// ControllerRestart restarts the controller under test; Crash kills it
	// (SIGKILL) instead of stopping it.
	ControllerRestart *Restart `json:"controllerRestart,omitempty"`
	// ControllerStop stops the controller under test (Crash: kills it) and
	// keeps it down for For, or until a ControllerStart (or the run's end):
	// what happens meanwhile is what the controller must catch up with when
	// it is back, e.g. several pod failures and a deadline seen in one sync.
	ControllerStop *Stop `json:"controllerStop,omitempty"`
	// ControllerStart starts the controller ControllerStop stopped.
	ControllerStart *Start `json:"controllerStart,omitempty"`
	// APIServerRestart restarts kube-apiserver (stop, start, wait healthy).
	APIServerRestart *Restart `json:"apiserverRestart,omitempty"`
	// Random is a seeded plan of several of the actions above.
	Random *Random `json:"random,omitempty"`

	// Schedule repeats the action, in Chaos Mesh's Schedule syntax (a cron
	// line or "@every 3s"), Times times in all; the first at once.
	Schedule string `json:"schedule,omitempty"`
	Times    int    `json:"times,omitempty"`
}

// Selection chooses pods as Chaos Mesh's PodSelector does: mode one, all,
// fixed (value: a count), fixed-percent or random-max-percent (value: a percentage).
type Selection struct {
	Mode  v1alpha1.SelectorMode `json:"mode,omitempty"`
	Value string                `json:"value,omitempty"`
	// Index restricts the choice to the pods of one completion index.
	Index *int `json:"index,omitempty"`
}

// NodeLoss makes nodes vanish as a machine that loses power does.
type NodeLoss struct {
	Selection `json:",inline"`
	// DeletePods deletes the selected pods once their node is gone, as a
	// drain or the taint manager would: without a kubelet they stay terminating.
	DeletePods bool `json:"deletePods,omitempty"`
}

// NodeTaint chooses the nodes to taint and the taint.
type NodeTaint struct {
	Selection `json:",inline"`
	// OutOfService uses node.kubernetes.io/out-of-service=nodeshutdown:NoExecute,
	// an operator declaring a node shut down that is in fact alive (PodGC
	// forces nothing while the node is Ready); else ChaosTaint.
	OutOfService bool `json:"outOfService,omitempty"`
}

// NodeShutdown is what an operator does about the lost nodes once the node
// lifecycle controller has marked them NotReady: taint them
// node.kubernetes.io/out-of-service=nodeshutdown:NoExecute (non-graceful node
// shutdown; PodGC then fails their terminating pods), or delete the Node
// objects (PodGC then fails and removes the pods bound to them).
type NodeShutdown struct {
	DeleteNodes bool `json:"deleteNodes,omitempty"`
}

// NodeReturn returns the nodes lost, drained or tainted in this run: taints
// removed, cordons lifted, kubelets running, Ready.
type NodeReturn struct{}

// GateFlip sets a readiness gate's condition.
type GateFlip struct {
	Selection `json:",inline"`
	Gate      corev1.PodConditionType `json:"gate"`
	// Status True or False; empty: flip each selected pod's current value.
	Status corev1.ConditionStatus `json:"status,omitempty"`
}

// Restart restarts a component.
type Restart struct {
	Crash bool `json:"crash,omitempty"`
}

// Stop stops a component for a while.
type Stop struct {
	Crash bool `json:"crash,omitempty"`
	// For: started again after this long, within the step; unset: by a
	// later controllerStart step.
	For Duration `json:"for,omitempty"`
}

// Start starts a stopped component.
type Start struct{}

// Random plans Actions actions, each after a pause drawn between MinPause
// and MaxPause, from the seed of the run. Menu names the kinds to draw from
// (the names of Kinds); a node loss is always followed by a return.
type Random struct {
	Actions  int      `json:"actions"`
	Menu     []string `json:"menu"`
	MinPause Duration `json:"minPause,omitempty"`
	MaxPause Duration `json:"maxPause,omitempty"`
	// Gate is the readiness gate flipped by the readinessGate kind.
	Gate corev1.PodConditionType `json:"gate,omitempty"`
	// GracePeriod of the pod-kill kind (default 30: SIGTERM traps run).
	GracePeriod *int64 `json:"gracePeriod,omitempty"`
}

// StopsController tells whether the action stops the controller under
// test, gracefully or not (a restart, a stop, a feature-gate flip, a random
// plan that may draw one): whatever it had not yet sent, such as the events
// its recorder queues, may be lost with it — a SIGKILL takes the queue, and
// a graceful stop shuts client-go's broadcaster down, which cancels the
// sends in flight.
func (a Action) StopsController() bool {
	switch {
	case a.ControllerRestart != nil, a.ControllerStop != nil, len(a.FeatureGates) > 0:
		return true
	case a.Random != nil:
		return slices.ContainsFunc(a.Random.Menu, func(k string) bool {
			return k == KindControllerCrash || k == KindControllerRestart || k == KindControllerStop || k == KindFeatureGates
		})
	}
	return false
}

// Duration is a time.Duration written as "5s" (yamltypes.Duration).
type Duration = yamltypes.Duration

// Kinds of actions, as named in logs and in Random.Menu.
const (
	KindPodKill           = "pod-kill"
	KindContainerKill     = "container-kill"
	KindPodFailure        = "pod-failure"
	KindEvict             = "evict"
	KindPreempt           = "preempt"
	KindDrain             = "drain"
	KindTaint             = "taint"
	KindNodeLoss          = "node-loss"
	KindNodeReturn        = "node-return"
	KindOutOfService      = "out-of-service"
	KindNodeDelete        = "node-delete"
	KindReadinessGate     = "readiness-gate"
	KindFeatureGates      = "feature-gates"
	KindControllerCrash   = "controller-crash"
	KindControllerRestart = "controller-restart"
	KindAPIServerRestart  = "apiserver-restart"
	KindControllerStop    = "controller-stop"
	KindControllerStart   = "controller-start"
	KindRandom            = "random"
)

// RandomMenu are the kinds a Random plan may draw.
var RandomMenu = []string{KindPodKill, KindContainerKill, KindEvict, KindNodeLoss, KindReadinessGate, KindControllerCrash}

// Kind names the action.
func (a Action) Kind() string {
	switch {
	case a.PodChaos != nil && a.PodChaos.Action == v1alpha1.ContainerKillAction:
		return KindContainerKill
	case a.PodChaos != nil && a.PodChaos.Action == v1alpha1.PodFailureAction:
		return KindPodFailure
	case a.PodChaos != nil:
		return KindPodKill
	case a.Evict != nil:
		return KindEvict
	case a.Preempt != nil:
		return KindPreempt
	case a.Drain != nil:
		return KindDrain
	case a.Taint != nil:
		return KindTaint
	case a.NodeLoss != nil:
		return KindNodeLoss
	case a.NodeReturn != nil:
		return KindNodeReturn
	case a.OutOfService != nil && a.OutOfService.DeleteNodes:
		return KindNodeDelete
	case a.OutOfService != nil:
		return KindOutOfService
	case a.ReadinessGate != nil:
		return KindReadinessGate
	case a.FeatureGates != nil:
		return KindFeatureGates
	case a.ControllerRestart != nil && a.ControllerRestart.Crash:
		return KindControllerCrash
	case a.ControllerRestart != nil:
		return KindControllerRestart
	case a.APIServerRestart != nil:
		return KindAPIServerRestart
	case a.ControllerStop != nil:
		return KindControllerStop
	case a.ControllerStart != nil:
		return KindControllerStart
	case a.Random != nil:
		return KindRandom
	}
	return ""
}

var modes = []v1alpha1.SelectorMode{v1alpha1.OneMode, v1alpha1.AllMode, v1alpha1.FixedMode, v1alpha1.FixedPercentMode, v1alpha1.RandomMaxPercentMode}

// Validate reports what is wrong with the action, naming the field.
func (a Action) Validate() error {
	set := 0
	for _, present := range []bool{a.PodChaos != nil, a.Evict != nil, a.Preempt != nil, a.Drain != nil, a.Taint != nil, a.NodeLoss != nil, a.OutOfService != nil, a.NodeReturn != nil, a.ReadinessGate != nil,
		a.FeatureGates != nil, a.ControllerRestart != nil, a.APIServerRestart != nil, a.ControllerStop != nil, a.ControllerStart != nil, a.Random != nil} {
		if present {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("give exactly one of podChaos, evict, preempt, drain, taint, nodeLoss, outOfService, nodeReturn, readinessGate, featureGates, controllerRestart, controllerStop, controllerStart, apiserverRestart, random (got %d)", set)
	}
	if (a.ControllerStop != nil || a.ControllerStart != nil) && (a.Schedule != "" || a.Times != 0) {
		return fmt.Errorf("controllerStop and controllerStart happen once: no schedule or times")
	}
	if a.ControllerStop != nil && a.ControllerStop.For.Duration < 0 {
		return fmt.Errorf("controllerStop.for must not be negative")
	}
	if a.Schedule != "" || a.Times != 0 {
		if _, err := scheduleTimes(a.Schedule, a.Times, time.Now()); err != nil {
			return err
		}
	}
	var sel *Selection
	switch {
	case a.PodChaos != nil:
		switch a.PodChaos.Action {
		case v1alpha1.PodKillAction, v1alpha1.ContainerKillAction:
		case v1alpha1.PodFailureAction:
			// The pause image in place of the containers: kubelets restart
			// them (kwok nodes run no image: give the scenario nodes: kubelet).
			d, err := time.ParseDuration(ptr.Deref(a.PodChaos.Duration, ""))
			if err != nil || d <= 0 {
				return fmt.Errorf("podChaos.duration: a pod-failure lasts a while, e.g. \"10s\" (the pods run the pause image meanwhile)")
			}
		default:
			return fmt.Errorf("podChaos.action %q: use pod-kill, pod-failure or container-kill", a.PodChaos.Action)
		}
		if a.PodChaos.GracePeriod < 0 {
			return fmt.Errorf("podChaos.gracePeriod must not be negative")
		}
		sel = &Selection{Mode: a.PodChaos.Mode, Value: a.PodChaos.Value}
	case a.Evict != nil:
		sel = a.Evict
	case a.Preempt != nil:
		sel = a.Preempt
	case a.Drain != nil:
		sel = a.Drain
	case a.Taint != nil:
		sel = &a.Taint.Selection
	case a.NodeLoss != nil:
		sel = &a.NodeLoss.Selection
	case a.ReadinessGate != nil:
		sel = &a.ReadinessGate.Selection
		if a.ReadinessGate.Gate == "" {
			return fmt.Errorf("readinessGate.gate: name the pod condition type of the gate")
		}
		if s := a.ReadinessGate.Status; s != "" && s != corev1.ConditionTrue && s != corev1.ConditionFalse {
			return fmt.Errorf("readinessGate.status %q: use True, False, or leave it out to flip", s)
		}
	case len(a.FeatureGates) == 0 && a.FeatureGates != nil:
		return fmt.Errorf("featureGates: name at least one gate")
	case a.Random != nil:
		r := a.Random
		if r.Actions < 1 {
			return fmt.Errorf("random.actions: plan at least one action")
		}
		if len(r.Menu) == 0 {
			return fmt.Errorf("random.menu: name kinds from %v", RandomMenu)
		}
		for _, k := range r.Menu {
			if !slices.Contains(RandomMenu, k) {
				return fmt.Errorf("random.menu: %q is not one of %v", k, RandomMenu)
			}
			if k == KindReadinessGate && r.Gate == "" {
				return fmt.Errorf("random.gate: the readiness-gate kind needs the gate to flip")
			}
		}
		if r.MaxPause.Duration < r.MinPause.Duration {
			return fmt.Errorf("random: maxPause %s is below minPause %s", r.MaxPause, r.MinPause)
		}
	}
	if sel != nil {
		if err := sel.validate(); err != nil {
			return err
		}
	}
	return nil
}

func (s Selection) validate() error {
	if s.Mode == "" {
		return nil // one
	}
	if !containsMode(s.Mode) {
		return fmt.Errorf("mode %q: use one of %v", s.Mode, modes)
	}
	if _, err := s.count(10, func(int) int { return 0 }); err != nil {
		return err
	}
	return nil
}

func containsMode(m v1alpha1.SelectorMode) bool {
	for _, x := range modes {
		if x == m {
			return true
		}
	}
	return false
}
