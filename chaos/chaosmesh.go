// Pod chaos carried out by Chaos Mesh (PodChaos experiments) or by
// jobconform itself, to the same effect.

package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chaos-mesh/chaos-mesh/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// PodChaosResource is Chaos Mesh's PodChaos.
var PodChaosResource = schema.GroupVersionResource{Group: "chaos-mesh.org", Version: "v1alpha1", Resource: "podchaos"}

// HasChaosMesh tells whether the cluster serves Chaos Mesh's PodChaos
// (its CRDs are installed).
func HasChaosMesh(c kubernetes.Interface) (bool, error) {
	list, err := c.Discovery().ServerResourcesForGroupVersion(PodChaosResource.GroupVersion().String())
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("ask the cluster for Chaos Mesh's API: %w", err)
	}
	for _, r := range list.APIResources {
		if r.Name == PodChaosResource.Resource {
			return true, nil
		}
	}
	return false, nil
}

// Experiment is a Chaos Mesh experiment as its own status tells it, read
// back once it has done its work: each selected pod's record and events.
type Experiment struct {
	Kind      string                    `json:"kind"`
	Namespace string                    `json:"namespace"`
	Name      string                    `json:"name"`
	UID       types.UID                 `json:"uid"`
	Records   []*v1alpha1.Record        `json:"records,omitempty"`
	Condition []v1alpha1.ChaosCondition `json:"conditions,omitempty"`
}

// Lines are the experiment as text, a line per record event.
func (e *Experiment) Lines() []string {
	out := []string{fmt.Sprintf("%s %s/%s (uid %s)", e.Kind, e.Namespace, e.Name, e.UID)}
	for _, r := range e.Records {
		for _, ev := range r.Events {
			at := ""
			if ev.Timestamp != nil {
				at = ev.Timestamp.Format("15:04:05")
			}
			line := fmt.Sprintf("  %s %s %s %s", at, r.Id, ev.Operation, ev.Type)
			if ev.Message != "" {
				line += ": " + ev.Message
			}
			out = append(out, line)
		}
	}
	return out
}

// podFailureAnnotation keeps a container's image while a pod-failure runs
// the pause image in its place (Chaos Mesh keeps it likewise).
const podFailureAnnotation = "jobconform.io/pod-failure-image-"

// podChaos carries out a PodChaos spec on the chosen pods: through Chaos
// Mesh when the injector has it, else itself. A container-kill stays the
// injector's: Chaos Mesh kills containers through its chaos-daemon on each
// node, which a cluster may not run (pod-kill and pod-failure act through
// the API alone).
func (in *Injector) podChaos(ctx context.Context, spec v1alpha1.PodChaosSpec, targets []corev1.Pod) (*Experiment, error) {
	if in.ChaosMesh != nil && spec.Action != v1alpha1.ContainerKillAction {
		return in.submit(ctx, spec, targets)
	}
	c := in.Env.Client()
	switch spec.Action {
	case v1alpha1.ContainerKillAction:
		for _, p := range targets {
			if err := EndRun(ctx, c, &p, ptr.To[int32](137)); err != nil {
				return nil, err
			}
		}
	case v1alpha1.PodFailureAction:
		d, _ := time.ParseDuration(ptr.Deref(spec.Duration, "")) // validated
		for _, p := range targets {
			if err := in.swapImages(ctx, &p, true); err != nil {
				return nil, err
			}
		}
		if err := pause(ctx, d); err != nil {
			return nil, err
		}
		for _, p := range targets {
			if err := in.swapImages(ctx, &p, false); err != nil && !apierrors.IsNotFound(err) {
				return nil, err
			}
		}
	default:
		for _, p := range targets {
			if err := DeletePod(ctx, c, &p, ptr.To(spec.GracePeriod)); err != nil {
				return nil, err
			}
		}
	}
	return nil, nil
}

