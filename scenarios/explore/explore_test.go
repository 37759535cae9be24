package explore

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/jobconform/jobconform/internal/release"
	"github.com/jobconform/jobconform/scenarios"
)

// The same seed gives the same cases; another seed, others.
func TestGenerateDeterministic(t *testing.T) {
	a, b, c := render(t, Generate(7, 40)), render(t, Generate(7, 40)), render(t, Generate(8, 40))
	if a != b {
		t.Error("seed 7 gave two different sets of cases")
	}
	if a == c {
		t.Error("seeds 7 and 8 gave the same cases")
	}
}

// Every generated case is an ordinary scenario: its YAML goes through the
// catalog's parser (what jobconform validate runs) as it is.
func TestGeneratedCasesValid(t *testing.T) {
	for _, c := range Generate(1, 1000) {
		data, err := Render(c.Scenario)
		if err != nil {
			t.Fatal(err)
		}
		back, err := scenarios.Parse(data)
		if err != nil {
			t.Fatalf("case %d: %v\n%s", c.Index, err, data)
		}
		// What Render leaves out are zeros: the file reads back as the case.
		if again, err := Render(back); err != nil || string(again) != string(data) {
			t.Fatalf("case %d does not read back as written (%v):\n%s\n---\n%s", c.Index, err, data, again)
		}
		if strings.Contains(string(data), ": 0s") || strings.Contains(string(data), "null") {
			t.Fatalf("case %d keeps zero values:\n%s", c.Index, data)
		}
		if last := c.Scenario.Steps[len(c.Scenario.Steps)-1]; last.Await == nil || !last.Await.Finished {
			t.Fatalf("case %d does not end awaiting the Job's end", c.Index)
		}
	}
}

// Over 1,000 cases the generator gives every field it varies at least two
// values, and a field it leaves alone none.
func TestEveryFieldVaried(t *testing.T) {
	seen := map[string]map[string]int{}
	for _, c := range Generate(1, 1000) {
		for path, v := range c.Values {
			if seen[path] == nil {
				seen[path] = map[string]int{}
			}
			seen[path][v]++
		}
	}
	for _, f := range Fields {
		n := len(seen[f.Path])
		switch {
		case f.Fixed == "" && n < 2:
			t.Errorf("%s: %d values over 1,000 cases: %v", f.Path, n, seen[f.Path])
		case f.Fixed != "" && n > 0:
			t.Errorf("%s is listed as left alone (%s) but the generator notes %d values", f.Path, f.Fixed, n)
		}
	}
	for path := range seen {
		if !slices.ContainsFunc(Fields, func(f Field) bool { return f.Path == path }) {
			t.Errorf("the generator notes %s, which Fields does not list", path)
		}
	}
	if testing.Verbose() {
		for _, f := range varied() {
			t.Logf("%-50s %d values", f.Path, len(seen[f.Path]))
		}
	}
}

// Every field of a JobSpec, a PodSpec or a pod's status that upstream's
// Job controller reads at the default release is on Fields (varied, or
// left alone with a reason): a field upstream starts to read fails this
// test until someone decides how to generate it.
func TestFieldsCoverUpstream(t *testing.T) {
	dir := upstreamJobController(t)
	read := upstreamReads(t, dir)
	if len(read) < 10 {
		t.Fatalf("found only %v in %s: has upstream's source moved?", read, dir)
	}
	for _, sel := range read {
		if !slices.ContainsFunc(Fields, func(f Field) bool { return f.Go == sel }) {
			t.Errorf("upstream's pkg/controller/job at %s reads %s, which Fields does not list: vary it in the generator, or list it with why not", release.Default, sel)
		}
	}
}

