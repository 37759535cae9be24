package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/jobconform/jobconform/internal/pods"
)

// The pod disruptions, each written once: the injector's actions and the
// scenario runner's acts both call these.

// DeletePod deletes a pod with the given grace period (nil: the pod's own).
func DeletePod(ctx context.Context, c kubernetes.Interface, p *corev1.Pod, grace *int64) error {
	return deletePod(ctx, c, p, metav1.DeleteOptions{GracePeriodSeconds: grace})
}

// DeletePodAsSeen deletes the pod only as it was read (its UID and
// resourceVersion as preconditions): a pod that changed since — say, ended
// between the list and the delete on a loaded machine — is left alone, and
// the error is a Conflict (apierrors.IsConflict): read it again and decide.
func DeletePodAsSeen(ctx context.Context, c kubernetes.Interface, p *corev1.Pod, grace *int64) error {
	return deletePod(ctx, c, p, metav1.DeleteOptions{GracePeriodSeconds: grace, Preconditions: asSeen(p)})
}

func deletePod(ctx context.Context, c kubernetes.Interface, p *corev1.Pod, o metav1.DeleteOptions) error {
	if err := c.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, o); err != nil {
		return fmt.Errorf("delete %s: %w", p.Name, err)
	}
	return nil
}

// EvictPod evicts a pod through the Eviction API (policy/v1), which honours
// PodDisruptionBudgets and adds the DisruptionTarget condition.
func EvictPod(ctx context.Context, c kubernetes.Interface, p *corev1.Pod) error {
	return evictPod(ctx, c, p, nil)
}

// EvictPodAsSeen is EvictPod with DeletePodAsSeen's preconditions.
func EvictPodAsSeen(ctx context.Context, c kubernetes.Interface, p *corev1.Pod) error {
	return evictPod(ctx, c, p, &metav1.DeleteOptions{Preconditions: asSeen(p)})
}

func evictPod(ctx context.Context, c kubernetes.Interface, p *corev1.Pod, o *metav1.DeleteOptions) error {
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}, DeleteOptions: o}
	if err := c.PolicyV1().Evictions(p.Namespace).Evict(ctx, ev); err != nil {
		return fmt.Errorf("evict %s: %w", p.Name, err)
	}
	return nil
}

func asSeen(p *corev1.Pod) *metav1.Preconditions {
	return &metav1.Preconditions{UID: &p.UID, ResourceVersion: &p.ResourceVersion}
}

// EndRun makes the pod's container exit now: with exitCode when given (137 is
// a killed container), else with the code its behaviour says. The kwok
// stages read the run time and exit code again on every change of the pod.
func EndRun(ctx context.Context, c kubernetes.Interface, p *corev1.Pod, exitCode *int32) error {
	ann := map[string]string{pods.AnnRunSeconds: "0"}
	if exitCode != nil {
		ann[pods.AnnExitCode] = strconv.Itoa(int(*exitCode))
	}
	// Per-index values win over the pod's own: override those too.
	if ix, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]; ok {
		for k, v := range ann {
			ann[k+"."+ix] = v
		}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
	if err != nil {
		return err
	}
	if _, err := c.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("end the run of %s: %w", p.Name, err)
	}
	return nil
}

// SetPodCondition sets a condition of the pod through pods/status, as the
// owner of a readiness gate does.
func SetPodCondition(ctx context.Context, c kubernetes.Interface, p *corev1.Pod, t corev1.PodConditionType, s corev1.ConditionStatus) error {
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []map[string]any{{
		"type": t, "status": s, "lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
	}}}})
	if err != nil {
		return err
	}
	if _, err := c.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("set %s=%s on %s: %w", t, s, p.Name, err)
	}
	return nil
}
