package pods

import (
	"fmt"
	"strings"
)

// The kwok Stages below make a pod on a kwok node do what a kubelet makes it
// do, driven by the annotations of Behavior:
//
//   - start: Pending → Running with a running container; ContainersReady at
//     once or after ready-after-seconds;
//   - Ready = ContainersReady AND every readiness gate True (reason
//     ReadinessGatesNotReady otherwise), re-evaluated whenever a gate flips;
//   - run then exit, in two updates as a kubelet (v1.27+) makes them: first the
//     container terminated (exit code, reason Completed or Error) with
//     ContainersReady and Ready False while the phase is still Running, then the
//     phase Succeeded or Failed (reason PodCompleted) — seen side by side with a
//     real kubelet by make fidelity; with restartPolicy OnFailure a non-zero
//     exit instead restarts the container in place, restartCount growing: the
//     first restart at once, the n-th after the kubelet's crash-loop back-off of
//     10s·2^(n-2), at most 300s (its flowcontrol.Backoff has no entry before the
//     first failure; a real kubelet was seen restarting at once, and
//     kuberuntime's doBackOff reads so in v1.37.1); with failures=N only the
//     first N runs exit with exit-code, later ones exit 0;
//   - a forced deletion (grace 0): nothing more is written; the pod object
//     goes when its finalizers do (a real kubelet wrote no status to a pod
//     force-deleted under the Job's tracking finalizer: make fidelity);
//   - deletion: the container keeps running for the SIGTERM trap's time,
//     capped by the grace period (then exit 137), reaches its terminal phase,
//     and only then does the "node" delete the pod with grace 0. Finalizers
//     are never touched: the Job controller removes its own.
//
// Exactly one stage matches a pod at any time: every selector asks jq for the
// pod's single "state" (defined once in prelude) and takes one value of it.
// kwok picks at random among matching stages, so overlap would make the
// simulation nondeterministic.
//
// Timers are absolute (computed from startedAt, lastState finishedAt or
// deletionTimestamp − grace), because kwok restarts a stage's delay on every
// update of the pod: a relative "5s" would restart whenever, for example, the
// Job controller removes its finalizer from a terminating pod. API timestamps
// have one-second resolution; every deadline is rounded up, so a pod runs at
// least as long as asked and at most one second longer.
const prelude = `def A: .metadata.annotations // {};
def idx: A["` + CompletionIndexAnnotation + `"] // "";
def ann($k): A as $a | ($a["` + Prefix + `" + $k + "." + idx] // $a["` + Prefix + `" + $k]);
def num($k; $d): (ann($k) // $d) | tonumber;
def cond($t): [(.status.conditions // [])[] | select(.type == $t)][0].status // "";
def wantready: . as $p | if (cond("ContainersReady") == "True") and ([($p.spec.readinessGates // [])[] | .conditionType as $t | ($p | cond($t)) == "True"] | all) then "True" else "False" end;
def cs: (.status.containerStatuses // [])[0] // {};
def phase: .status.phase // "Pending";
def terminal: phase == "Succeeded" or phase == "Failed";
def deleting: .metadata.deletionTimestamp != null;
def secs($t): ($t[0:19] + "Z") | fromdate;
def started: secs(cs.state.running.startedAt);
def restartable: (.spec.restartPolicy // "Always") != "Never";
def hasrun: ann("run-seconds") as $r | $r != null and $r != "forever";
def runends: started + 1 + num("run-seconds"; "0");
def readyat: started + 1 + num("ready-after-seconds"; "0");
def grace: .metadata.deletionGracePeriodSeconds // 0;
def termat: secs(.metadata.deletionTimestamp) - grace + 1 + ([num("sigterm-seconds"; "0"), grace] | min);
def backoff: (cs.restartCount // 1) as $n | if $n <= 1 then 0 else ([10 * pow(2; $n - 2), 300] | min) end;
def resumeat: secs(cs.lastState.terminated.finishedAt) + 1 + backoff;
def exited: cs.state.terminated != null;
def sidecarsrun: [(.status.initContainerStatuses // [])[] | select(.state.running != null)] | length > 0;
def state:
  if terminal then (if deleting then "remove" else "done" end)
  elif deleting and grace == 0 then "forced"
  elif phase != "Running" then (if deleting then "abort" else "start" end)
  elif exited then (if restartable and (deleting | not) and cs.state.terminated.exitCode != 0 then "backoff" elif sidecarsrun then "stop-sidecars" else "finish" end)
  elif cond("Ready") != wantready then "ready"
  elif deleting then "terminate"
  elif cs.state.running == null then "resume"
  elif cond("ContainersReady") != "True" and ((hasrun | not) or readyat < runends) then "containers-ready"
  elif hasrun then "exit"
  else "running" end;
def until($t): "\($t - now)s";
`

