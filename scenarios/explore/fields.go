// Package explore generates Jobs over the Job controller's input space
// (issue #55; design notes in shared/design/explore.md): a case is a seed
// and an index, rendered as an ordinary scenario (the catalog's YAML,
// `jobconform validate` accepts it), whose outcome nobody wrote down — it
// awaits the Job's end, and the invariants and the differential verdict
// judge it.
//
// Fields is the list of what upstream's controller reads of a Job, its pod
// template and its pods' status, each varied by the generator or left
// alone with the reason; TestFieldsCoverUpstream holds the list to
// upstream's pkg/controller/job at the default release, and
// TestEveryFieldVaried counts each field's values over 1,000 cases.
package explore

import (
	"fmt"
	"strings"
)

// Field is one input of the Job controller.
type Field struct {
	// Path names it as the API does.
	Path string
	// Go is how upstream's source reads it: the selector after a Job, a
	// pod template or a pod ("Spec.Parallelism", "Status.Phase").
	Go string
	// Fixed says why the generator leaves it alone ("": it varies it).
	Fixed string
}

// Fields are the controller's inputs, by the struct that holds them.
var Fields = []Field{
	// JobSpec.
	{Path: "spec.parallelism", Go: "Spec.Parallelism"},
	{Path: "spec.completions", Go: "Spec.Completions"},
	{Path: "spec.completionMode", Go: "Spec.CompletionMode"},
	{Path: "spec.backoffLimit", Go: "Spec.BackoffLimit"},
	{Path: "spec.backoffLimitPerIndex", Go: "Spec.BackoffLimitPerIndex"},
	{Path: "spec.maxFailedIndexes", Go: "Spec.MaxFailedIndexes"},
	{Path: "spec.podFailurePolicy", Go: "Spec.PodFailurePolicy"},
	{Path: "spec.successPolicy", Go: "Spec.SuccessPolicy"},
	{Path: "spec.activeDeadlineSeconds", Go: "Spec.ActiveDeadlineSeconds"},
	{Path: "spec.podReplacementPolicy", Go: "Spec.PodReplacementPolicy"},
	{Path: "spec.suspend", Go: "Spec.Suspend"},
	{Path: "spec.selector", Go: "Spec.Selector"},
	{Path: "spec.manualSelector", Go: "Spec.ManualSelector"},
	{Path: "spec.template", Go: "Spec.Template"},
	{Path: "spec.scheduling", Go: "Spec.Scheduling",
		Fixed: "workload-aware (gang) scheduling, read by job_scheduling_manager.go: alpha in v1.37 behind WorkloadWithJob, off by default"},
	{Path: "spec.managedBy", Go: "Spec.ManagedBy",
		Fixed: "the harness sets it for each controller under test (each answers to its own value); a foreign value is the catalog's managedby-* and metrics-foreign-managed-by scenarios"},
	// The pod template's PodSpec.
	{Path: "spec.template.spec.restartPolicy", Go: "Spec.RestartPolicy"},
	{Path: "spec.template.spec.containers", Go: "Spec.Containers"},
	{Path: "spec.template.spec.terminationGracePeriodSeconds", Go: "Spec.TerminationGracePeriodSeconds"},
	{Path: "spec.template.spec.readinessGates", Go: "Spec.ReadinessGates"},
	{Path: "spec.template.spec.initContainers", Go: "Spec.InitContainers"},
	{Path: "spec.template.spec.hostname", Go: "Spec.Hostname",
		Fixed: "written, not read: the controller sets an Indexed pod's hostname (<job>-<index>); the oracle compares the pods as created"},
	{Path: "spec.template.spec.priorityClassName", Go: "Spec.PriorityClassName",
		Fixed: "read by the gang-scheduling manager (job_scheduling_manager.go), alpha in v1.37 and off by default"},
	{Path: "spec.template.spec.schedulingGroup", Go: "Spec.SchedulingGroup",
		Fixed: "gang scheduling (job_scheduling_manager.go), alpha in v1.37 and off by default"},
	// The pods' status, as the pod behaviour makes it.
	{Path: "pod status.phase", Go: "Status.Phase"},
	{Path: "pod status.containerStatuses (exit codes, restarts)", Go: "Status.ContainerStatuses"},
	{Path: "pod status.conditions (Ready, DisruptionTarget)", Go: "Status.Conditions"},
	{Path: "pod status.initContainerStatuses", Go: "Status.InitContainerStatuses"},
	{Path: "pod status.startTime", Go: "Status.StartTime",
		Fixed: "set by the kubelet (or kwok) when the pod starts; the controller reads it for an active deadline's start and backoff: varied through the pods' run times"},
}

// varied are the fields the generator varies.
func varied() []Field {
	var out []Field
	for _, f := range Fields {
		if f.Fixed == "" {
			out = append(out, f)
		}
	}
	return out
}

// FieldsMarkdown is the field list as docs/explore.md shows it
// (TestFieldsDocumented holds the page to it).
func FieldsMarkdown() string {
	var b strings.Builder
	b.WriteString("| field | upstream reads | generated |\n|---|---|---|\n")
	for _, f := range Fields {
		how := "varied"
		if f.Fixed != "" {
			how = "left alone: " + f.Fixed
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", f.Path, f.Go, how)
	}
	return b.String()
}
