package mutants

// containerMutants are the faults of a controller that reads a pod as if
// it had one container: the pod failure policy's exit codes of a second
// container, of init containers and of sidecars, and the completion index
// of init containers (scenarios/catalog/conformance/containers.yaml).
var containerMutants = []Mutant{
	{Name: "exit-codes-of-first-container", Suite: "conformance", Labels: "podFailurePolicy",
		Breaks: "matches onExitCodes rules against the pod's first container alone: a second container's exit code and the init containers' are never read",
		Edits: []Edit{
			{"pod_failure_policy.go", "for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {",
				"for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses[:min(1, len(pod.Status.ContainerStatuses))]} {"},
		}},
	{Name: "exit-codes-ignore-container-name", Suite: "conformance", Labels: "podFailurePolicy",
		Breaks: "matches an onExitCodes rule that names a container against every container's exit code",
		Edits: []Edit{
			{"pod_failure_policy.go", "if t == nil || t.ExitCode == 0 || (req.ContainerName != nil && *req.ContainerName != cs.Name) {", "if t == nil || t.ExitCode == 0 {"},
		}},
	{Name: "exit-codes-skip-init", Suite: "conformance", Labels: "podFailurePolicy",
		Breaks: "matches onExitCodes rules against the main containers only: a pod failed by its init container is counted, never matched",
		Edits: []Edit{
			{"pod_failure_policy.go", "for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {",
				"for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses} {"},
		}},
	{Name: "exit-codes-skip-sidecars", Suite: "conformance", Labels: "podFailurePolicy",
		Breaks: "matches onExitCodes rules against the main and the plain init containers, not the sidecars (restartable init containers), whose exit codes upstream reads too",
		Edits: []Edit{
			{"pod_failure_policy.go", "if t == nil || t.ExitCode == 0 || (req.ContainerName != nil && *req.ContainerName != cs.Name) {",
				"if t == nil || t.ExitCode == 0 || (req.ContainerName != nil && *req.ContainerName != cs.Name) || mutantSidecar(pod, cs.Name) {"},
			{"mutant_sidecar.go", "", "package controller\n\nimport corev1 \"k8s.io/api/core/v1\"\n\nfunc mutantSidecar(pod *corev1.Pod, name string) bool {\n\tfor _, c := range pod.Spec.InitContainers {\n\t\tif c.Name == name && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {\n\t\t\treturn true\n\t\t}\n\t}\n\treturn false\n}\n"},
		}},
	{Name: "notin-matches-zero", Suite: "conformance", Labels: "podFailurePolicy",
		Breaks: "applies an onExitCodes rule's operator to containers that exited 0 too: NotIn matches a failed pod's container that succeeded",
		Edits: []Edit{
			{"pod_failure_policy.go", "if t == nil || t.ExitCode == 0 || (req.ContainerName", "if t == nil || (req.ContainerName"},
		}},
	{Name: "index-env-main-containers-only", Suite: "conformance", Labels: "tracking",
		Breaks: "sets JOB_COMPLETION_INDEX in an Indexed Job's main containers but not its init containers (upstream sets it in both)",
		Edits: []Edit{
			{"pods.go", "for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {", "for _, list := range [][]corev1.Container{pod.Spec.Containers} {"},
		}},
}
