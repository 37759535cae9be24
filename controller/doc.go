// Package controller is jobconform's reference Job controller: a batch/v1 Job
// controller written to be read, whose observable behaviour matches the
// built-in controller of kube-controller-manager scenario for scenario. It
// reconciles the Jobs whose spec.managedBy names it (KEP-4368), or — in
// "unmanaged" mode, for clusters that run kube-controller-manager with
// --controllers=-job — the Jobs that name no manager at all.
//
// The shape follows the upstream controller (pkg/controller/job): informers and
// listers, a rate-limited workqueue, creation/deletion expectations so a sync
// never acts on a stale pod cache, a live read of the Job when its cached
// version is known to be replaced (stale.go: client-go's informers can stay
// blind for a minute and more after an apiserver restart), and exactly-once
// accounting of finished pods
// through a tracking finalizer plus status.uncountedTerminatedPods:
//
//  1. a finished pod that still carries the finalizer is recorded by UID in
//     status.uncountedTerminatedPods (a status write);
//  2. then its finalizer is removed;
//  3. then the UIDs whose pods no longer carry the finalizer move from the
//     uncounted lists into status.succeeded / status.failed.
//
// A crash between any two steps is repaired by the next sync, so nothing is
// lost and nothing is counted twice. The finalizer is the controller's own
// (TrackingFinalizer): KEP-4368 forbids external controllers to use
// batch.kubernetes.io/job-tracking.
//
// Terminal conditions are deferred as from Kubernetes 1.31: FailureTarget or
// SuccessCriteriaMet first, Failed or Complete (same reason and message) only
// once no pod of the Job is terminating and nothing is uncounted.
package controller
