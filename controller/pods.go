package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

const ownerIndex = "jobconform.io/controller-uid"

// indexByOwnerUID indexes pods by their controller's UID.
func indexByOwnerUID(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	if ref := metav1.GetControllerOf(pod); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return nil, nil
}

// tracked tells whether p carries this controller's tracking finalizer.
func (c *Controller) tracked(p *corev1.Pod) bool { return slices.Contains(p.Finalizers, c.finalizer) }

func podTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// podActive: neither terminal nor being deleted.
func podActive(p *corev1.Pod) bool { return !podTerminal(p) && p.DeletionTimestamp == nil }

// podTerminating: being deleted and not yet terminal (what status.terminating counts).
func podTerminating(p *corev1.Pod) bool { return p.DeletionTimestamp != nil && !podTerminal(p) }

func podReady(p *corev1.Pod) bool {
	c := readyCondition(p)
	return c != nil && c.Status == corev1.ConditionTrue
}

// readyCondition is p's Ready condition, or nil.
func readyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// onlyReplaceFailed tells whether a replacement waits for the old pod's
// Failed phase (podReplacementPolicy Failed), honouring the controller's gate.
func (c *Controller) onlyReplaceFailed(job *batchv1.Job) bool {
	if !c.opts.Gates.Enabled(JobPodReplacementPolicy) {
		return false
	}
	if job.Spec.PodReplacementPolicy != nil {
		return *job.Spec.PodReplacementPolicy == batchv1.Failed
	}
	return job.Spec.PodFailurePolicy != nil
}

// podFailed tells whether a pod counts as failed: phase Failed, or — unless
// only failed pods are replaced — deleted before it could succeed (a pod that
// vanishes mid-run must not stall the Job).
func (c *Controller) podFailed(p *corev1.Pod, job *batchv1.Job) bool {
	if p.Status.Phase == corev1.PodFailed {
		return true
	}
	if c.onlyReplaceFailed(job) {
		return false
	}
	return p.DeletionTimestamp != nil && p.Status.Phase != corev1.PodSucceeded
}

// completionIndex reads a pod's index annotation; -1 when absent or malformed.
func completionIndex(p *corev1.Pod) int {
	v, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]
	if !ok {
		return -1
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 {
		return -1
	}
	return i
}

func isIndexed(job *batchv1.Job) bool {
	return job.Spec.CompletionMode != nil && *job.Spec.CompletionMode == batchv1.IndexedCompletion
}

// podsForJob returns the Job's pods: those it controls (by owner index), after
// adopting matching orphans and releasing owned pods that stopped matching.
func (c *Controller) podsForJob(ctx context.Context, job *batchv1.Job) ([]*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(job.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("job selector: %w", err)
	}
	objs, err := c.podIndex.ByIndex(ownerIndex, string(job.UID))
	if err != nil {
		return nil, err
	}
	var pods []*corev1.Pod
	for _, o := range objs {
		p := o.(*corev1.Pod)
		if sel.Matches(labels.Set(p.Labels)) {
			pods = append(pods, p)
			continue
		}
		if job.DeletionTimestamp == nil {
			if err := c.releasePod(ctx, job, p); err != nil {
				return nil, err
			}
		}
	}
	if job.DeletionTimestamp != nil || sel.Empty() {
		return pods, nil
	}
	candidates, err := c.podLister.Pods(job.Namespace).List(sel)
	if err != nil {
		return nil, err
	}
	for _, p := range candidates {
		if metav1.GetControllerOf(p) != nil || p.DeletionTimestamp != nil {
			continue
		}
		adopted, err := c.adoptPod(ctx, job, p)
		if err != nil {
			return nil, err
		}
		if adopted != nil {
			pods = append(pods, adopted)
		}
	}
	return pods, nil
}

func controllerRef(job *batchv1.Job) *metav1.OwnerReference {
	return metav1.NewControllerRef(job, batchv1.SchemeGroupVersion.WithKind("Job"))
}