// Go-template fragments shared by the status templates (kwok renders them with
// sprig and the pod as data).
const (
	tplAnn = `{{ $a := .metadata.annotations | default dict }}
{{ $idx := index $a "` + CompletionIndexAnnotation + `" | default "" }}
{{ $exit := index $a (printf "` + AnnExitCode + `.%s" $idx) | default (index $a "` + AnnExitCode + `") | default "0" | int }}
{{ $tsec := index $a (printf "` + AnnSIGTERMSeconds + `.%s" $idx) | default (index $a "` + AnnSIGTERMSeconds + `") | default "0" | float64 }}
{{ $tcode := index $a (printf "` + AnnSIGTERMExitCode + `.%s" $idx) | default (index $a "` + AnnSIGTERMExitCode + `") | default "143" | int }}
{{ $readyAfter := index $a (printf "` + AnnReadyAfter + `.%s" $idx) | default (index $a "` + AnnReadyAfter + `") | default "0" | float64 }}
{{ $now := Now }}
`
	// $gates: every readiness gate condition is True.
	tplGates = `{{ $gates := true }}
{{ range .spec.readinessGates }}{{ $t := .conditionType }}{{ $ok := false }}{{ range $.status.conditions }}{{ if and (eq .type $t) (eq .status "True") }}{{ $ok = true }}{{ end }}{{ end }}{{ if not $ok }}{{ $gates = false }}{{ end }}{{ end }}
`
	// readyConds renders ContainersReady=$cr and Ready=$cr&&$gates.
	tplReadyConds = `- type: ContainersReady
  status: {{ if $cr }}"True"{{ else }}"False"{{ end }}
  {{ if not $cr }}reason: ContainersNotReady{{ end }}
  lastTransitionTime: {{ $now | Quote }}
- type: Ready
  status: {{ if and $cr $gates }}"True"{{ else }}"False"{{ end }}
  {{ if not $cr }}reason: ContainersNotReady{{ else if not $gates }}reason: ReadinessGatesNotReady{{ end }}
  lastTransitionTime: {{ $now | Quote }}
`
)

// tplInit renders the init containers' statuses, run in order as a kubelet
// runs them: each exits with its code (AnnExitCodeOf) and the first that
// exits non-zero fails the pod ($initFailed), those after it never run.
const tplInit = `{{ $initFailed := false }}
{{ with .spec.initContainers }}initContainerStatuses:
{{ range $i, $c := . }}{{ $code := index $a (print "` + AnnExitCodeOf + `" $c.name) | default "0" | int }}{{ $sidecar := eq ($c.restartPolicy | default "") "Always" }}
- name: {{ $c.name | Quote }}
  image: {{ $c.image | Quote }}
  imageID: ""
  {{ if not $initFailed }}containerID: {{ printf "kwok://%s-init-%d" $.metadata.uid $i | Quote }}
  {{ end }}started: {{ and $sidecar (not $initFailed) }}
  ready: {{ if $initFailed }}false{{ else }}{{ or $sidecar (eq $code 0) }}{{ end }}
  restartCount: 0
  state:
  {{ if $initFailed }}  waiting:
      reason: PodInitializing
  {{ else if $sidecar }}  running:
      startedAt: {{ $now | Quote }}
  {{ else }}  terminated:
      exitCode: {{ $code }}
      reason: {{ if eq $code 0 }}Completed{{ else }}Error{{ end }}
      startedAt: {{ $now | Quote }}
      finishedAt: {{ $now | Quote }}
  {{ end }}{{ if and (not $sidecar) (ne $code 0) }}{{ $initFailed = true }}{{ end }}{{ end }}
{{ end }}`