// swapImages puts the pause image in place of the pod's containers' (fail),
// keeping theirs in annotations, or puts theirs back.
func (in *Injector) swapImages(ctx context.Context, p *corev1.Pod, fail bool) error {
	if fail && in.PauseImage == "" {
		return errors.New("a pod-failure needs a pause image the nodes can run (--pause-image)")
	}
	pods := in.Env.Client().CoreV1().Pods(p.Namespace)
	return retryConflict(ctx, func() error {
		cur, err := pods.Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		for i := range cur.Spec.Containers {
			ctr := &cur.Spec.Containers[i]
			key := podFailureAnnotation + ctr.Name
			if kept, ok := cur.Annotations[key]; fail && !ok {
				cur.Annotations[key], ctr.Image = ctr.Image, in.PauseImage
			} else if !fail && ok {
				ctr.Image = kept
				delete(cur.Annotations, key)
			}
		}
		_, err = pods.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

// submit has Chaos Mesh carry out spec on exactly the chosen pods (the
// harness chose them, from its seed): a PodChaos in the Job's namespace
// selecting them by name, waited for until every record is injected (and,
// with a duration, recovered), read back, and deleted.
func (in *Injector) submit(ctx context.Context, spec v1alpha1.PodChaosSpec, targets []corev1.Pod) (*Experiment, error) {
	names := make([]string, len(targets))
	for i, p := range targets {
		names[i] = p.Name
	}
	spec.Selector = v1alpha1.PodSelectorSpec{Pods: map[string][]string{in.Namespace: names}}
	spec.Mode, spec.Value = v1alpha1.AllMode, ""
	in.experiments++
	pc := &v1alpha1.PodChaos{
		TypeMeta:   metav1.TypeMeta{APIVersion: PodChaosResource.GroupVersion().String(), Kind: "PodChaos"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%d", in.Job, spec.Action, in.experiments), Namespace: in.Namespace},
		Spec:       spec,
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pc)
	if err != nil {
		return nil, err
	}
	res := in.ChaosMesh.Resource(PodChaosResource).Namespace(in.Namespace)
	created, err := res.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("submit PodChaos %s to Chaos Mesh: %w", pc.Name, err)
	}
	recovers := spec.Duration != nil
	var got v1alpha1.PodChaos
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, in.waitTimeout(), true, func(ctx context.Context) (bool, error) {
		u, err := res.Get(ctx, pc.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil // asked again at the next poll
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &got); err != nil {
			return false, err
		}
		return experimentDone(&got, len(targets), recovers), nil
	})
	exp := &Experiment{Kind: "PodChaos", Namespace: in.Namespace, Name: pc.Name, UID: created.GetUID(), Records: got.Status.Experiment.Records, Condition: got.Status.Conditions}
	if err != nil {
		return exp, fmt.Errorf("Chaos Mesh did not carry out PodChaos %s/%s within %s (is chaos-controller-manager running? its status: %s): %w",
			in.Namespace, pc.Name, in.waitTimeout(), statusText(&got), err)
	}
	// Deleted once done: Chaos Mesh's finalizer recovers anything left.
	if err := res.Delete(ctx, pc.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return exp, fmt.Errorf("delete PodChaos %s: %w", pc.Name, err)
	}
	return exp, nil
}

// experimentDone tells whether each of the n records has its Apply
// succeeded (and its Recover, when recovers).
func experimentDone(pc *v1alpha1.PodChaos, n int, recovers bool) bool {
	recs := pc.Status.Experiment.Records
	if len(recs) < n {
		return false
	}
	for _, r := range recs {
		applied, recovered := false, false
		for _, ev := range r.Events {
			if ev.Type != v1alpha1.TypeSucceeded {
				continue
			}
			switch ev.Operation {
			case v1alpha1.Apply:
				applied = true
			case v1alpha1.Recover:
				recovered = true
			}
		}
		if !applied || (recovers && !recovered) {
			return false
		}
	}
	return true
}

func statusText(pc *v1alpha1.PodChaos) string {
	data, _ := json.Marshal(pc.Status)
	s := string(data)
	if s == "" || s == "null" || strings.HasPrefix(s, `{"experiment":{}`) {
		return "none written"
	}
	return s
}
