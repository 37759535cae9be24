package pods

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// shells are the POSIX shells on this machine the script is run with; busybox
// is what real pods run, dash/sh proves the script is plain POSIX.
func shells(t *testing.T) [][]string {
	var out [][]string
	if p, err := exec.LookPath("busybox"); err == nil {
		out = append(out, []string{p, "sh"})
	}
	if p, err := exec.LookPath("sh"); err == nil {
		out = append(out, []string{p})
	}
	if len(out) == 0 {
		t.Skip("no POSIX shell on PATH")
	}
	return out
}

// runScript runs b's script in a temp dir standing in for the container's /tmp
// (the script's paths are rewritten), optionally sends SIGTERM after sigAfter,
// and returns the exit code and how long it ran.
func runScript(t *testing.T, sh []string, b Behavior, index string, sigAfter time.Duration) (int, time.Duration) {
	t.Helper()
	dir := t.TempDir()
	script := b.Script()
	script = strings.ReplaceAll(script, "/tmp/ready", filepath.Join(dir, "ready"))
	script = strings.ReplaceAll(script, "/jobconform/", dir+"/")
	cmd := exec.Command(sh[0], append(sh[1:], "-c", script)...)
	cmd.Env = append(os.Environ(), "JOB_COMPLETION_INDEX="+index)
	// In a container the script's background sleeps die with PID 1; here its
	// process group goes, or they would outlive the test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	if sigAfter > 0 {
		time.Sleep(sigAfter) // the signal's moment is the input under test, not a wait for a condition
		_ = cmd.Process.Signal(syscall.SIGTERM)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), time.Since(start)
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, time.Since(start)
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("script did not exit within 20s")
		return 0, 0
	}
}

func TestScriptRunThenExit(t *testing.T) {
	for _, sh := range shells(t) {
		code, took := runScript(t, sh, RunFor(300*time.Millisecond, 42), "", 0)
		if code != 42 || took < 300*time.Millisecond {
			t.Errorf("%v: exit %d after %s, want 42 after ≥300ms", sh, code, took)
		}
	}
}

func TestScriptTrapsSIGTERM(t *testing.T) {
	for _, sh := range shells(t) {
		code, took := runScript(t, sh, RunForever().TrapSIGTERM(time.Second, 143), "", 300*time.Millisecond)
		if code != 143 || took < 1300*time.Millisecond {
			t.Errorf("%v: exit %d after %s, want 143 after ≥1.3s", sh, code, took)
		}
	}
}

func TestScriptIndexOverride(t *testing.T) {
	b := Succeed(100*time.Millisecond).ForIndex(1, Fail(7))
	for _, sh := range shells(t) {
		if code, _ := runScript(t, sh, b, "1", 0); code != 7 {
			t.Errorf("%v: index 1 exit %d, want 7", sh, code)
		}
		if code, _ := runScript(t, sh, b, "0", 0); code != 0 {
			t.Errorf("%v: index 0 exit %d, want 0", sh, code)
		}
	}
}

// A container that fails its first runs: restarted in place (the state
// volume kept: here the same dir), its later runs exit 0.
func TestScriptFailuresThenSuccess(t *testing.T) {
	b := Fail(3)
	b.Failures = 2
	for _, sh := range shells(t) {
		dir := t.TempDir()
		var codes []int
		for range 3 {
			script := strings.ReplaceAll(b.Script(), "/jobconform/", dir+"/")
			script = strings.ReplaceAll(script, "/tmp/ready", filepath.Join(dir, "ready"))
			err := exec.Command(sh[0], append(sh[1:], "-c", script)...).Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			codes = append(codes, code)
		}
		if want := []int{3, 3, 0}; !slices.Equal(codes, want) {
			t.Errorf("%v: runs exited %v, want %v", sh, codes, want)
		}
	}
	tmpl := corev1.PodTemplateSpec{}
	b.Apply(&tmpl)
	if len(tmpl.Spec.Volumes) != 1 || len(tmpl.Spec.Containers[0].VolumeMounts) != 1 || tmpl.Annotations[AnnFailures] != "2" {
		t.Errorf("a pod that counts its runs: volumes %v, mounts %v, annotations %v", tmpl.Spec.Volumes, tmpl.Spec.Containers[0].VolumeMounts, tmpl.Annotations)
	}
	if err := RunForever().ForIndex(0, Behavior{Failures: 1}).Validate(); err == nil {
		t.Error("failures without a run that exits non-zero accepted")
	}
}

