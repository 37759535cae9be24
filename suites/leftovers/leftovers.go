// Package leftovers finds and removes what jobconform leaves on a cluster it
// did not create: its namespaces (and the pods there still holding a
// jobconform finalizer, whose controller is gone), the nodes a chaos drain or
// taint changed, the preemptors' PriorityClass, the admission policies that
// refused a controller's pod changes. jobconform run sweeps its own
// after a run on --kubeconfig, an interrupted one too; jobconform cleanup
// sweeps every run's (one killed before it could).
package leftovers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/jobconform/jobconform/chaos"
	"github.com/jobconform/jobconform/internal/kube"
)

// namespaces are jobconform's namespaces of run ("": of every run).
func namespaces(ctx context.Context, c kubernetes.Interface, run string) ([]corev1.Namespace, error) {
	sel := kube.TestLabel + "=true"
	if run != "" {
		sel += "," + kube.RunLabel + "=" + run
	}
	list, err := c.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("list jobconform's namespaces: %w", err)
	}
	return list.Items, nil
}

// scope tells which changed nodes are run's to restore: those changed from
// one of its namespaces, or from a namespace that is gone (its run ended
// without restoring them). Another live run's are left to it.
func scope(ctx context.Context, c kubernetes.Interface, run string) (func(string) bool, error) {
	if run == "" {
		return nil, nil
	}
	ours, err := namespaces(ctx, c, run)
	if err != nil {
		return nil, err
	}
	return func(ns string) bool {
		if slices.ContainsFunc(ours, func(n corev1.Namespace) bool { return n.Name == ns }) {
			return true
		}
		_, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, nil
}

// Find names what run ("": every run) left on the cluster.
func Find(ctx context.Context, c kubernetes.Interface, run string) ([]string, error) {
	var out []string
	nss, err := namespaces(ctx, c, run)
	if err != nil {
		return nil, err
	}
	for _, ns := range nss {
		what := "namespace " + ns.Name
		if ns.DeletionTimestamp != nil {
			what += " (terminating)"
		}
		out = append(out, what)
	}
	of, err := scope(ctx, c, run)
	if err != nil {
		return nil, err
	}
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	for _, n := range nodes.Items {
		if ns, changed := chaos.ChangedBy(&n); changed && (of == nil || of(ns)) {
			out = append(out, fmt.Sprintf("node %s, cordoned or tainted by the chaos of namespace %s (annotation %s)", n.Name, ns, chaos.RestoreAnnotation))
		}
	}
	if pc, err := preemptorClass(ctx, c, run); err != nil {
		return nil, err
	} else if pc {
		out = append(out, "PriorityClass "+chaos.PreemptorPriorityClass)
	}
	refusing, err := refusals(ctx, c, of)
	if err != nil {
		return nil, err
	}
	for _, r := range refusing {
		out = append(out, "ValidatingAdmissionPolicy and binding "+r+" (a refusal of pod changes)")
	}
	return out, nil
}

// refusals are the names of the admission policies (and bindings, named
// alike) that refused a controller's pod changes and are run's to remove
// (of: nil for every run's).
func refusals(ctx context.Context, c kubernetes.Interface, of func(string) bool) ([]string, error) {
	list, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(ctx, metav1.ListOptions{LabelSelector: kube.TestLabel + "=true"})
	if err != nil {
		return nil, fmt.Errorf("list ValidatingAdmissionPolicies: %w", err)
	}
	var out []string
	for _, p := range list.Items {
		if of == nil || of(p.Labels[kube.NamespaceLabel]) {
			out = append(out, p.Name)
		}
	}
	return out, nil
}

// removeRefusals deletes refusals' policies and their bindings.
func removeRefusals(ctx context.Context, c kubernetes.Interface, of func(string) bool) error {
	names, err := refusals(ctx, c, of)
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range names {
		a := c.AdmissionregistrationV1()
		if err := a.ValidatingAdmissionPolicyBindings().Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
		if err := a.ValidatingAdmissionPolicies().Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// preemptorClass tells whether the preemptors' PriorityClass is there and
// run's to remove: no other run's namespace is left that may use it.
func preemptorClass(ctx context.Context, c kubernetes.Interface, run string) (bool, error) {
	_, err := c.SchedulingV1().PriorityClasses().Get(ctx, chaos.PreemptorPriorityClass, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if run == "" {
		return true, nil
	}
	all, err := namespaces(ctx, c, "")
	if err != nil {
		return false, err
	}
	for _, ns := range all {
		if ns.Labels[kube.RunLabel] != run && ns.DeletionTimestamp == nil {
			return false, nil
		}
	}
	return true, nil
}

// finalizerGrace is how long a deleted namespace's pods keep jobconform's
// finalizers before Remove takes them off: the controller that would have
// released them has been given its chance.
const finalizerGrace = 20 * time.Second

// Remove removes what run ("": every run) left: nodes restored, the
// PriorityClass deleted, namespaces deleted and waited for (up to timeout),
// the finalizers of a gone jobconform controller taken off their pods. It
// fails naming whatever is still there.
func Remove(ctx context.Context, c kubernetes.Interface, run string, timeout time.Duration, progress io.Writer) error {
	if progress == nil {
		progress = io.Discard
	}
	var errs []error
	of, err := scope(ctx, c, run)
	if err != nil {
		return err
	}
	restored, err := chaos.RestoreNodes(ctx, c, of)
	if len(restored) > 0 {
		fmt.Fprintf(progress, "restored nodes %s (cordons and taints of jobconform's chaos undone)\n", strings.Join(restored, ", "))
	}
	errs = append(errs, err, removeRefusals(ctx, c, of))
	if pc, err := preemptorClass(ctx, c, run); err != nil {
		errs = append(errs, err)
	} else if pc {
		err := c.SchedulingV1().PriorityClasses().Delete(ctx, chaos.PreemptorPriorityClass, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	nss, err := namespaces(ctx, c, run)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, ns := range nss {
		if ns.DeletionTimestamp == nil {
			if err := kube.DeleteNamespace(ctx, c, ns.Name); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(nss) > 0 {
		fmt.Fprintf(progress, "waiting for %d namespaces of jobconform's to go\n", len(nss))
		start := time.Now()
		_ = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
			left, err := namespaces(ctx, c, run)
			if err != nil {
				return false, nil // asked again at the next poll
			}
			if time.Since(start) > finalizerGrace {
				for _, ns := range left {
					releasePods(ctx, c, ns.Name)
				}
			}
			return len(left) == 0, nil
		})
	}
	left, err := Find(ctx, c, run)
	if err != nil {
		errs = append(errs, err)
	} else if len(left) > 0 {
		errs = append(errs, fmt.Errorf("still on the cluster after %s: %s; run `jobconform cleanup --kubeconfig …` again, or remove them by hand", timeout, strings.Join(left, "; ")))
	}
	return errors.Join(errs...)
}

// releasePods takes jobconform's finalizers (jobconform.io/…) off the pods
// of namespace ns: their controller is gone, and the namespace cannot go
// while they hold them.
func releasePods(ctx context.Context, c kubernetes.Interface, ns string) {
	list, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, p := range list.Items {
		keep := slices.DeleteFunc(slices.Clone(p.Finalizers), func(f string) bool { return strings.HasPrefix(f, "jobconform.io/") })
		if len(keep) == len(p.Finalizers) {
			continue
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": keep, "resourceVersion": p.ResourceVersion}})
		_, _ = c.CoreV1().Pods(ns).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}) // a conflict: again at the next poll
	}
}
