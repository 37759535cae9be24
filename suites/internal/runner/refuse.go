package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/internal/timeline"
	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/oracle"
)

// refusalName names the ValidatingAdmissionPolicy and its binding of
// refusePodChanges in ns (cluster objects: one per namespace).
func refusalName(ns string) string { return oracle.RefusalPolicyPrefix + ns }

// refusePodChanges makes the apiserver refuse user's writes that what
// names (scenarios.Action.Refusing) in ns — its pod DELETEs and UPDATEs
// (finalizer patches), its writes of the Job's status, or both — by a
// ValidatingAdmissionPolicy that matches that user alone, so kwok, the
// kubelets and the harness go on; and returns once the apiserver refuses
// them: a dry-run write of each kind, made as user (impersonated), is
// refused. What an admission webhook, a policy engine or an apiserver
// under a partial outage does; the controller's writes fail until
// allowPodChanges, and it must retry them.
func refusePodChanges(ctx context.Context, client kubernetes.Interface, ns, user string, what []string) error {
	if user == "" {
		return errors.New("refusePodChanges needs the identity the controller's requests carry (runner.Controller.User), which the harness does not know for this controller")
	}
	name := refusalName(ns)
	// Labelled so that jobconform cleanup finds it if this run is killed
	// before its clean-up (suites/leftovers).
	meta := metav1.ObjectMeta{Name: name, Labels: map[string]string{kube.TestLabel: "true", kube.NamespaceLabel: ns}}
	var rules []admissionv1.NamedRuleWithOperations
	for _, w := range what {
		rule := admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}
		if w == scenarios.RefuseJobStatus {
			// An UPDATE's admission covers its PATCHes and applies too.
			rule = admissionv1.Rule{APIGroups: []string{"batch"}, APIVersions: []string{"v1"}, Resources: []string{"jobs/status"}}
		}
		rules = append(rules, admissionv1.NamedRuleWithOperations{RuleWithOperations: admissionv1.RuleWithOperations{
			Operations: []admissionv1.OperationType{admissionv1.Delete, admissionv1.Update}, Rule: rule,
		}})
	}
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: meta,
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: rules},
			MatchConditions:  []admissionv1.MatchCondition{{Name: "controller-under-test", Expression: fmt.Sprintf("request.userInfo.username == %q", user)}},
			Validations:      []admissionv1.Validation{{Expression: "false", Message: fmt.Sprintf("jobconform refuses this controller's writes of %s for now (scenario act refusePodChanges)", strings.Join(what, " and "))}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: meta,
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: ns},
			}},
		},
	}
	a := client.AdmissionregistrationV1()
	if _, err := a.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("refusePodChanges: create the ValidatingAdmissionPolicy: %w", err)
	}
	if _, err := a.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("refusePodChanges: create the ValidatingAdmissionPolicyBinding: %w", err)
	}
	for _, w := range what {
		if err := awaitRefusal(ctx, client, ns, user, w, true); err != nil {
			return err
		}
	}
	return nil
}

// allowPodChanges removes refusePodChanges' policy and returns once the
// apiserver admits the controller's pod deletions and Job status writes
// again.
func allowPodChanges(ctx context.Context, client kubernetes.Interface, ns, user string) error {
	if err := removeRefusal(ctx, client, ns); err != nil {
		return err
	}
	if user == "" {
		return nil
	}
	for _, w := range []string{scenarios.RefusePods, scenarios.RefuseJobStatus} {
		if err := awaitRefusal(ctx, client, ns, user, w, false); err != nil {
			return err
		}
	}
	return nil
}

// removeRefusal deletes refusePodChanges' policy and binding of ns, if
// any (the runner's clean-up calls it after every run).
func removeRefusal(ctx context.Context, client kubernetes.Interface, ns string) error {
	a := client.AdmissionregistrationV1()
	name := refusalName(ns)
	err := a.ValidatingAdmissionPolicyBindings().Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("allowPodChanges: delete the binding: %w", err)
	}
	err = a.ValidatingAdmissionPolicies().Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("allowPodChanges: delete the policy: %w", err)
	}
	return nil
}

// liftRefusal is what a run defers to remove its refusal of pod changes,
// if its scenario makes one: even when the run failed or was interrupted,
// for the policy is a cluster object, which the namespace's deletion
// leaves behind.
func liftRefusal(s *scenarios.Scenario, client kubernetes.Interface, ns string) func() {
	if !s.Acts(scenarios.ActRefusePodChanges) {
		return func() {}
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = removeRefusal(ctx, client, ns)
	}
}

// refusalWithin bounds how long the apiserver takes to enforce a policy
// made or removed (its informer and type check: about a second).
const refusalWithin = 30 * time.Second

