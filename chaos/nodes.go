// Node disruption through the API: drains and taints, and their undoing.

package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// ChaosTaint is the NoExecute taint of a taint action (unless outOfService).
var ChaosTaint = corev1.Taint{Key: "jobconform.io/chaos", Value: "taint", Effect: corev1.TaintEffectNoExecute}

// RestoreAnnotation is on every node a drain or a taint changed, until it is
// restored: what to undo, so that a run killed before its end (SIGKILL, a
// lost machine) is undone by the next `jobconform cleanup` (RestoreNodes).
const RestoreAnnotation = "jobconform.io/chaos-restore"

// restore is what RestoreAnnotation holds.
type restore struct {
	// Cordoned: the node was schedulable before, and a drain cordoned it.
	Cordoned bool `json:"cordoned,omitempty"`
	// Taints are the keys of the taints the run added.
	Taints []string `json:"taints,omitempty"`
	// Namespace is the run's.
	Namespace string `json:"namespace"`
}

// drain cordons the nodes of the chosen pods, then evicts every pod on them
// a drain would, retrying while a PodDisruptionBudget refuses.
func (in *Injector) drain(ctx context.Context, sel Selection, rng *rand.Rand) (string, error) {
	nodes, targets, err := in.nodesOf(ctx, sel, rng)
	if err != nil {
		return "", err
	}
	c := in.Env.Client()
	effect := "drained " + strings.Join(nodes, ", ") + " under " + describe(targets)
	var evicted []string
	for _, n := range nodes {
		if err := in.changeNode(ctx, n, func(node *corev1.Node, r *restore) {
			if !node.Spec.Unschedulable {
				node.Spec.Unschedulable, r.Cordoned = true, true
			}
		}); err != nil {
			return effect, fmt.Errorf("cordon %s: %w", n, err)
		}
		list, err := c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n})
		if err != nil {
			return effect, err
		}
		for _, p := range list.Items {
			if p.Spec.NodeName != n || !drained(&p) {
				continue
			}
			if err := in.evictRetrying(ctx, c, &p); err != nil {
				return effect, err
			}
			if p.Namespace != in.Namespace {
				evicted = append(evicted, p.Namespace+"/"+p.Name)
			}
		}
	}
	if len(evicted) > 0 {
		// Another workload's pods: the run disturbed them, as it was allowed to.
		effect += "; also evicted " + strings.Join(evicted, ", ")
	}
	return effect, nil
}

// drained tells whether kubectl drain would evict p: not a DaemonSet's, not
// a mirror pod, not finished or already going.
func drained(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return false
	}
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return false
	}
	if ref := metav1.GetControllerOf(p); ref != nil && ref.Kind == "DaemonSet" {
		return false
	}
	return true
}

// evictRetrying evicts p, again while a PodDisruptionBudget refuses (429),
// up to the injector's wait timeout.
func (in *Injector) evictRetrying(ctx context.Context, c kubernetes.Interface, p *corev1.Pod) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, time.Second, in.waitTimeout(), true, func(ctx context.Context) (bool, error) {
		last = EvictPod(ctx, c, p)
		switch {
		case last == nil || apierrors.IsNotFound(last):
			return true, nil
		case apierrors.IsForbidden(last) && apierrors.HasStatusCause(last, corev1.NamespaceTerminatingCause):
			// Its namespace is being deleted, and the pod with it: kubectl
			// drain (k8s.io/kubectl v0.35.3, pkg/drain) waits for that too.
			return true, nil
		case apierrors.IsTooManyRequests(last):
			return false, nil // a PodDisruptionBudget: as kubectl drain, wait
		}
		return false, last
	})
	if err != nil && last != nil {
		return fmt.Errorf("drain: evict %s/%s: %w", p.Namespace, p.Name, last)
	}
	return err
}

// taintNodes puts the taint on the nodes of the chosen pods.
func (in *Injector) taintNodes(ctx context.Context, t NodeTaint, rng *rand.Rand) (string, error) {
	nodes, targets, err := in.nodesOf(ctx, t.Selection, rng)
	if err != nil {
		return "", err
	}
	taint := ChaosTaint
	if t.OutOfService {
		taint = OutOfServiceTaint
	}
	effect := fmt.Sprintf("tainted %s %s=%s:%s under %s", strings.Join(nodes, ", "), taint.Key, taint.Value, taint.Effect, describe(targets))
	for _, n := range nodes {
		if err := in.changeNode(ctx, n, func(node *corev1.Node, r *restore) {
			if slices.ContainsFunc(node.Spec.Taints, func(x corev1.Taint) bool { return x.Key == taint.Key }) {
				return // someone else's: not ours to remove later
			}
			node.Spec.Taints = append(node.Spec.Taints, taint)
			r.Taints = append(r.Taints, taint.Key)
		}); err != nil {
			return effect, fmt.Errorf("taint %s: %w", n, err)
		}
	}
	return effect, nil
}