func TestApply(t *testing.T) {
	gate := corev1.PodConditionType("example.com/gate")
	tmpl := corev1.PodTemplateSpec{}
	RunForever().WithReadyAfter(2*time.Second).WithGates(gate).TrapSIGTERM(5*time.Second, 0).Apply(&tmpl)
	c := tmpl.Spec.Containers[0]
	if c.Image != Image || len(c.Command) != 3 || c.ReadinessProbe == nil {
		t.Fatalf("container not rendered: %+v", c)
	}
	if len(tmpl.Spec.ReadinessGates) != 1 || tmpl.Spec.ReadinessGates[0].ConditionType != gate {
		t.Fatalf("readiness gates: %+v", tmpl.Spec.ReadinessGates)
	}
	want := map[string]string{AnnSIGTERMSeconds: "5", AnnSIGTERMExitCode: "0", AnnReadyAfter: "2", AnnExitCode: "0"}
	for k, v := range want {
		if tmpl.Annotations[k] != v {
			t.Errorf("annotation %s = %q, want %q", k, tmpl.Annotations[k], v)
		}
	}
	if _, ok := tmpl.Annotations[AnnRunSeconds]; ok {
		t.Errorf("a pod that runs forever has %s", AnnRunSeconds)
	}
}

func TestValidate(t *testing.T) {
	if err := Fail(300).Validate(); err == nil {
		t.Error("exit code 300 accepted")
	}
	if err := RunForever().ForIndex(-1, Fail(1)).Validate(); err == nil {
		t.Error("negative index accepted")
	}
	if err := Succeed(time.Second).TrapSIGTERM(time.Second, 143).Validate(); err != nil {
		t.Errorf("valid behaviour rejected: %v", err)
	}
}

func TestNewJob(t *testing.T) {
	j := NewJob("j", 3, Succeed(time.Second))
	if *j.Spec.Parallelism != 3 || *j.Spec.Completions != 3 || *j.Spec.BackoffLimit != 6 || j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Fatalf("spec %+v", j.Spec)
	}
	if len(j.Spec.Template.Annotations) == 0 || len(j.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("the behaviour was not applied: %+v", j.Spec.Template)
	}
}

// Containers beside the first run its script with their own exit code;
// init containers exit with theirs; both reach the kwok stages as
// annotations and the kubelet's image as the target's.
func TestSeveralContainers(t *testing.T) {
	b := Succeed(2*time.Second).ForIndex(1, RunFor(5*time.Second, 4))
	b.Containers = []Container{{Name: "helper", ExitCode: 42}}
	b.Init = []Container{{Name: "setup", ExitCode: 7}, {Name: "fetch"}}
	b.Sidecars = []Container{{Name: "proxy", ExitCode: 143}}
	if err := b.Validate(); err != nil {
		t.Fatal(err)
	}
	var tmpl corev1.PodTemplateSpec
	b.Apply(&tmpl)
	Target{Image: "local/busybox", PullPolicy: corev1.PullNever}.Adapt(&tmpl)
	cs, init := tmpl.Spec.Containers, tmpl.Spec.InitContainers
	if len(cs) != 2 || cs[0].Name != MainContainer || cs[1].Name != "helper" || len(init) != 3 || init[0].Name != "setup" || init[2].Name != "proxy" {
		t.Fatalf("containers %v, init %v", cs, init)
	}
	helper := cs[1].Command[2]
	if !strings.Contains(helper, "code=42") || !strings.Contains(helper, "1) run=5; code=42") || strings.Contains(helper, "code=4;") {
		t.Errorf("helper's script does not run as main with its own code:\n%s", helper)
	}
	if init[0].Command[2] != "exit 7" || init[1].Command[2] != "exit 0" || init[0].RestartPolicy != nil {
		t.Errorf("init commands %v, %v", init[0].Command, init[1].Command)
	}
	if p := init[2]; p.RestartPolicy == nil || *p.RestartPolicy != corev1.ContainerRestartPolicyAlways || !strings.Contains(p.Command[2], "trap 'exit 143' TERM") {
		t.Errorf("sidecar %v: restartPolicy Always, trapping SIGTERM with its code", p)
	}
	for _, c := range append(cs, init...) {
		if c.Image != "local/busybox" || c.ImagePullPolicy != corev1.PullNever {
			t.Errorf("%s: image %s, pull %s: not adapted", c.Name, c.Image, c.ImagePullPolicy)
		}
	}
	if a := tmpl.Annotations; a[AnnExitCodeOf+"helper"] != "42" || a[AnnExitCodeOf+"setup"] != "7" || a[AnnExitCodeOf+"fetch"] != "0" || a[AnnExitCodeOf+"proxy"] != "143" {
		t.Errorf("annotations %v", a)
	}
	if !b.Fails() || (Behavior{Containers: []Container{{Name: "x"}}}).Fails() {
		t.Error("Fails: a non-zero exit beside the first, and only then")
	}
	for _, bad := range [][]Container{{{Name: "main"}}, {{Name: "a"}, {Name: "a"}}, {{Name: "Bad_Name"}}, {{Name: "x", ExitCode: 256}}} {
		if err := (Behavior{Containers: bad}).Validate(); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	if err := Succeed(time.Second).ForIndex(0, Behavior{Init: []Container{{Name: "x"}}}).Validate(); err == nil {
		t.Error("init containers per index accepted")
	}
}