// awaitRefusal polls until a dry-run write of what (scenarios.RefusePods:
// a deletion of one of ns's pods; RefuseJobStatus: an update of a Job's
// status) as user is refused (refused) or admitted (!refused) by the
// policy.
func awaitRefusal(ctx context.Context, client kubernetes.Interface, ns, user, what string, refused bool) error {
	try := tryPodDeletion
	if what == scenarios.RefuseJobStatus {
		try = tryJobStatusUpdate
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, refusalWithin, true, func(ctx context.Context) (bool, error) {
		var none bool
		none, last = try(ctx, client, ns, user)
		if errors.As(last, new(listError)) {
			return false, nil // the objects to try on could not be read: again
		}
		if none {
			// Nothing to refuse a change of: a refusal waits for an object
			// to try it on; its end, with the policy gone, has nothing
			// left to admit.
			return !refused, nil
		}
		byPolicy := last != nil && strings.Contains(last.Error(), refusalName(ns))
		if apierrors.IsConflict(last) {
			return false, nil // the object changed between the read and the try
		}
		if last != nil && !byPolicy && !apierrors.IsNotFound(last) {
			return false, fmt.Errorf("a dry-run write of %s as %s (impersonated: the harness's credentials must allow it) failed: %w", what, user, last)
		}
		return byPolicy == refused, nil
	})
	if err != nil {
		want := "refused"
		if !refused {
			want = "admitted again"
		}
		return fmt.Errorf("the controller's writes of %s were not %s within %s (last try: %v): %w", what, want, refusalWithin, last, err)
	}
	return nil
}

// listError is a try's failure to read the objects to try on, before any
// write: retried, as the write's own refusal is not.
type listError struct{ error }

func (l listError) Unwrap() error { return l.error }

// tryPodDeletion deletes one of ns's pods as user, dry-run (none: ns has
// no pod).
func tryPodDeletion(ctx context.Context, client kubernetes.Interface, ns, user string) (none bool, err error) {
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, listError{err}
	}
	if len(pods.Items) == 0 {
		return true, errors.New("no pod in the namespace to try a deletion on")
	}
	return false, client.CoreV1().RESTClient().Delete().Namespace(ns).Resource("pods").Name(pods.Items[0].Name).
		SetHeader("Impersonate-User", user).Body(&metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}).Do(ctx).Error()
}

// tryJobStatusUpdate writes one of ns's Jobs' status back unchanged as
// user, dry-run (none: ns has no Job).
func tryJobStatusUpdate(ctx context.Context, client kubernetes.Interface, ns, user string) (none bool, err error) {
	jobs, err := client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, listError{err}
	}
	if len(jobs.Items) == 0 {
		return true, errors.New("no Job in the namespace to try a status write on")
	}
	j := &jobs.Items[0]
	return false, client.BatchV1().RESTClient().Put().Namespace(ns).Resource("jobs").Name(j.Name).SubResource("status").
		Param("dryRun", metav1.DryRunAll).SetHeader("Impersonate-User", user).Body(j).Do(ctx).Error()
}

// refusalTimes are when refusePodChanges and allowPodChanges took effect in
// a run: the invariants treat each as a restart (invariants.Context.
// Restarts), since a controller whose requests were refused retries on its
// own backoff (the built-in's reaches 60 s), which is no lag of its own.
func refusalTimes(steps []StepResult) []time.Time {
	var out []time.Time
	for _, s := range steps {
		if s.OK && (s.What == "act "+scenarios.ActRefusePodChanges || s.What == "act "+scenarios.ActAllowPodChanges) {
			out = append(out, s.Time)
		}
	}
	return out
}

// statusRefusals are the spans in which s's acts had the apiserver refuse
// the controller's writes of the Job's status (refusePodChanges with
// jobStatus, to the allowPodChanges after it; open: to the end).
func statusRefusals(s *scenarios.Scenario, steps []StepResult) []timeline.Span {
	var out []timeline.Span
	for _, r := range steps {
		if !r.OK || r.Index < 0 || r.Index >= len(s.Steps) || s.Steps[r.Index].Act == nil {
			continue
		}
		switch a := s.Steps[r.Index].Act; {
		case a.Kind == scenarios.ActRefusePodChanges && slices.Contains(a.Refusing(), scenarios.RefuseJobStatus):
			out = append(out, timeline.Span{From: r.Time})
		case a.Kind == scenarios.ActAllowPodChanges && len(out) > 0 && out[len(out)-1].To.IsZero():
			out[len(out)-1].To = r.Time
		}
	}
	return out
}
