package invariants

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// owned gives a builder's pod what every controller-made pod carries.
func owned(p *corev1.Pod) {
	p.OwnerReferences[0].BlockOwnerDeletion = ptr.To(true)
	p.Labels = map[string]string{"batch.kubernetes.io/job-name": "j", "batch.kubernetes.io/controller-uid": "job-uid"}
}

// indexedPod gives pod p index ix of Job j in every form upstream does.
func indexedPod(ix string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		owned(p)
		withIndex(ix)(p)
		p.Labels[batchv1.JobCompletionIndexAnnotation] = ix
		p.Spec.Hostname = "j-" + ix
		p.Spec.Containers = []corev1.Container{{Name: "c", Env: []corev1.EnvVar{{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['batch.kubernetes.io/job-completion-index']"}}}}}}
	}
}

func TestPodIdentity(t *testing.T) {
	labelled := func(j *batchv1.Job) {
		j.Spec.Template.Labels = map[string]string{"batch.kubernetes.io/job-name": "j", "batch.kubernetes.io/controller-uid": "job-uid"}
		j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": "job-uid"}}
	}
	indexed := func(j *batchv1.Job) {
		labelled(j)
		j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		j.Spec.Parallelism, j.Spec.Completions = ptr.To[int32](2), ptr.To[int32](2)
	}
	expectOK(t, PodIdentity, Context{}, newBuilder(labelled).pod("a", owned))
	// A pod neither the Job's nor matching it (a chaos action's preemptor): not judged.
	expectOK(t, PodIdentity, Context{}, newBuilder(labelled).pod("a", func(p *corev1.Pod) { p.OwnerReferences = nil }))
	expectOK(t, PodIdentity, Context{}, newBuilder(indexed).pod("a", indexedPod("0")).pod("b", indexedPod("1")))
	// A controller that reads the index from the annotation: as good for this
	// promise (the same index); the differential verdict holds it to the
	// built-in's label.
	expectOK(t, PodIdentity, Context{}, newBuilder(indexed).pod("a", func(p *corev1.Pod) {
		indexedPod("1")(p)
		p.Spec.Containers[0].Env[0].ValueFrom.FieldRef.FieldPath = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
	}))

	for why, mut := range map[string]func(*corev1.Pod){
		"lacks blockOwnerDeletion":           func(p *corev1.Pod) { p.OwnerReferences[0].BlockOwnerDeletion = nil },
		"has no controller ownerReference":   func(p *corev1.Pod) { p.OwnerReferences = nil },
		`label batch.kubernetes.io/job-name`: func(p *corev1.Pod) { delete(p.Labels, "batch.kubernetes.io/job-name") },
		`hostname is ""`:                     func(p *corev1.Pod) { p.Spec.Hostname = "" },
		"no JOB_COMPLETION_INDEX":            func(p *corev1.Pod) { p.Spec.Containers[0].Env = nil },
		"is not within [0, completions=2)":   func(p *corev1.Pod) { withIndex("2")(p) },
		`label batch.kubernetes.io/job-completion-index is ""`: func(p *corev1.Pod) {
			delete(p.Labels, batchv1.JobCompletionIndexAnnotation)
		},
		"no batch.kubernetes.io/job-completion-index annotation": func(p *corev1.Pod) { p.Annotations = nil },
	} {
		b := newBuilder(indexed).pod("a", func(p *corev1.Pod) { indexedPod("1")(p); mut(p) })
		expectViolation(t, PodIdentity, Context{}, b, why)
	}
	expectViolation(t, PodIdentity, Context{}, newBuilder(labelled).pod("a", func(p *corev1.Pod) { owned(p); withIndex("0")(p) }), "NonIndexed")
	// Only what the pod is created with counts: a later change (a scale-down
	// leaving an index past completions, a label edited) is not this check's.
	late := newBuilder(indexed).pod("a", indexedPod("1"))
	late.pod("a", func(p *corev1.Pod) { p.Spec.Hostname = "" })
	expectOK(t, PodIdentity, Context{}, late)
	// A template changed while the Job was suspended: a pod created after it
	// carries the new labels, annotations, nodeSelector and tolerations.
	changed := newBuilder(labelled).pod("a", owned)
	changed.job.Spec.Template.Annotations = map[string]string{"jobconform.io/admitted-by": "q"}
	changed.job.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}
	changed.job.Spec.Template.Spec.NodeSelector = map[string]string{"pool": "spot"}
	changed.status(func(*batchv1.JobStatus) {})
	changed.pod("b", owned)
	expectViolation(t, PodIdentity, Context{}, changed, `annotation jobconform.io/admitted-by="q" of the template is ""`)
	changed.pod("c", func(p *corev1.Pod) {
		owned(p)
		p.Annotations = map[string]string{"jobconform.io/admitted-by": "q"}
		p.Spec.Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}
		p.Spec.NodeSelector = map[string]string{"pool": "spot", "zone": "a"}
	})
	if v := check(t, PodIdentity, Context{}, changed); len(v) != 3 { // b's three faults, none of a's or c's
		t.Errorf("violations %v, want b's missing annotation, nodeSelector and toleration", v)
	}
	// A Job nobody manages gets no pod at all: managedby-silence's, not this.
	expectOK(t, PodIdentity, Context{ForeignManagedBy: true}, newBuilder(labelled).pod("a", nil))
}
