package suites_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/suites"
)

// StartCommand: a controller that ends at once was started wrongly, and
// says so with its output; one that runs is stopped by Stop, with what it
// started.
func TestStartCommand(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := suites.StartCommand(ctx, "/no/kubeconfig", "echo cannot reach $KUBECONFIG; exit 3", filepath.Join(dir, "bad.log")); err == nil ||
		!strings.Contains(err.Error(), "exited at once") {
		t.Errorf("err = %v, want the command's early exit reported", err)
	}
	marker := filepath.Join(dir, "child-ended")
	p, err := suites.StartCommand(ctx, "/some/kubeconfig", "echo $KUBECONFIG; trap 'touch "+marker+"; exit 0' TERM; sleep 600 & wait", filepath.Join(dir, "ok.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the command was not asked to end: %v", err)
	}
	if log, _ := os.ReadFile(p.Log); !strings.Contains(string(log), "/some/kubeconfig") {
		t.Errorf("log %q lacks the KUBECONFIG it was given", log)
	}
}

func TestConformanceCatalogue(t *testing.T) {
	all, err := suites.Conformance()
	if err != nil {
		t.Fatal(err)
	}
	if suites.Find(all, "prp-failed-sigterm") == nil || suites.Find(all, "no-such-scenario") != nil || len(all) < 50 {
		t.Errorf("%d scenarios; Find does not find prp-failed-sigterm, or finds what is not there", len(all))
	}
}

// A wrong WithOracleFrom is refused before anything runs, naming what to give.
func TestJudgeOracleFromRefused(t *testing.T) {
	all, err := suites.Conformance()
	if err != nil {
		t.Fatal(err)
	}
	_, err = suites.Judge(context.Background(), "/no/kubeconfig", all[0], suites.Reference, suites.WithOracleFrom(filepath.Join(t.TempDir(), "none")))
	if err == nil || !strings.Contains(err.Error(), "WithOracleFrom") || !strings.Contains(err.Error(), "oracle directory") {
		t.Errorf("err = %v", err)
	}
}