// tplStopSidecars renders the init containers' statuses with every one
// still running (a sidecar) stopped: terminated with the code its SIGTERM
// trap exits with (AnnExitCodeOf), as a kubelet stops the sidecars once
// the main containers have ended or the pod is deleted.
const tplStopSidecars = `{{ with .status.initContainerStatuses }}initContainerStatuses:
{{ range . }}{{ if .state.running }}{{ $code := index $a (print "` + AnnExitCodeOf + `" .name) | default "0" | int }}- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  imageID: ""
  containerID: {{ .containerID | default "" | Quote }}
  started: false
  ready: false
  restartCount: {{ .restartCount | default 0 }}
  state:
    terminated:
      exitCode: {{ $code }}
      reason: {{ if eq $code 0 }}Completed{{ else }}Error{{ end }}
      startedAt: {{ .state.running.startedAt | Quote }}
      finishedAt: {{ $now | Quote }}
{{ else }}- {{ . | toJson }}
{{ end }}{{ end }}{{ end }}`

type stage struct {
	name  string
	state string // the value of jq "state" this stage takes
	delay string // jq producing a duration or "" for none
	body  string // the "next" block (YAML, indented by 4 in the output)
}

// containerStatuses renders every container with the given state YAML
// (indented to sit under "state:"), readiness and extra fields.
func containerStatuses(state, ready, extra string) string {
	return `containerStatuses:
{{ range $i, $c := .spec.containers }}
- name: {{ $c.name | Quote }}
  image: {{ $c.image | Quote }}
  imageID: ""
  containerID: {{ printf "kwok://%s-%d" $.metadata.uid $i | Quote }}
  started: ` + ready + `
  ready: ` + ready + `
` + extra + `  state:
` + state + `{{ end }}
`
}

