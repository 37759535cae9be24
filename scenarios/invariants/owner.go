package invariants

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The one test of "a pod this Job controls", in its three forms: by the
// Job (ownedBy), by the Job's UID where the Job itself is gone from the
// world judged (controlledBy), and by the Job's name where a recording's
// Job was recreated under it (controlledByJobNamed). A pod is the Job's
// through its controller ownerReference alone, as upstream's
// metav1.IsControlledBy says: a label or an ownerReference that is not the
// controller's does not make it so.

// ownedBy tells whether Job j (nil: none) controls pod p.
func ownedBy(p *corev1.Pod, j *batchv1.Job) bool {
	return j != nil && controlledBy(p, j.UID)
}

// controlledBy tells whether the object of uid controls pod p.
func controlledBy(p *corev1.Pod, uid types.UID) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.UID == uid
}

// controlledByJobNamed tells whether a Job named name controls pod p,
// whichever of that name's Jobs it is.
func controlledByJobNamed(p *corev1.Pod, name string) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.Kind == "Job" && ref.Name == name
}
