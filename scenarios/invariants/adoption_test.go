package invariants

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestAdoption(t *testing.T) {
	ctx := Context{Job: "j", Finalizer: fin}
	selector := func(j *batchv1.Job) {
		j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	}
	labelled := func(p *corev1.Pod) { p.Labels = map[string]string{"app": "x"}; running(p) }
	orphaned := func(p *corev1.Pod) { p.OwnerReferences = nil }
	adopted := func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "Job", Name: "j", UID: "job-uid", Controller: ptr.To(true)}}
		p.Finalizers = []string{fin}
	}
	unlabelled := func(p *corev1.Pod) { p.Labels = nil }
	later := func(b *builder) *builder {
		b.wait(AdoptionGrace)
		return b.status(func(*batchv1.JobStatus) {})
	}

	// Orphaned, then adopted with the finalizer: kept.
	ok := newBuilder(selector).pod("a", labelled).pod("a", orphaned).pod("a", adopted)
	expectOK(t, Adoption, ctx, later(ok))
	// Orphaned and never adopted: caught once the grace is over, not before.
	never := newBuilder(selector).pod("a", labelled).pod("a", func(p *corev1.Pod) { orphaned(p); unfinalized(p) })
	expectOK(t, Adoption, ctx, never)
	expectViolation(t, Adoption, ctx, later(never), "was not adopted")
	// Adopted without the tracking finalizer: caught.
	bare := newBuilder(selector).pod("a", labelled).pod("a", func(p *corev1.Pod) { orphaned(p); unfinalized(p) }).
		pod("a", func(p *corev1.Pod) { adopted(p); unfinalized(p) })
	expectViolation(t, Adoption, ctx, later(bare), "was not given the tracking finalizer")
	// Adopted late: caught at the adoption.
	slow := newBuilder(selector).pod("a", labelled).pod("a", orphaned)
	slow.wait(AdoptionGrace + 1)
	expectViolation(t, Adoption, ctx, slow.pod("a", adopted), "was adopted (it matches the selector and has no controller) only after")
	// Relabelled and released (ownerReference and finalizer gone): kept.
	released := newBuilder(selector).pod("a", labelled).pod("a", unlabelled).pod("a", func(p *corev1.Pod) { orphaned(p); unfinalized(p) })
	expectOK(t, Adoption, ctx, later(released))
	// Released but the finalizer kept: caught.
	stuck := newBuilder(selector).pod("a", labelled).pod("a", unlabelled).pod("a", orphaned)
	expectViolation(t, Adoption, ctx, later(stuck), "was not released")
	// Another owner's pod taken over: caught at once.
	stolen := newBuilder(selector).pod("a", func(p *corev1.Pod) {
		labelled(p)
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "ConfigMap", Name: "other", UID: "cm", Controller: ptr.To(true)}}
	}).pod("a", adopted)
	expectViolation(t, Adoption, ctx, stolen, "controlled by ConfigMap other, was taken over")
	// The Job finished before the grace: no adoption was due after that.
	done := newBuilder(selector).pod("a", labelled).pod("a", orphaned).
		status(func(s *batchv1.JobStatus) { s.Conditions = []batchv1.JobCondition{cond(batchv1.JobComplete, "")} })
	expectOK(t, Adoption, ctx, later(done))
	// A restart in between: no verdict.
	restarted := later(newBuilder(selector).pod("a", labelled).pod("a", func(p *corev1.Pod) { orphaned(p); unfinalized(p) }))
	expectOK(t, Adoption, Context{Job: "j", Finalizer: fin, Restarts: []time.Time{restarted.now.Add(-AdoptionGrace / 2)}}, restarted)
}
