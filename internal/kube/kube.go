// Package kube holds the small API helpers every suite needs: throwaway
// namespaces and Job objects built from a pod behaviour.
package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// TestLabel is on every namespace jobconform makes; RunLabel, where set,
// names the run that made it (jobconform run's --kubeconfig runs, whose
// leftovers are found by it).
const (
	TestLabel = "jobconform.io/test"
	RunLabel  = "jobconform.io/run"
)

// NamespaceLabel names, on a cluster object jobconform makes for one run's
// namespace (the admission policy of a refusal of pod changes), that
// namespace: what is left of a gone namespace is found by it.
const NamespaceLabel = "jobconform.io/namespace"

// JobControllerUser is the identity of kube-controller-manager's Job
// controller where it runs with --use-service-account-credentials (the
// local provider's): its requests in the apiserver's audit log.
const JobControllerUser = "system:serviceaccount:kube-system:job-controller"

// CreateNamespace makes a namespace named after prefix, of run (RunLabel;
// "" for none), and waits for its default ServiceAccount: the
// ServiceAccount admission plugin rejects pods created before it exists,
// which would show as a controller fault.
func CreateNamespace(ctx context.Context, client kubernetes.Interface, prefix, run string) (string, error) {
	return createNamespace(ctx, client, prefix, run, 30*time.Second)
}

// CreateNamespaceWithin is CreateNamespace waiting up to timeout for the
// default ServiceAccount.
func CreateNamespaceWithin(ctx context.Context, client kubernetes.Interface, prefix string, timeout time.Duration) (string, error) {
	return createNamespace(ctx, client, prefix, "", timeout)
}

func createNamespace(ctx context.Context, client kubernetes.Interface, prefix, run string, timeout time.Duration) (string, error) {
	labels := map[string]string{TestLabel: "true"}
	if run != "" {
		labels[RunLabel] = run
	}
	ns, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-", Labels: labels},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("create namespace: %w", err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return "", fmt.Errorf("namespace %s: default ServiceAccount not created: %w", ns.Name, err)
	}
	return ns.Name, nil
}

// DeleteNamespace deletes ns without waiting; its objects go with it.
func DeleteNamespace(ctx context.Context, client kubernetes.Interface, ns string) error {
	err := client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// HoldFinalizer is a finalizer a scenario's pod template may carry to hold
// its pods in the API once they ended or were deleted, as another
// controller's finalizer would (a log collector's): the Job controller
// copies it to every pod, and the harness releases it when the run's
// namespace goes (ReleaseHeld).
const HoldFinalizer = "jobconform.io/hold"

// ReleaseHeld removes HoldFinalizer from every pod of ns that carries it,
// so that the namespace can go.
func ReleaseHeld(ctx context.Context, client kubernetes.Interface, ns string) error {
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("release held pods of %s: %w", ns, err)
	}
	patch := []byte(fmt.Sprintf(`{"metadata":{"$deleteFromPrimitiveList/finalizers":[%q]}}`, HoldFinalizer))
	var errs []error
	for _, p := range pods.Items {
		if !slices.Contains(p.Finalizers, HoldFinalizer) {
			continue
		}
		_, err := client.CoreV1().Pods(ns).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("release held pod %s/%s: %w", ns, p.Name, err))
		}
	}
	return errors.Join(errs...)
}

// JobFinished tells whether a Job has its terminal condition (Complete or Failed True).
func JobFinished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// JobCondition is the status's condition of type t (nil: none).
func JobCondition(s batchv1.JobStatus, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// PodTerminal tells whether a pod reached Succeeded or Failed.
func PodTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// PodTerminating tells whether a pod is being deleted and not yet terminal:
// the pods status.terminating counts.
func PodTerminating(p *corev1.Pod) bool {
	return p.DeletionTimestamp != nil && !PodTerminal(p)
}

// PodCondition returns the status of a pod condition ("" when absent).
func PodCondition(p *corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}

// IsOwnedBy tells whether p's controller owner is the Job named job.
func IsOwnedBy(p *corev1.Pod, job string) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.Kind == "Job" && ref.Name == job
}

// WaitNodeReady waits until node exists and its Ready condition is True.
func WaitNodeReady(ctx context.Context, client kubernetes.Interface, node string, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		n, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("node %s not Ready within %s: %w", node, timeout, err)
	}
	return nil
}

// Client connects to the cluster of kubeconfig, and tells its release.
func Client(kubeconfig, version string) (kubernetes.Interface, string, error) {
	rc, err := LoadConfig(kubeconfig)
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, "", err
	}
	if version == "" {
		info, err := client.Discovery().ServerVersion()
		if err != nil {
			return nil, "", fmt.Errorf("cluster at %s unreachable: check the kubeconfig and that the cluster runs: %w", rc.Host, err)
		}
		version = info.GitVersion
	}
	return client, version, nil
}
