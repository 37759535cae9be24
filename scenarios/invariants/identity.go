// What a pod of a Job must carry from its creation: who owns it, the
// template's labels, and, for an Indexed Job, its index in every form the
// batch/v1 documentation promises.

package invariants

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/timeline"
)

// completionIndexEnv is the variable that gives an Indexed pod's container its index.
const completionIndexEnv = "JOB_COMPLETION_INDEX"

// PodIdentity: every pod the controller creates for the Job is owned by it
// (a controller ownerReference with blockOwnerDeletion, as
// metav1.NewControllerRef sets, so that foreground deletion waits for it)
// and carries the template's labels (among them batch.kubernetes.io/job-name
// and controller-uid, which the apiserver puts in the template), annotations,
// nodeSelector and tolerations, as the template stands when the pod is created (a change
// made while the Job was suspended reaches every pod created after it). A pod of an
// Indexed Job carries its index in every form the Job documentation names: the
// batch.kubernetes.io/job-completion-index annotation and label (the label
// from v1.28 with PodIndexLabel, on by default: every supported release),
// the hostname $(job-name)-$(index), and JOB_COMPLETION_INDEX in every
// container, read from that label or annotation — with the index in
// [0, completions). A NonIndexed pod carries no index. Read in
// pkg/controller/job (manageJob, indexed_job_utils.go) of v1.37.1.
var PodIdentity = Invariant{
	Name:        "pod-identity",
	Description: "each pod is created owned by the Job (controller, blockOwnerDeletion) with the template's labels; an Indexed pod has its index as annotation, label, hostname and JOB_COMPLETION_INDEX, within completions",
	Check: func(ctx Context, t timeline.Timeline) []Violation {
		if ctx.ForeignManagedBy {
			return nil // no pod may appear at all: managedby-silence
		}
		var out []Violation
		replay(ctx, t, func(e timeline.Entry, before, _ *world) {
			j := before.job
			if e.Kind != "Pod" || e.Type != timeline.Added || j == nil || j.DeletionTimestamp != nil {
				return
			}
			p := e.Pod()
			if created := p.CreationTimestamp.Time; (!created.IsZero() && created.Before(j.CreationTimestamp.Time)) || p.Annotations[BroughtAnnotation] != "" || !ownedOrMatching(j, p) {
				return // not created for this Job (a pod the scenario or a chaos action brought)
			}
			for _, why := range identityFaults(j, p) {
				out = append(out, violation("pod-identity", e, "pod %s: %s", p.Name, why))
			}
		})
		return out
	},
}

// identityFaults lists what pod p, created for job j, lacks.
func identityFaults(j *batchv1.Job, p *corev1.Pod) []string {
	var out []string
	ref := metav1.GetControllerOf(p)
	switch {
	case ref == nil:
		out = append(out, "has no controller ownerReference")
	case ref.UID != j.UID || ref.Kind != "Job" || ref.Name != j.Name:
		out = append(out, fmt.Sprintf("its controller is %s %s (uid %s), not the Job", ref.Kind, ref.Name, ref.UID))
	case !ptr.Deref(ref.BlockOwnerDeletion, false):
		out = append(out, "its ownerReference to the Job lacks blockOwnerDeletion (foreground deletion would not wait for it)")
	}
	for k, v := range j.Spec.Template.Labels {
		if got, ok := p.Labels[k]; !ok || got != v {
			out = append(out, fmt.Sprintf("label %s=%q of the template is %q", k, v, got))
		}
	}
	for k, v := range j.Spec.Template.Annotations {
		if got, ok := p.Annotations[k]; !ok || got != v {
			out = append(out, fmt.Sprintf("annotation %s=%q of the template is %q", k, v, got))
		}
	}
	for k, v := range j.Spec.Template.Spec.NodeSelector {
		if got, ok := p.Spec.NodeSelector[k]; !ok || got != v {
			out = append(out, fmt.Sprintf("nodeSelector %s=%q of the template is %q", k, v, got))
		}
	}
	for _, tol := range j.Spec.Template.Spec.Tolerations {
		if !slices.ContainsFunc(p.Spec.Tolerations, func(t corev1.Toleration) bool { return tol.MatchToleration(&t) }) {
			out = append(out, fmt.Sprintf("toleration %s of the template is missing", tol.Key))
		}
	}
	ix, annotated := p.Annotations[batchv1.JobCompletionIndexAnnotation]
	if !isIndexedJob(j) {
		if annotated {
			out = append(out, "a NonIndexed Job's pod has a completion index annotation")
		}
		return out
	}
	n, err := strconv.Atoi(ix)
	switch {
	case !annotated:
		return append(out, "an Indexed Job's pod has no "+batchv1.JobCompletionIndexAnnotation+" annotation")
	case err != nil || n < 0 || n >= int(ptr.Deref(j.Spec.Completions, 0)):
		// An index past completions may appear only after a scale-down; a
		// pod is created with an index within them.
		return append(out, fmt.Sprintf("completion index %q is not within [0, completions=%d)", ix, ptr.Deref(j.Spec.Completions, 0)))
	}
	if l := p.Labels[batchv1.JobCompletionIndexAnnotation]; l != ix {
		out = append(out, fmt.Sprintf("label %s is %q, its annotation %q", batchv1.JobCompletionIndexAnnotation, l, ix))
	}
	if want := fmt.Sprintf("%s-%d", j.Name, n); p.Spec.Hostname != want {
		out = append(out, fmt.Sprintf("hostname is %q, want %q", p.Spec.Hostname, want))
	}
	for _, list := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for _, c := range list {
			if !indexEnv(c) {
				out = append(out, fmt.Sprintf("container %s has no %s read from the index label or annotation", c.Name, completionIndexEnv))
			}
		}
	}
	return out
}

// indexEnv tells whether c reads JOB_COMPLETION_INDEX from the pod's index
// label or annotation.
func indexEnv(c corev1.Container) bool {
	for _, e := range c.Env {
		if e.Name != completionIndexEnv || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil {
			continue
		}
		path := e.ValueFrom.FieldRef.FieldPath
		return strings.Contains(path, "['"+batchv1.JobCompletionIndexAnnotation+"']") &&
			(strings.HasPrefix(path, "metadata.labels[") || strings.HasPrefix(path, "metadata.annotations["))
	}
	return false
}

// ownedOrMatching tells whether p is the Job's or looks it: controlled by
// it, or matching its selector (a pod made for it without an owner).
func ownedOrMatching(j *batchv1.Job, p *corev1.Pod) bool {
	if ownedBy(p, j) {
		return true
	}
	return selects(j, p)
}
