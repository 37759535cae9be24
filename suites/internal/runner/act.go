// Acts: what a step does to the Job and its pods.

package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/jobconform/jobconform/chaos"
	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/invariants"
)

// act performs one disturbance: on the Job through client, on its pods
// through podClient.
func act(ctx context.Context, client, podClient kubernetes.Interface, ns string, a scenarios.Action) error {
	if a.Refused {
		// The change must be refused as invalid; its being accepted is the failure.
		a.Refused = false
		switch err := act(ctx, client, podClient, ns, a); {
		case err == nil:
			return fmt.Errorf("the apiserver accepted the %s, which it must refuse here", a.Kind)
		case apierrors.IsInvalid(err):
			return nil
		default:
			return fmt.Errorf("the %s was refused, but not as invalid: %w", a.Kind, err)
		}
	}
	switch a.Kind {
	case scenarios.ActPatchTemplate:
		return patchTemplate(ctx, client, ns, a)
	case scenarios.ActSuspend, scenarios.ActResume:
		return patchJob(ctx, client, ns, map[string]any{"suspend": a.Kind == scenarios.ActSuspend})
	case scenarios.ActDeleteJob:
		policy := a.Propagation
		if policy == "" {
			policy = metav1.DeletePropagationBackground
		}
		return client.BatchV1().Jobs(ns).Delete(ctx, JobName, metav1.DeleteOptions{PropagationPolicy: &policy})
	case scenarios.ActCreatePod:
		return createPod(ctx, podClient, ns, a.OwnedByOther, a.Index)
	case scenarios.ActRefusePods:
		return refusePods(ctx, podClient, ns)
	case scenarios.ActAllowPods:
		err := podClient.CoreV1().ResourceQuotas(ns).Delete(ctx, refusePodsQuota, metav1.DeleteOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	case scenarios.ActScale:
		spec := map[string]any{}
		if a.Parallelism != nil {
			spec["parallelism"] = *a.Parallelism
		}
		if a.Completions != nil {
			spec["completions"] = *a.Completions
		}
		return patchJob(ctx, client, ns, spec)
	}
	return actOnPods(ctx, podClient, ns, a)
}

// refusePodsQuota names the quota of refusePods.
const refusePodsQuota = "jobconform-refuse-pods"

// refusePods creates a ResourceQuota of 0 pods in ns: the apiserver's quota
// admission refuses every pod created after it (Forbidden, "exceeded
// quota"), as on a namespace whose quota is full. Pods already there run
// on. Admission enforces what the quota's status says, which a cluster's
// quota controller fills in; the local clusters run none, so the status is
// written here too (a quota controller, where one runs, writes the same
// limit).
func refusePods(ctx context.Context, client kubernetes.Interface, ns string) error {
	zero := corev1.ResourceList{corev1.ResourcePods: resource.MustParse("0")}
	q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: refusePodsQuota}, Spec: corev1.ResourceQuotaSpec{Hard: zero}}
	q, err := client.CoreV1().ResourceQuotas(ns).Create(ctx, q, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	if len(q.Status.Hard) > 0 {
		return nil // a quota controller was first
	}
	q.Status = corev1.ResourceQuotaStatus{Hard: zero, Used: zero}
	_, err = client.CoreV1().ResourceQuotas(ns).UpdateStatus(ctx, q, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		return nil // a quota controller wrote its status meanwhile
	}
	return err
}

