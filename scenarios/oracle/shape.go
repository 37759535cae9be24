// shape: the pods and the Job as created, normalised, and how two sets
// of shapes differ, field by field.

package oracle

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Shape is pod p as its controller created it, normalised: what the
// apiserver, the scheduler and the nodes add or name at random is gone, the
// Job's UID and the controller's finalizer are placeholders.
func Shape(p *corev1.Pod, jobUIDs map[string]bool, finalizer string) string {
	uid := func(s string) string {
		if jobUIDs[s] {
			return jobUID
		}
		return s
	}
	q := &corev1.Pod{}
	q.GenerateName = p.GenerateName
	q.Labels = map[string]string{}
	for k, v := range p.Labels {
		q.Labels[k] = uid(v)
	}
	q.Annotations = maps.Clone(p.Annotations)
	for _, f := range p.Finalizers {
		if f == finalizer && f != "" {
			f = trackingFinal
		}
		q.Finalizers = append(q.Finalizers, f)
	}
	for _, r := range p.OwnerReferences {
		r.UID = "" // the Job's: its name and kind stay
		q.OwnerReferences = append(q.OwnerReferences, r)
	}
	q.Spec = *p.Spec.DeepCopy()
	q.Spec.NodeName = "" // the scheduler's, sometimes already in the first version seen
	for i := range q.Spec.Volumes {
		if strings.HasPrefix(q.Spec.Volumes[i].Name, "kube-api-access-") {
			q.Spec.Volumes[i].Name = serviceAccount
		}
	}
	for _, cs := range [][]corev1.Container{q.Spec.InitContainers, q.Spec.Containers} {
		for i := range cs {
			for j := range cs[i].VolumeMounts {
				if strings.HasPrefix(cs[i].VolumeMounts[j].Name, "kube-api-access-") {
					cs[i].VolumeMounts[j].Name = serviceAccount
				}
			}
		}
	}
	data, _ := json.Marshal(struct {
		Meta metav1.ObjectMeta `json:"metadata"`
		Spec corev1.PodSpec    `json:"spec"`
	}{q.ObjectMeta, q.Spec})
	return string(data)
}

// JobShape is job's metadata (labels, annotations, finalizers, owners) and
// spec, normalised: the Job's UID a placeholder, spec.managedBy gone (the
// harness gives each controller under test its own value).
func JobShape(job *batchv1.Job, jobUIDs map[string]bool) string {
	uid := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			if jobUIDs[v] {
				v = jobUID
			}
			out[k] = v
		}
		return out
	}
	spec := job.Spec.DeepCopy()
	spec.ManagedBy = nil
	if spec.Selector != nil {
		spec.Selector.MatchLabels = uid(spec.Selector.MatchLabels)
	}
	spec.Template.Labels = uid(spec.Template.Labels)
	var owners []metav1.OwnerReference
	for _, r := range job.OwnerReferences {
		r.UID = ""
		owners = append(owners, r)
	}
	data, _ := json.Marshal(struct {
		Labels      map[string]string       `json:"labels,omitempty"`
		Annotations map[string]string       `json:"annotations,omitempty"`
		Finalizers  []string                `json:"finalizers,omitempty"`
		Owners      []metav1.OwnerReference `json:"ownerReferences,omitempty"`
		Spec        *batchv1.JobSpec        `json:"spec"`
	}{uid(job.Labels), job.Annotations, job.Finalizers, owners, spec})
	return string(data)
}

type fieldDiff struct{ path, a, b string }

// unmatched counts the pods of shapes a has beyond b's, and b's beyond a's.
func unmatched(a, b map[string]int) (onlyA, onlyB int) {
	for _, k := range union(a, b) {
		onlyA += max(a[k]-b[k], 0)
		onlyB += max(b[k]-a[k], 0)
	}
	return onlyA, onlyB
}

// shapeDiffs pairs the pod shapes one run created and the other did not,
// each with the other run's most alike, and names the fields in which
// they differ (metadata.annotations.x, spec.containers.0.image …); a shape
// left without a partner is named by its generateName and index.
func shapeDiffs(a, b map[string]int) []fieldDiff {
	var onlyA, onlyB []map[string]string
	for _, k := range union(a, b) {
		for n := a[k] - b[k]; n > 0; n-- {
			onlyA = append(onlyA, flatten(k))
		}
		for n := b[k] - a[k]; n > 0; n-- {
			onlyB = append(onlyB, flatten(k))
		}
	}
	seen := map[string]bool{}
	var out []fieldDiff
	for _, x := range onlyA {
		if len(onlyB) == 0 {
			out = append(out, fieldDiff{"(a pod)", describe(x), "<none>"})
			continue
		}
		best, bestN := 0, -1
		for i, y := range onlyB {
			if n := len(diffPaths(x, y)); bestN < 0 || n < bestN {
				best, bestN = i, n
			}
		}
		for _, p := range diffPaths(x, onlyB[best]) {
			d := fieldDiff{p, orNone(x, p), orNone(onlyB[best], p)}
			if k := d.path + "\x00" + d.a + "\x00" + d.b; !seen[k] { // one line for pods that differ alike
				seen[k] = true
				out = append(out, d)
			}
		}
		onlyB = slices.Delete(onlyB, best, best+1)
	}
	for _, y := range onlyB {
		out = append(out, fieldDiff{"(a pod)", "<none>", describe(y)})
	}
	return out
}

func describe(flat map[string]string) string {
	if _, ok := flat["metadata.generateName"]; !ok { // what became of a pod (later)
		data, _ := json.Marshal(flat)
		return string(data)
	}
	return fmt.Sprintf("generateName %s, index %s", orNone(flat, "metadata.generateName"), orNone(flat, "metadata.annotations."+batchv1.JobCompletionIndexAnnotation))
}

func diffPaths(x, y map[string]string) []string {
	var out []string
	for _, p := range union(x, y) {
		if vx, okx := x[p]; !okx || vx != y[p] {
			out = append(out, p)
		} else if _, oky := y[p]; !oky {
			out = append(out, p)
		}
	}
	return out
}

// flatten turns a shape's JSON into path → value (leaves as JSON).
func flatten(shape string) map[string]string {
	var v any
	out := map[string]string{}
	if json.Unmarshal([]byte(shape), &v) != nil {
		out[""] = shape
		return out
	}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, c := range t {
				walk(join(prefix, k), c)
			}
		case []any:
			for i, c := range t {
				walk(join(prefix, strconv.Itoa(i)), c)
			}
		default:
			out[prefix] = leaf(t)
		}
	}
	walk("", v)
	return out
}

// leaf is a value as JSON, "<" and ">" as they are (a placeholder in a
// verdict reads "<none>", not "\u003cnone\u003e").
func leaf(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}
