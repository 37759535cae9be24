// Package deploy holds the reference controller's manifests, embedded so the
// harness installs exactly what users are told to apply.
package deploy

import _ "embed"

// RBAC is rbac.yaml: the least-privilege ClusterRole, a ServiceAccount and the binding.
//
//go:embed rbac.yaml
var RBAC []byte

// ClusterRoleName is the ClusterRole in RBAC.
const ClusterRoleName = "jobconform:reference-job-controller"