// patchJob merge-patches the Job's spec with spec.
func patchJob(ctx context.Context, client kubernetes.Interface, ns string, spec map[string]any) error {
	patch := fmt.Sprintf(`{"spec":%s}`, mustJSON(spec))
	_, err := client.BatchV1().Jobs(ns).Patch(ctx, JobName, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// patchTemplate changes the pod template's labels, annotations,
// tolerations or node selector.
func patchTemplate(ctx context.Context, client kubernetes.Interface, ns string, a scenarios.Action) error {
	tmpl := map[string]any{}
	if len(a.Labels)+len(a.Annotations) > 0 {
		tmpl["metadata"] = map[string]any{"labels": a.Labels, "annotations": a.Annotations}
	}
	spec := map[string]any{}
	if len(a.Tolerations) > 0 {
		// A merge patch replaces the list: the template's own tolerations are kept by reading them first.
		job, err := client.BatchV1().Jobs(ns).Get(ctx, JobName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		spec["tolerations"] = append(job.Spec.Template.Spec.Tolerations, a.Tolerations...)
	}
	if len(a.NodeSelector) > 0 {
		spec["nodeSelector"] = a.NodeSelector // a map: merged with the template's
	}
	if len(spec) > 0 {
		tmpl["spec"] = spec
	}
	return patchJob(ctx, client, ns, map[string]any{"template": tmpl})
}

// actOnPods does a on the pods it targets. A pod that changed between the
// list and a delete or an eviction (it may have ended) is read again with
// the others: the act is done only on a pod still in the state the
// scenario asks for.
func actOnPods(ctx context.Context, client kubernetes.Interface, ns string, a scenarios.Action) error {
	for attempt := 1; ; attempt++ {
		targets, err := targetPods(ctx, client, ns, a)
		if err != nil {
			if attempt > 1 {
				return fmt.Errorf("%w (the pod chosen changed before the %s and none is left to act on: the scenario's pods end too soon for this machine's pace)", err, a.Kind)
			}
			return err
		}
		var errs []error
		changed := false
		for _, p := range targets {
			err := actOnPod(ctx, client, &p, a)
			if apierrors.IsConflict(err) && attempt < 5 {
				changed = true
				continue
			}
			errs = append(errs, err)
		}
		if !changed {
			return errors.Join(errs...)
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
}

// actOnPod does a's change to one pod.
func actOnPod(ctx context.Context, client kubernetes.Interface, p *corev1.Pod, a scenarios.Action) error {
	switch a.Kind {
	case scenarios.ActDeletePod:
		return chaos.DeletePodAsSeen(ctx, client, p, a.GracePeriod)
	case scenarios.ActEvictPod:
		return chaos.EvictPodAsSeen(ctx, client, p)
	case scenarios.ActFinishPod:
		return chaos.EndRun(ctx, client, p, nil)
	case scenarios.ActSetGate:
		return chaos.SetPodCondition(ctx, client, p, a.Gate, a.Status)
	case scenarios.ActOrphanPod:
		return patchPodMeta(ctx, client, p, map[string]any{"ownerReferences": nil})
	case scenarios.ActReleasePod:
		return releasePod(ctx, client, p)
	}
	return nil
}

// targetPods: the pods of the Job the action names (by index, all, or the
// first listed): running ones, or for setGate any that is not finished.
func targetPods(ctx context.Context, client kubernetes.Interface, ns string, a scenarios.Action) ([]corev1.Pod, error) {
	list, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if kube.PodTerminal(&p) != a.Finished || p.DeletionTimestamp != nil || !kube.IsOwnedBy(&p, JobName) {
			continue
		}
		// A readiness gate can be set on a pod that has not started; the
		// other actions need a running process (or, with finished, none).
		if a.Kind != scenarios.ActSetGate && !a.Finished && p.Status.Phase != corev1.PodRunning {
			continue
		}
		if a.Index != nil && p.Annotations[batchv1.JobCompletionIndexAnnotation] != fmt.Sprint(*a.Index) {
			continue
		}
		if a.Kind == scenarios.ActSetGate && !a.All && a.Index == nil && gateIs(&p, a.Gate, a.Status) {
			continue // one pod: one whose gate this changes (two setGates reach two pods)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no pod of the Job to act on", a.Kind)
	}
	if !a.All {
		out = out[:1]
	}
	return out, nil
}

// gateIs tells whether p's readiness-gate condition gate has status s.
func gateIs(p *corev1.Pod, gate corev1.PodConditionType, s corev1.ConditionStatus) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == gate {
			return c.Status == s
		}
	}
	return false
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of int32 always marshal
	}
	return string(b)
}

// patchPodMeta merges meta into pod p's metadata, as p was seen (a conflict
// if it changed since).
func patchPodMeta(ctx context.Context, client kubernetes.Interface, p *corev1.Pod, meta map[string]any) error {
	meta["resourceVersion"] = p.ResourceVersion
	patch := mustJSON(map[string]any{"metadata": meta})
	_, err := client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// releasePod removes from p the labels the Job's selector matches on.
func releasePod(ctx context.Context, client kubernetes.Interface, p *corev1.Pod) error {
	job, err := client.BatchV1().Jobs(p.Namespace).Get(ctx, JobName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	sel := job.Spec.Selector
	if sel == nil || len(sel.MatchLabels) == 0 || len(sel.MatchExpressions) > 0 {
		return fmt.Errorf("releasePod: the Job's selector %v is not one of matchLabels only; give the Job such a selector", sel)
	}
	drop := map[string]any{}
	for k := range sel.MatchLabels {
		drop[k] = nil
	}
	return patchPodMeta(ctx, client, p, map[string]any{"labels": drop})
}

// otherOwner names the ConfigMap that controls the pods createPod makes
// with ownedByOther (it must exist, or the garbage collector deletes them).
const otherOwner = "other-owner"

// createPod creates a pod from the Job's template, marked as brought by the
// scenario; ownedByOther gives it a controller other than the Job, index a
// completion index (annotation, label and hostname, as the controller sets
// them).
func createPod(ctx context.Context, client kubernetes.Interface, ns string, ownedByOther bool, index *int) error {
	job, err := client.BatchV1().Jobs(ns).Get(ctx, JobName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	tmpl := job.Spec.Template.DeepCopy()
	pod := &corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
	pod.GenerateName, pod.Namespace = JobName+"-brought-", ns
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[invariants.BroughtAnnotation] = "true"
	if index != nil {
		ix := strconv.Itoa(*index)
		if pod.Labels == nil {
			pod.Labels = map[string]string{}
		}
		pod.Annotations[batchv1.JobCompletionIndexAnnotation], pod.Labels[batchv1.JobCompletionIndexAnnotation] = ix, ix
		pod.Spec.Hostname = JobName + "-" + ix
	}
	if ownedByOther {
		cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, otherOwner, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			cm, err = client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: otherOwner}}, metav1.CreateOptions{})
		}
		if err != nil {
			return err
		}
		pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(cm, corev1.SchemeGroupVersion.WithKind("ConfigMap"))}
	}
	_, err = client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	return err
}