var stages = []stage{
	{name: "jobconform-pod-start", state: "start", body: statusTemplate(tplAnn + tplGates + `{{ $cr := eq $readyAfter 0.0 }}
` + tplInit + `hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
podIP: {{ PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
startTime: {{ $now | Quote }}
{{ if $initFailed }}phase: Failed
conditions:
- type: PodReadyToStartContainers
  status: "True"
  lastTransitionTime: {{ $now | Quote }}
- type: Initialized
  status: "False"
  reason: ContainersNotInitialized
  lastTransitionTime: {{ $now | Quote }}
- type: ContainersReady
  status: "False"
  reason: PodFailed
  lastTransitionTime: {{ $now | Quote }}
- type: Ready
  status: "False"
  reason: PodFailed
  lastTransitionTime: {{ $now | Quote }}
` + containerStatuses(`    waiting:
      reason: PodInitializing
`, `false`, `  restartCount: 0
`) + `{{ else }}phase: Running
conditions:
- type: PodReadyToStartContainers
  status: "True"
  lastTransitionTime: {{ $now | Quote }}
- type: Initialized
  status: "True"
  lastTransitionTime: {{ $now | Quote }}
` + tplReadyConds + containerStatuses(`    running:
      startedAt: {{ $now | Quote }}
`, `{{ $cr }}`, `  restartCount: 0
`) + `{{ end }}`)},
	{name: "jobconform-pod-ready", state: "ready", body: statusTemplate(tplAnn + tplGates + `{{ $cr := false }}
{{ range .status.conditions }}{{ if and (eq .type "ContainersReady") (eq .status "True") }}{{ $cr = true }}{{ end }}{{ end }}
conditions:
- type: Ready
  status: {{ if and $cr $gates }}"True"{{ else }}"False"{{ end }}
  reason: {{ if not $cr }}ContainersNotReady{{ else if not $gates }}ReadinessGatesNotReady{{ else }}""{{ end }}
  lastTransitionTime: {{ $now | Quote }}
`)},
	{name: "jobconform-pod-containers-ready", state: "containers-ready", delay: `until(readyat)`,
		body: statusTemplate(tplAnn + tplGates + `{{ $cr := true }}
conditions:
` + tplReadyConds + containerStatuses(`    running:
      startedAt: {{ dig "state" "running" "startedAt" $now (index $.status.containerStatuses $i) | Quote }}
`, `true`, `  restartCount: {{ dig "restartCount" 0 (index $.status.containerStatuses $i) }}
`))},
	{name: "jobconform-pod-exit", state: "exit", delay: `until(runends)`, body: statusTemplate(tplAnn + `{{ $prev := index .status.containerStatuses 0 }}
{{ $fails := index $a (printf "` + AnnFailures + `.%s" $idx) | default (index $a "` + AnnFailures + `") | default "0" | int }}
{{ if and (gt $fails 0) (ge (dig "restartCount" 0 $prev | int) $fails) }}{{ $exit = 0 }}{{ end }}
conditions:
` + notReady("ContainersNotReady") + containerStatuses(`    terminated:
      {{ $code := $exit }}{{ with index $a (print "`+AnnExitCodeOf+`" $c.name) }}{{ $code = int . }}{{ end }}exitCode: {{ $code }}
      reason: {{ if eq $code 0 }}Completed{{ else }}Error{{ end }}
      startedAt: {{ dig "state" "running" "startedAt" $now $prev | Quote }}
      finishedAt: {{ $now | Quote }}
`, `false`, `  restartCount: {{ dig "restartCount" 0 $prev }}
{{ with dig "lastState" nil $prev }}  lastState: {{ . | toJson }}
{{ end }}`))},
	// The main containers have ended: the sidecars are stopped, then the
	// pod reaches its phase (the next stage), in two updates as a kubelet
	// makes them.
	{name: "jobconform-pod-stop-sidecars", state: "stop-sidecars", body: statusTemplate(tplAnn + tplStopSidecars)},
	// Failed when any container exited non-zero (the containers beside the
	// first, restartPolicy Never, exit with it).
	{name: "jobconform-pod-finish", state: "finish", body: statusTemplate(`{{ $now := Now }}
{{ $code := 0 }}{{ range .status.containerStatuses }}{{ if ne (dig "state" "terminated" "exitCode" 0 . | int) 0 }}{{ $code = 1 }}{{ end }}{{ end }}
phase: {{ if eq $code 0 }}Succeeded{{ else }}Failed{{ end }}
conditions:
` + notReady("PodCompleted"))},
	{name: "jobconform-pod-terminate", state: "terminate", delay: `until(termat)`,
		body: statusTemplate(tplAnn + `{{ $code := $tcode }}{{ if ge $tsec (float64 (.metadata.deletionGracePeriodSeconds | default 0)) }}{{ $code = 137 }}{{ end }}
` + terminalStatus(`$code`))},
	{name: "jobconform-pod-backoff", state: "backoff",
		body: statusTemplate(tplAnn + `{{ $cr := false }}{{ $gates := true }}
{{ $prev := index .status.containerStatuses 0 }}
conditions:
` + tplReadyConds + containerStatuses(`    waiting:
      reason: CrashLoopBackOff
`, `false`, `  restartCount: {{ add (dig "restartCount" 0 $prev) 1 }}
  lastState:
    terminated: {{ dig "state" "terminated" dict $prev | toJson }}
`))},
	{name: "jobconform-pod-resume", state: "resume", delay: `until(resumeat)`,
		body: statusTemplate(tplAnn + tplGates + `{{ $cr := eq $readyAfter 0.0 }}
{{ $prev := index .status.containerStatuses 0 }}
conditions:
` + tplReadyConds + containerStatuses(`    running:
      startedAt: {{ $now | Quote }}
`, `{{ $cr }}`, `  restartCount: {{ dig "restartCount" 0 $prev }}
  lastState: {{ dig "lastState" dict $prev | toJson }}
`))},
	{name: "jobconform-pod-abort", state: "abort", body: statusTemplate(tplAnn + `phase: Failed
conditions:
- type: Ready
  status: "False"
  reason: PodCompleted
  lastTransitionTime: {{ $now | Quote }}
` + containerStatuses(`    terminated:
      exitCode: 137
      reason: ContainerStatusUnknown
      message: The container could not be located when the pod was terminated
      finishedAt: {{ $now | Quote }}
`, `false`, `  restartCount: 0
`))},
	{name: "jobconform-pod-remove", state: "remove", body: "delete: true\n"},
}