// adoptPod makes job the controller of an orphan pod that matches its selector.
func (c *Controller) adoptPod(ctx context.Context, job *batchv1.Job, p *corev1.Pod) (*corev1.Pod, error) {
	// Adopt only on a fresh read of the Job: a Job deleted meanwhile must not adopt.
	fresh, err := c.client.BatchV1().Jobs(job.Namespace).Get(ctx, job.Name, metav1.GetOptions{})
	if err != nil || fresh.UID != job.UID || fresh.DeletionTimestamp != nil {
		return nil, nil
	}
	// The owner and the tracking finalizer in one patch, as upstream's
	// ClaimPods: the adopted pod's end is then recorded like any other's.
	meta := map[string]any{
		"ownerReferences": []metav1.OwnerReference{*controllerRef(job)},
		"uid":             p.UID,
	}
	meta["finalizers"] = []string{c.finalizer}
	patch, _ := json.Marshal(map[string]any{"metadata": meta})
	out, err := c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) || uidChanged(err) || apierrors.IsConflict(err) {
		return nil, nil
	}
	return out, err
}

// releasePod drops job's controller reference from a pod that no longer
// matches, and the tracking finalizer with it: one patch, as upstream's
// ReleasePod sends (the same request: the differential verdict compares
// them).
func (c *Controller) releasePod(ctx context.Context, job *batchv1.Job, p *corev1.Pod) error {
	owner := []map[string]string{{"$patch": "delete", "uid": string(job.UID)}}
	meta := map[string]any{"uid": p.UID, "ownerReferences": owner, "$deleteFromPrimitiveList/finalizers": []string{c.finalizer}}
	patch, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return err
	}
	_, err = c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) || uidChanged(err) {
		return nil
	}
	return err
}

// newPod renders the pod of index ix (-1 for NonIndexed) from the template.
func newPod(job *batchv1.Job, ix int, finalizer string) *corev1.Pod {
	tmpl := job.Spec.Template.DeepCopy()
	pod := &corev1.Pod{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}
	pod.Namespace = job.Namespace
	pod.Name = ""
	pod.GenerateName = job.Name + "-"
	pod.OwnerReferences = append(pod.OwnerReferences, *controllerRef(job))
	if finalizer != "" {
		pod.Finalizers = append(pod.Finalizers, finalizer)
	}
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	if ix >= 0 {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		s := strconv.Itoa(ix)
		pod.Annotations[batchv1.JobCompletionIndexAnnotation] = s
		pod.Labels[batchv1.JobCompletionIndexAnnotation] = s
		pod.Spec.Hostname = fmt.Sprintf("%s-%d", job.Name, ix)
		pod.GenerateName = fmt.Sprintf("%s-%d-", job.Name, ix)
		// From the label, as upstream's addCompletionIndexEnvVariable
		// (v1.36.3, v1.37.1): found by the differential verdict, where the
		// annotation, which holds the same index, was used.
		env := corev1.EnvVar{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: fmt.Sprintf("metadata.labels['%s']", batchv1.JobCompletionIndexAnnotation)},
		}}
		for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
			for i := range list {
				if !hasEnv(list[i].Env, env.Name) {
					list[i].Env = append(list[i].Env, env)
				}
			}
		}
	}
	return pod
}

func hasEnv(env []corev1.EnvVar, name string) bool {
	for _, e := range env {
		if e.Name == name {
			return true
		}
	}
	return false
}

// removeFinalizer drops the tracking finalizer with a JSON patch guarded by the
// pod's UID, so a recreated pod of the same name is never touched.
func (c *Controller) removeFinalizer(ctx context.Context, p *corev1.Pod) error {
	if !slices.Contains(p.Finalizers, c.finalizer) {
		return nil
	}
	// As upstream's removeTrackingFinalizerPatch: a strategic merge patch
	// that deletes the finalizer from the list wherever it is, a no-op when
	// it is already gone (two removers at once, a sync and an orphan's
	// release, both succeed: with a JSON patch testing its position, the
	// second failed and read the pod again, 475 reads for a deleted Job of
	// 500 pods). The uid makes it fail on a pod recreated under the name.
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":                                 p.UID,
		"$deleteFromPrimitiveList/finalizers": []string{c.finalizer},
	}})
	if err != nil {
		return err
	}
	_, err = c.client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsConflict(err) || uidChanged(err) {
		return nil // another pod under the name: this one is gone
	}
	return err
}

