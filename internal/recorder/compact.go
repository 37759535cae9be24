package recorder

import (
	"reflect"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// compactor is the transform of one informer (client-go calls it on each
// object before the informer stores or hands it on). The recording keeps
// every state of every object, so what it keeps of each is what a
// 10,000-pod Job's 80,000 changes cost (issue #32):
//   - managedFields keep who wrote (manager, operation, subresource: what
//     delegation-respected reads) but not which fields (FieldsV1), a third
//     of a pod's bytes that nothing reads (a written recording never had
//     them: timeline.Lines);
//   - a pod's state shares with its state before the parts of its spec and
//     metadata that are identical (reflect.DeepEqual, every field), rather
//     than each state holding its own decoded copy: most of a pod's
//     changes are to its status.
//
// The informer's objects are the recording's entries, read and never
// written (client-go's rule for what an informer hands out), so the
// shared parts are as safe as the objects themselves.
func compactor() cache.TransformFunc {
	var mu sync.Mutex
	last := map[types.UID]*corev1.Pod{}
	return func(obj any) (any, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return obj, nil // a tombstone: its object was compacted when stored
		}
		fields := m.GetManagedFields()
		for i := range fields {
			fields[i].FieldsV1 = nil
		}
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return obj, nil
		}
		mu.Lock()
		defer mu.Unlock()
		if prev := last[p.UID]; prev != nil && prev != p {
			sharePod(prev, p)
		}
		last[p.UID] = p
		return obj, nil
	}
}

// sharePod points p's parts that equal prev's at prev's.
func sharePod(prev, p *corev1.Pod) {
	share(&p.Labels, prev.Labels)
	share(&p.Annotations, prev.Annotations)
	share(&p.OwnerReferences, prev.OwnerReferences)
	share(&p.Spec.Volumes, prev.Spec.Volumes)
	share(&p.Spec.InitContainers, prev.Spec.InitContainers)
	share(&p.Spec.Containers, prev.Spec.Containers)
	share(&p.Spec.Tolerations, prev.Spec.Tolerations)
	share(&p.Spec.NodeSelector, prev.Spec.NodeSelector)
	share(&p.Spec.Affinity, prev.Spec.Affinity)
	share(&p.Spec.SecurityContext, prev.Spec.SecurityContext)
	share(&p.Spec.ReadinessGates, prev.Spec.ReadinessGates)
	share(&p.Status.ContainerStatuses, prev.Status.ContainerStatuses)
}

// share sets *dst to prev when the two are identical.
func share[T any](dst *T, prev T) {
	if reflect.DeepEqual(*dst, prev) {
		*dst = prev
	}
}