// notReady renders ContainersReady and Ready False with reason.
func notReady(reason string) string {
	return `- type: ContainersReady
  status: "False"
  reason: ` + reason + `
  lastTransitionTime: {{ $now | Quote }}
- type: Ready
  status: "False"
  reason: ` + reason + `
  lastTransitionTime: {{ $now | Quote }}
`
}

// terminalStatus is the status of a pod whose container exited with code.
func terminalStatus(code string) string {
	return tplStopSidecars + `{{ $prev := index .status.containerStatuses 0 }}
phase: {{ if eq (int ` + code + `) 0 }}Succeeded{{ else }}Failed{{ end }}
conditions:
` + notReady("PodCompleted") + containerStatuses(`    terminated:
      exitCode: {{ `+code+` }}
      reason: {{ if eq (int `+code+`) 0 }}Completed{{ else }}Error{{ end }}
      startedAt: {{ dig "state" "running" "startedAt" $now $prev | Quote }}
      finishedAt: {{ $now | Quote }}
`, `false`, `  restartCount: {{ dig "restartCount" 0 $prev }}
{{ with dig "lastState" nil $prev }}  lastState: {{ . | toJson }}
{{ end }}`)
}

func statusTemplate(tpl string) string {
	return "statusTemplate: |\n" + indent(tpl, "  ")
}

func indent(s, pad string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// StateExpression is the jq program that names a pod's state; tests and
// debugging tools evaluate it against pod JSON.
func StateExpression() string { return prelude + "state" }

// DelayExpression is the jq program of the named stage's delay ("" if none).
func DelayExpression(state string) string {
	for _, s := range stages {
		if s.state == state && s.delay != "" {
			return prelude + s.delay
		}
	}
	return ""
}

// States lists the states that have a stage; "done" and "running" have none:
// nothing happens to such a pod until something else changes it.
func States() []string {
	var out []string
	for _, s := range stages {
		out = append(out, s.state)
	}
	return out
}

// KwokStages returns the Stage documents (multi-document YAML) for kwok's --config.
func KwokStages() []byte {
	var b strings.Builder
	b.WriteString("# Generated by jobconform (internal/pods/stages.go): pod stages that behave as a kubelet.\n")
	for i, s := range stages {
		if i > 0 {
			b.WriteString("---\n")
		}
		fmt.Fprintf(&b, `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: %s
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: |
%s      operator: In
      values:
      - %q
`, s.name, indent(StateExpression(), "        "), s.state)
		if s.delay != "" {
			fmt.Fprintf(&b, "  delay:\n    durationMilliseconds: 0\n    durationFrom:\n      expressionFrom: |\n%s", indent(prelude+s.delay, "        "))
		}
		b.WriteString("  next:\n" + indent(s.body, "    "))
	}
	return []byte(b.String())
}
