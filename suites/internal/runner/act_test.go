package runner

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/scenarios"
)

// A pod that ends between the act's list and its delete is not deleted: the
// delete carries the pod as seen, the Conflict makes the act read again, and
// with no running pod left it says why instead of deleting a finished pod.
func TestActDeletesOnlyThePodAsSeen(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job-a", UID: "uid-a", ResourceVersion: "7",
			OwnerReferences: []metav1.OwnerReference{{Kind: "Job", Name: JobName, Controller: ptr.To(true)}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, tc := range []struct {
		name      string
		endsFirst bool
		wantErr   string
	}{
		{name: "the pod still runs when read again", endsFirst: false},
		{name: "the pod ended meanwhile", endsFirst: true, wantErr: "the pod chosen changed before the deletePod"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(pod.DeepCopy())
			var deletes []string
			client.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				d := a.(k8stesting.DeleteActionImpl)
				pre := d.DeleteOptions.Preconditions
				if pre == nil || pre.ResourceVersion == nil || pre.UID == nil {
					t.Fatalf("delete without the pod's preconditions: %+v", d.DeleteOptions)
				}
				deletes = append(deletes, *pre.ResourceVersion)
				if len(deletes) == 1 { // the pod changed after the list
					p := pod.DeepCopy()
					p.ResourceVersion = "8"
					if tc.endsFirst {
						p.Status.Phase = corev1.PodSucceeded
					}
					if err := client.Tracker().Update(schema.GroupVersionResource{Version: "v1", Resource: "pods"}, p, "ns"); err != nil {
						t.Fatal(err)
					}
					return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, p.Name, nil)
				}
				return false, nil, nil
			})
			err := act(context.Background(), client, client, "ns", scenarios.Action{Kind: scenarios.ActDeletePod})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("act: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("act: %v, want an error saying %q", err, tc.wantErr)
			}
			want := []string{"7", "8"}
			if tc.endsFirst {
				want = []string{"7"}
			}
			if strings.Join(deletes, ",") != strings.Join(want, ",") {
				t.Fatalf("deletes at resourceVersions %v, want %v", deletes, want)
			}
		})
	}
}
