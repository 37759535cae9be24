package coverage

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func summarized(t *testing.T) *Report {
	t.Helper()
	r, err := Summarize("testdata/profile.txt", "testdata/src", "v1.37.1", "a test")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSummarizeByFunction(t *testing.T) {
	r := summarized(t)
	if r.Statements != 4 || r.Reached != 2 {
		t.Fatalf("statements %d reached %d, want 4 and 2 (the gated file left out)", r.Statements, r.Reached)
	}
	if _, ok := r.LeftOut["k8s.io/kubernetes/pkg/controller/job/job_scheduling_manager.go"]; !ok {
		t.Errorf("job_scheduling_manager.go counted: %v", r.LeftOut)
	}
	funcs := map[string]Func{}
	for _, f := range r.Files[0].Funcs {
		funcs[f.Name] = f
	}
	if f := funcs["Controller.Sync"]; f.Statements != 3 || f.Reached != 2 || f.Line != 5 {
		t.Errorf("Controller.Sync: %+v, want 3 statements, 2 reached, line 5", f)
	}
	if f := funcs["unused"]; f.Statements != 1 || f.Reached != 0 {
		t.Errorf("unused: %+v", f)
	}
	if len(r.Unreached) != 2 || r.Unreached[0].Func != "Controller.Sync" || r.Unreached[0].StartLine != 9 || r.Unreached[1].Func != "unused" {
		t.Errorf("unreached: %+v", r.Unreached)
	}
}

func TestWriteLoadTable(t *testing.T) {
	r := summarized(t)
	dir := t.TempDir()
	if err := Write(r, dir); err != nil {
		t.Fatal(err)
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A second measurement reaching the block the first missed.
	other := *back
	other.What = "another"
	other.Blocks = map[string]Reach{}
	for k, b := range back.Blocks {
		b.Reached = strings.Contains(k, ":12.")
		other.Blocks[k] = b
	}
	other.Reached = 1
	var buf bytes.Buffer
	if err := Table(&buf, back, &other); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| a test | 2 of 4 statements (50.0 %) | 2 |", "| another | 1 of 4 statements (25.0 %) | 1 |", "| all together | 3 of 4 statements (75.0 %) |"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, buf.String())
		}
	}
	if m := Missed(back, &other); len(m) != 2 {
		t.Errorf("missed %v, want the two blocks of Sync", m)
	}
	other.Version = "v1.36.3"
	if err := Table(&buf, back, &other); err == nil {
		t.Error("two releases compared block by block")
	}
	md, _ := filepath.Glob(filepath.Join(dir, MarkdownFile))
	if len(md) != 1 {
		t.Error("no markdown written")
	}
}