// upstreamJobController is pkg/controller/job of k8s.io/kubernetes at the
// default release, from the Go module cache (downloaded if need be: the
// Kubernetes binaries are built from the same module).
func upstreamJobController(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", "k8s.io/kubernetes@"+release.Default).Output()
	if err != nil {
		t.Fatalf("go mod download k8s.io/kubernetes@%s: %v (the Go module proxy must be reachable: the test reads upstream's Job controller from it)", release.Default, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download said %s: %v", out, err)
	}
	return filepath.Join(mod.Dir, "pkg", "controller", "job")
}

// upstreamReads lists the selectors ("Spec.X", "Status.X") of JobSpec,
// PodSpec and PodStatus fields that the controller's non-test files use; a
// name that JobStatus has too (Conditions, StartTime) is the Job's own
// status, which the controller writes.
func upstreamReads(t *testing.T, dir string) []string {
	t.Helper()
	spec := fieldNames(batchv1.JobSpec{}, corev1.PodSpec{})
	podStatus := fieldNames(corev1.PodStatus{})
	jobStatus := fieldNames(batchv1.JobStatus{})
	sel := regexp.MustCompile(`\.(Spec|Status)\.([A-Z][A-Za-z]*)`)
	found := map[string]bool{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range sel.FindAllStringSubmatch(string(data), -1) {
			switch {
			case m[1] == "Spec" && spec[m[2]]:
				found["Spec."+m[2]] = true
			case m[1] == "Status" && podStatus[m[2]] && !jobStatus[m[2]]:
				found["Status."+m[2]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for s := range found {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func fieldNames(vs ...any) map[string]bool {
	out := map[string]bool{}
	for _, v := range vs {
		ty := reflect.TypeOf(v)
		for i := range ty.NumField() {
			out[ty.Field(i).Name] = true
		}
	}
	return out
}

func render(t *testing.T, cs []Case) string {
	t.Helper()
	var b strings.Builder
	for _, c := range cs {
		data, err := yaml.Marshal(c.Scenario)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// docs/explore.md shows the field list as it is.
func TestFieldsDocumented(t *testing.T) {
	data, err := os.ReadFile("../../docs/explore.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), FieldsMarkdown()) {
		t.Errorf("docs/explore.md's field table is not the list in scenarios/explore/fields.go; write it as FieldsMarkdown does:\n%s", FieldsMarkdown())
	}
}

// Over 1,000 cases every act of Acts is drawn, each on a few dozen cases at
// the least, and a scale act always changes the parallelism.
func TestEveryActDrawn(t *testing.T) {
	drawn, afterFailures, elastic, refusals, others := map[string]int{}, map[string]int{}, 0, 0, 0
	unready, held := 0, 0
	for _, c := range Generate(1, 1000) {
		if j := c.Scenario.Job; ptr.Deref(j.Suspend, false) && j.ActiveDeadlineSeconds != nil &&
			c.Scenario.Steps[0].Holds.Duration > time.Duration(*j.ActiveDeadlineSeconds)*time.Second {
			held++
		}
		for i, st := range c.Scenario.Steps {
			if st.Act == nil || st.Act.Kind == scenarios.ActResume {
				continue
			}
			drawn[st.Act.Kind]++
			if prev := c.Scenario.Steps[i-1].Await; prev != nil && ptr.Deref(prev.Failed, 0) == 2 {
				afterFailures[st.Act.Kind]++
			}
			// The first scale act (an elastic one's second restores).
			first := st.Act.Kind == scenarios.ActScale && !slices.ContainsFunc(c.Scenario.Steps[:i], isAct(scenarios.ActScale))
			if st.Act.Kind == scenarios.ActRefusePods {
				refusals++
			}
			if st.Act.OwnedByOther {
				others++
			}
			if first && st.Act.Completions != nil {
				elastic++
			}
			if prev := c.Scenario.Steps[i-1].Await; first && prev != nil && ptr.Deref(prev.Ready, 0) < ptr.Deref(prev.Active, 0) {
				unready++
				// Index 0 is the unready one, and stays so until it ends.
				zero := c.Scenario.Pods.ByIndex["0"]
				if run, err := time.ParseDuration(zero.Run); err != nil || zero.ReadyAfter.Duration <= run {
					t.Errorf("%s scales down beside an unready pod, but index 0 runs %q and is ready after %v", c.Scenario.Name, zero.Run, zero.ReadyAfter.Duration)
				}
			}
			if st.Act.Kind == scenarios.ActFinishPod && (c.Scenario.Job.Completions != nil || c.Scenario.Nodes != "kwok") {
				t.Errorf("%s finishes a pod early, but is no work queue on kwok", c.Scenario.Name)
			}
			if first && *st.Act.Parallelism == ptr.Deref(c.Scenario.Job.Parallelism, 1) {
				t.Errorf("%s scales to the parallelism it has", c.Scenario.Name)
			}
		}
	}
	for _, a := range Acts {
		if drawn[a] < 20 {
			t.Errorf("act %s drawn on %d of 1,000 cases", a, drawn[a])
		}
	}
	// The forms that need a backoff pending: the Job made again (its
	// first pod owes the old one nothing) and a pod made while it has
	// room (a bad index removed whatever the count).
	for _, a := range []string{scenarios.ActRecreateJob, scenarios.ActCreatePod} {
		if afterFailures[a] == 0 {
			t.Errorf("act %s never drawn after two failures in 1,000 cases", a)
		}
	}
	// An elastic scale (completions with parallelism, the last index
	// done first: its success dropped by a scale-down).
	if elastic == 0 {
		t.Error("no elastic scale in 1,000 cases")
	}
	// The first wave ending while new pods are refused (a full quota).
	if refusals == 0 {
		t.Error("no refusal of new pods in 1,000 cases")
	}
	// A pod made by hand that another object controls.
	if others == 0 {
		t.Error("no pod of another owner made in 1,000 cases")
	}
	// A Job created suspended whose template changes before its resume.
	if drawn[scenarios.ActPatchTemplate] < 20 {
		t.Errorf("the pod template changed before a resume on %d of 1,000 cases", drawn[scenarios.ActPatchTemplate])
	}
	// A work queue one of whose pods succeeds while the others run.
	if drawn[scenarios.ActFinishPod] == 0 {
		t.Error("no work-queue pod finished early in 1,000 cases")
	}
	// A scale-down while one pod of the wave is not ready.
	if unready == 0 {
		t.Error("no scale-down beside a pod not ready in 1,000 cases")
	}
	// A Job held suspended past its deadline before the resume.
	if held == 0 {
		t.Error("no Job held suspended past its deadline in 1,000 cases")
	}
	t.Logf("acts over 1,000 cases: %v; after two failures: %v; elastic scales: %d; refusals: %d; pods of another owner: %d; "+
		"scale-downs beside an unready pod: %d; held past the deadline: %d", drawn, afterFailures, elastic, refusals, others, unready, held)
}

// A Job whose every pod fails ends at its backoffLimit's failure, its
// backoffs doubling from 10 s: at a limit above 3 (10+20+40+80 s of
// backoff and five runs) past its await of the end (explore-6-729, a Job
// made again at the default limit 6, waited 4 minutes under both
// controllers).
func TestFailingJobsEndWithinTheirAwait(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		for _, c := range Generate(seed, 1000) {
			j := c.Scenario.Job
			p := c.Scenario.Pods
			if p.ExitCode == 0 || p.Failures != 0 || len(p.ByIndex) > 0 || j.BackoffLimitPerIndex != nil ||
				j.Template.Spec.RestartPolicy != corev1.RestartPolicyNever || j.ActiveDeadlineSeconds != nil {
				continue
			}
			if bl := ptr.Deref(j.BackoffLimit, 6); bl > 3 {
				t.Errorf("%s: every pod fails, backoffLimit %d", c.Scenario.Name, bl)
			}
		}
	}
}

// The field test on what is rendered (issue #69, item 6): over 1,000
// cases, the shapes of the pod failure and success policies counted in the
// Jobs themselves, not in the generator's notes, what a refusal act
// refuses (the controller's pod changes, its Job status writes, or both)
// and how a recreated Job was deleted; a shape never drawn fails.
func TestPolicyShapesRendered(t *testing.T) {
	shapes := map[string]int{}
	for _, c := range Generate(1, 1000) {
		j := c.Scenario.Job
		if p := j.SuccessPolicy; p != nil {
			shapes[fmt.Sprintf("success rules: %d", len(p.Rules))]++
			for _, r := range p.Rules {
				ix := ptr.Deref(r.SucceededIndexes, "")
				switch {
				case strings.Contains(ix, ","):
					shapes["succeededIndexes: a list"]++
				case strings.Contains(ix, "-"):
					shapes["succeededIndexes: a range"]++
				}
				if r.SucceededIndexes != nil && r.SucceededCount != nil && int(*r.SucceededCount) < countIndexes(ix) {
					shapes["succeededCount below its indexes"]++
				}
			}
		}
		for _, st := range c.Scenario.Steps {
			if a := st.Act; a != nil && a.Kind == scenarios.ActRefusePodChanges {
				shapes["refused: "+strings.Join(a.Refusing(), " and ")]++
			}
			if a := st.Act; a != nil && a.Kind == scenarios.ActRecreateJob {
				shapes["recreated, deleted "+string(cmp.Or(a.Propagation, "Background"))]++
			}
		}
		pods := c.Scenario.Pods
		for _, k := range pods.Containers {
			shapes["a second container"]++
			if k.ExitCode != 0 {
				shapes["a second container that fails"]++
			}
		}
		if len(pods.Sidecars) > 0 {
			shapes["a sidecar, restartPolicy "+string(j.Template.Spec.RestartPolicy)]++
		}
		if n := len(pods.InitContainers); n > 0 {
			shapes[fmt.Sprintf("init containers: %d", n)]++
			if pods.InitContainers[n-1].ExitCode != 0 {
				shapes["an init container that fails"]++
			}
		}
		if p := j.PodFailurePolicy; p != nil {
			for _, r := range p.Rules {
				if r.OnExitCodes != nil {
					if n := r.OnExitCodes.ContainerName; n != nil {
						shapes["onExitCodes of "+*n]++
					}
					shapes[fmt.Sprintf("onExitCodes %s with %d values", r.OnExitCodes.Operator, len(r.OnExitCodes.Values))]++
					if r.Action == batchv1.PodFailurePolicyActionIgnore {
						shapes["Ignore on exit codes"]++
					}
				}
				if len(r.OnPodConditions) > 1 {
					shapes["onPodConditions: two patterns"]++
				}
				for _, pc := range r.OnPodConditions {
					shapes["onPodConditions status "+string(pc.Status)]++
					if pc.Type != corev1.DisruptionTarget {
						shapes["onPodConditions type "+string(pc.Type)]++
					}
				}
			}
		}
	}
	for _, want := range []string{"success rules: 1", "success rules: 2", "success rules: 3", "succeededIndexes: a list",
		"succeededIndexes: a range", "succeededCount below its indexes", "onExitCodes In with 1 values", "onExitCodes In with 2 values",
		"onExitCodes NotIn with 1 values", "onExitCodes NotIn with 2 values", "Ignore on exit codes", "onPodConditions: two patterns",
		"onPodConditions status True", "onPodConditions status False", "onPodConditions status Unknown",
		"onPodConditions type Ready", "onPodConditions type ContainersReady", "onPodConditions type PodScheduled",
		"refused: pods", "refused: jobStatus", "refused: pods and jobStatus",
		"recreated, deleted Background", "recreated, deleted Foreground", "recreated, deleted Orphan",
		"a second container", "a second container that fails", "init containers: 1", "init containers: 2", "an init container that fails",
		"onExitCodes of main", "onExitCodes of helper", "onExitCodes of setup", "onExitCodes of fetch", "onExitCodes of proxy",
		"a sidecar, restartPolicy Never", "a sidecar, restartPolicy OnFailure"} {
		if shapes[want] == 0 {
			t.Errorf("%s: never drawn in 1,000 cases", want)
		}
	}
	t.Logf("shapes over 1,000 cases: %v", shapes)
}

// countIndexes counts the indexes of a succeededIndexes string ("0,2-3": 3).
func countIndexes(s string) int {
	n := 0
	for _, part := range strings.Split(s, ",") {
		var a, b int
		if _, err := fmt.Sscanf(part, "%d-%d", &a, &b); err == nil {
			n += b - a + 1
		} else if part != "" {
			n++
		}
	}
	return n
}

// Over 1,000 cases a pod's disruption is followed by another's on a few
// dozen, at once and seconds later, each of the four kinds drawn second.
func TestSecondActsDrawn(t *testing.T) {
	pairs, gaps, second := 0, map[time.Duration]int{}, map[string]int{}
	for _, c := range Generate(1, 1000) {
		var acts []int
		for i, st := range c.Scenario.Steps {
			if st.Act != nil && slices.Contains([]string{scenarios.ActDeletePod, scenarios.ActEvictPod, scenarios.ActOrphanPod, scenarios.ActReleasePod}, st.Act.Kind) {
				acts = append(acts, i)
			}
		}
		if len(acts) < 2 {
			continue
		}
		pairs++
		a, b := acts[0], acts[1]
		gap := time.Duration(0)
		if b == a+2 {
			gap = c.Scenario.Steps[a+1].Holds.Duration
		} else if b != a+1 {
			t.Errorf("%s: steps between its two acts: %+v", c.Scenario.Name, c.Scenario.Steps[a+1:b])
		}
		gaps[gap]++
		second[c.Scenario.Steps[b].Act.Kind]++
		if w := ptr.Deref(c.Scenario.Steps[a-1].Await.Active, 0); w < 2 {
			t.Errorf("%s: two pods disrupted on a wave of %d", c.Scenario.Name, w)
		}
		if j := c.Scenario.Job; j.PodFailurePolicy != nil || j.BackoffLimitPerIndex != nil || ptr.Deref(j.BackoffLimit, 6) < 2 {
			t.Errorf("%s: two pods disrupted where the first may end the Job", c.Scenario.Name)
		}
	}
	if pairs < 12 || len(gaps) != 3 || len(second) != 4 {
		t.Errorf("second acts: %d pairs, gaps %v, kinds %v", pairs, gaps, second)
	}
	t.Logf("second acts: %d pairs, gaps %v, kinds %v", pairs, gaps, second)
}