// nodesOf chooses pods as sel says and returns their nodes, in order.
func (in *Injector) nodesOf(ctx context.Context, sel Selection, rng *rand.Rand) ([]string, []corev1.Pod, error) {
	targets, err := in.choose(ctx, sel, rng, func(p *corev1.Pod) bool { return p.Spec.NodeName != "" })
	if err != nil {
		return nil, nil, err
	}
	var nodes []string
	for _, p := range targets {
		if !slices.Contains(nodes, p.Spec.NodeName) {
			nodes = append(nodes, p.Spec.NodeName)
		}
	}
	return nodes, targets, nil
}

// changeNode changes node n as change says, recording in its
// RestoreAnnotation what to undo, and remembers it for restoreNodes.
func (in *Injector) changeNode(ctx context.Context, n string, change func(*corev1.Node, *restore)) error {
	nodes := in.Env.Client().CoreV1().Nodes()
	err := retryConflict(ctx, func() error {
		node, err := nodes.Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			return err
		}
		r := restore{Namespace: in.Namespace}
		if s, ok := node.Annotations[RestoreAnnotation]; ok {
			if err := json.Unmarshal([]byte(s), &r); err != nil {
				return fmt.Errorf("annotation %s: %w", RestoreAnnotation, err)
			}
		}
		change(node, &r)
		data, _ := json.Marshal(r)
		if node.Annotations == nil {
			node.Annotations = map[string]string{}
		}
		node.Annotations[RestoreAnnotation] = string(data)
		_, err = nodes.Update(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err == nil && !slices.Contains(in.touched, n) {
		in.touched = append(in.touched, n)
	}
	return err
}

// restoreNodes undoes the drains and taints of this run.
func (in *Injector) restoreNodes(ctx context.Context) error {
	var errs []error
	for _, n := range in.touched {
		if err := RestoreNode(ctx, in.Env.Client(), n); err != nil {
			errs = append(errs, err)
		}
	}
	in.touched = nil
	return errors.Join(errs...)
}

// RestoreNode undoes what its RestoreAnnotation says a run did to node n:
// the cordon lifted, the run's taints removed, the annotation gone.
func RestoreNode(ctx context.Context, c kubernetes.Interface, n string) error {
	nodes := c.CoreV1().Nodes()
	err := retryConflict(ctx, func() error {
		node, err := nodes.Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s, ok := node.Annotations[RestoreAnnotation]
		if !ok {
			return nil
		}
		var r restore
		if err := json.Unmarshal([]byte(s), &r); err != nil {
			return fmt.Errorf("annotation %s: %w", RestoreAnnotation, err)
		}
		if r.Cordoned {
			node.Spec.Unschedulable = false
		}
		node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return slices.Contains(r.Taints, t.Key) })
		delete(node.Annotations, RestoreAnnotation)
		_, err = nodes.Update(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("restore node %s: %w", n, err)
	}
	return nil
}

// ChangedBy is the namespace of the run that changed node n and has not
// restored it (its RestoreAnnotation), and whether there is one.
func ChangedBy(n *corev1.Node) (string, bool) {
	s, ok := n.Annotations[RestoreAnnotation]
	if !ok {
		return "", false
	}
	var r restore
	_ = json.Unmarshal([]byte(s), &r) // unreadable: changed all the same, by no known run
	return r.Namespace, true
}

// RestoreNodes restores every node a run left changed (its
// RestoreAnnotation) for which of(namespace of that run) holds (nil: every
// one), and names them.
func RestoreNodes(ctx context.Context, c kubernetes.Interface, of func(namespace string) bool) ([]string, error) {
	list, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var restored []string
	var errs []error
	for _, n := range list.Items {
		ns, changed := ChangedBy(&n)
		if !changed || (of != nil && !of(ns)) {
			continue
		}
		if err := RestoreNode(ctx, c, n.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		restored = append(restored, n.Name)
	}
	return restored, errors.Join(errs...)
}