// uidChanged tells whether a patch that names the pod's uid was refused
// because the pod under the name has another (metadata.uid is immutable:
// the apiserver answers Invalid on that field): the pod patched is gone.
// Any other Invalid — an admission policy's refusal is one — is an error
// to retry: taken for a gone pod, a refused finalizer removal counted the
// pod while its finalizer stayed (finalizer-removal-refused-then-retried,
// 2026-12-07).
func uidChanged(err error) bool {
	if !apierrors.IsInvalid(err) {
		return false
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Details == nil {
		return false
	}
	for _, c := range st.Status().Details.Causes {
		if c.Field == "metadata.uid" {
			return true
		}
	}
	return false
}

// podsForRemoval picks the active pods to delete: for an Indexed Job every
// pod with no index, an index out of range, or a duplicate index (one pod per
// index stays), as upstream's activePodsForRemoval removes them whatever the
// count; then, up to n in all, the least valuable of the rest, ranked as
// upstream's controller.ActivePods: unscheduled, pending before unknown
// before running, not ready, ready most recently, restarted most, newest,
// and of an Indexed Job's pods alike the lowest index (ranking by creation
// alone, ties in the informer's order, kept another index than upstream's
// when a scale-down of ready pods made in one second found them alike:
// explore-4-110).
func (c *Controller) podsForRemoval(job *batchv1.Job, active []*corev1.Pod, n int) []*corev1.Pod {
	sorted := append([]*corev1.Pod(nil), active...)
	if isIndexed(job) {
		// Upstream ranks an Indexed Job's pods in index order, and its
		// sort keeps that order among equals (an insertion sort below 12
		// pods): of pods alike, the lowest index goes first.
		sort.SliceStable(sorted, func(i, j int) bool { return completionIndex(sorted[i]) < completionIndex(sorted[j]) })
	}
	sort.SliceStable(sorted, func(i, j int) bool { return lessValuable(sorted[i], sorted[j]) })
	var must, rest []*corev1.Pod
	if isIndexed(job) {
		kept := map[int]bool{}
		// From the most valuable down, so that the pod kept for an index is its best.
		for i := len(sorted) - 1; i >= 0; i-- {
			p := sorted[i]
			ix := completionIndex(p)
			if ix < 0 || (job.Spec.Completions != nil && ix >= int(*job.Spec.Completions)) || kept[ix] {
				must = append(must, p)
				continue
			}
			kept[ix] = true
			rest = append([]*corev1.Pod{p}, rest...)
		}
	} else {
		rest = sorted
	}
	if more := min(max(n-len(must), 0), len(rest)); more > 0 {
		must = append(must, rest[:more]...)
	}
	return must
}

// phaseRank orders the phases of active pods as upstream's podPhaseToOrdinal.
var phaseRank = map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}

// lessValuable tells whether a goes before b when pods are removed
// (k8s.io/kubernetes/pkg/controller.ActivePods.Less, v1.37.1).
func lessValuable(a, b *corev1.Pod) bool {
	if (a.Spec.NodeName == "") != (b.Spec.NodeName == "") {
		return a.Spec.NodeName == ""
	}
	if phaseRank[a.Status.Phase] != phaseRank[b.Status.Phase] {
		return phaseRank[a.Status.Phase] < phaseRank[b.Status.Phase]
	}
	if podReady(a) != podReady(b) {
		return !podReady(a)
	}
	if podReady(a) {
		if ta, tb := readySince(a), readySince(b); !ta.Equal(tb) {
			return afterOrZero(ta, tb)
		}
	}
	if ra, rb := restarts(a), restarts(b); ra != rb {
		return ra[0] > rb[0] || (ra[0] == rb[0] && ra[1] > rb[1])
	}
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return afterOrZero(a.CreationTimestamp.Time, b.CreationTimestamp.Time)
	}
	return false
}

// readySince is when a ready pod's Ready condition last turned True.
func readySince(p *corev1.Pod) time.Time {
	if c := readyCondition(p); c != nil && c.Status == corev1.ConditionTrue {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

// afterOrZero: a zero time first, then the later.
func afterOrZero(a, b time.Time) bool {
	if a.IsZero() || b.IsZero() {
		return a.IsZero()
	}
	return a.After(b)
}

// restarts is a pod's highest restart count of its regular containers, then
// of its sidecars (init containers that restart always).
func restarts(p *corev1.Pod) [2]int32 {
	var out [2]int32
	for _, c := range p.Status.ContainerStatuses {
		out[0] = max(out[0], c.RestartCount)
	}
	sidecars := map[string]bool{}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
		}
	}
	for _, c := range p.Status.InitContainerStatuses {
		if sidecars[c.Name] {
			out[1] = max(out[1], c.RestartCount)
		}
	}
	return out
}
