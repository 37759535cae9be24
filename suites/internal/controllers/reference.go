// Package controllers starts and controls the Job controllers under test that
// the harness itself runs: today the reference controller, as a supervised
// process with its own least-privileged identity.
package controllers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/jobconform/jobconform/controller"
	"github.com/jobconform/jobconform/controller/deploy"
	"github.com/jobconform/jobconform/internal/ports"
	"github.com/jobconform/jobconform/internal/process"
)

// ReferencePackage is the reference controller's main package.
const ReferencePackage = "github.com/jobconform/jobconform/controller/cmd/reference-controller"

// ReferenceUser is the identity the harness runs the reference controller as.
const ReferenceUser = "jobconform:reference-controller"

// ExternalUser is the identity the harness starts an external controller
// as (--external-command), where the cluster makes users (the local
// provider): a cluster admin of its own, so that its requests are told
// apart from the harness's in the apiserver's audit log.
const ExternalUser = "jobconform:external-controller"

// GrantAdmin makes user a cluster admin (ExternalUser: a user's controller
// may need anything).
func GrantAdmin(ctx context.Context, client kubernetes.Interface, user string) error {
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "jobconform-admin-" + strings.NewReplacer(":", "-", "/", "-").Replace(user)},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
	}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("make %s a cluster admin: %w", user, err)
	}
	return nil
}

// BuildReference compiles the reference controller into dir and returns the
// binary's path. The go build cache makes repeated builds cheap.
func BuildReference(ctx context.Context, dir string) (string, error) {
	return build(ctx, dir, "reference-controller", ReferencePackage, "the reference controller")
}

// build compiles main package pkg into dir/name.
func build(ctx context.Context, dir, name, pkg, what string) (string, error) {
	bin := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s (run from inside the jobconform module): %v\n%s", what, err, out)
	}
	return bin, nil
}

// GrantReference installs the controller's ClusterRole from its manifest and
// binds it to user (ReferenceUser, or another reference controller's own),
// so tests prove the manifest is enough.
func GrantReference(ctx context.Context, client kubernetes.Interface, user string) error {
	for _, doc := range bytes.Split(deploy.RBAC, []byte("\n---\n")) {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return fmt.Errorf("rbac.yaml: %w", err)
		}
		if meta.Kind != "ClusterRole" {
			continue
		}
		var role rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict(doc, &role); err != nil {
			return fmt.Errorf("rbac.yaml ClusterRole: %w", err)
		}
		if _, err := client.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	name := deploy.ClusterRoleName + "-harness"
	if user != ReferenceUser {
		name += "-" + strings.NewReplacer(":", "-", "/", "-").Replace(user)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: deploy.ClusterRoleName},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: user}},
	}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// Reference is a running (or stopped) reference controller process.
type Reference struct {
	// Binary, Kubeconfig and LogDir must be set; Name defaults to controller.DefaultName.
	Binary     string
	Kubeconfig string
	LogDir     string
	Name       string
	Unmanaged  bool
	Gates      map[string]bool
	// MaxPodsPerSync is --max-pods-per-sync (0: the controller's default):
	// a deliberately slowed controller, which breaks no promise.
	MaxPodsPerSync int
	// User is the identity it runs as where the harness issues one
	// (default ReferenceUser): another one tells its API requests apart.
	User string

	port int
	served
}

// Start runs the controller and waits until it serves /healthz.
func (r *Reference) Start(ctx context.Context) error {
	if r.Name == "" {
		r.Name = controller.DefaultName
	}
	if r.proc == nil {
		if err := os.MkdirAll(r.LogDir, 0o755); err != nil {
			return err
		}
		env, err := process.ComponentEnv() // as the built-in controller's controller-manager
		if err != nil {
			return err
		}
		r.proc = process.New(r.logName(), r.LogPath())
		r.proc.SetEnv(env...)
	}
	if r.claim == nil { // kept across restarts: the port stays the controller's
		claim, err := ports.Take(1)
		if err != nil {
			return err
		}
		r.claim, r.port = claim, claim.Ports[0]
	}
	args := []string{
		"--kubeconfig=" + r.Kubeconfig,
		"--name=" + r.Name,
		"--metrics-bind-address=127.0.0.1:" + strconv.Itoa(r.port),
		"--v=2",
	}
	if r.Unmanaged {
		args = append(args, "--unmanaged")
	}
	if r.MaxPodsPerSync > 0 {
		args = append(args, "--max-pods-per-sync="+strconv.Itoa(r.MaxPodsPerSync))
	}
	if len(r.Gates) > 0 {
		var g []string
		for k, v := range r.Gates {
			g = append(g, k+"="+strconv.FormatBool(v))
		}
		sort.Strings(g)
		args = append(args, "--feature-gates="+strings.Join(g, ","))
	}
	r.proc.SetCommand(r.Binary, args...)
	if err := r.proc.Start(); err != nil {
		return err
	}
	if err := r.proc.AwaitHealthy(ctx, fmt.Sprintf("http://127.0.0.1:%d/healthz", r.port), time.Minute); err != nil {
		return fmt.Errorf("reference controller: %w", err)
	}
	return nil
}

// Stop ends the controller gracefully and gives its port back.
func (r *Reference) Stop() error { return r.stop() }

// stopProcess ends the process alone, its ports kept (Down).
func (r *Reference) stopProcess() error {
	if r.proc == nil {
		return nil
	}
	return r.proc.Stop(stopGrace)
}

// Down stops the controller (crash: kills it), keeping its port for the
// next Start.
func (r *Reference) Down(crash bool) error {
	if crash {
		return r.Kill()
	}
	return r.stopProcess()
}

// Kill ends the controller with SIGKILL, mid-work.
func (r *Reference) Kill() error {
	if r.proc == nil {
		return nil
	}
	return r.proc.Kill()
}

// Restart stops the controller and starts it with new gates (nil keeps them).
func (r *Reference) Restart(ctx context.Context, gates map[string]bool) error {
	if err := r.stopProcess(); err != nil {
		return err
	}
	if gates != nil {
		r.Gates = gates
	}
	return r.Start(ctx)
}

// Usage is the controller process's processor time so far and the most
// memory it held resident since it started or since ResetPeak.
func (r *Reference) Usage() (time.Duration, uint64, error) {
	if r.proc == nil || !r.proc.Running() {
		return 0, 0, fmt.Errorf("the reference controller %s does not run", r.Name)
	}
	return r.proc.CPU(), r.proc.PeakMemory(), nil
}

// ResetPeak starts the controller's peak memory over.
func (r *Reference) ResetPeak() error {
	if r.proc == nil {
		return fmt.Errorf("the reference controller %s does not run", r.Name)
	}
	return r.proc.ResetPeakMemory()
}

// LogPath is the controller's log file (every run appends to it).
func (r *Reference) LogPath() string { return filepath.Join(r.LogDir, r.logName()+".log") }

// logName tells apart the logs of controllers with other names (a broken one beside the good one).
func (r *Reference) logName() string {
	if r.Name == "" || r.Name == controller.DefaultName {
		return "reference-controller"
	}
	return "reference-controller-" + strings.NewReplacer("/", "-", ".", "-").Replace(r.Name)
}

// Metrics returns the controller's /metrics text.
func (r *Reference) Metrics(ctx context.Context) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/metrics", r.port), nil)
	// No proxy: the address is ours, on this machine.
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("read the reference controller's metrics: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("read the reference controller's metrics: %s", resp.Status)
	}
	return string(b), err
}
