package reports

import (
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// browser finds a headless-capable Chromium.
func browser() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestReportInHeadlessChromium opens the report offline in Chromium: the page
// must load without script errors, hold the timelines, and render; the
// screenshot is kept in $ARTIFACTS (else the test's temporary directory).
func TestReportInHeadlessChromium(t *testing.T) {
	bin := browser()
	if bin == "" {
		t.Skip("headless Chromium not found: install Debian's chromium package (make test does) to run this test")
	}
	dir := t.TempDir()
	page, err := Write(dir, "jobconform report test", load(t))
	if err != nil {
		t.Fatal(err)
	}
	shotDir := os.Getenv("ARTIFACTS")
	if shotDir == "" {
		shotDir = dir
	}
	if err := os.MkdirAll(shotDir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(shotDir, "report-screenshot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// No network: the page must stand alone (--no-sandbox: CI runs as root).
	common := []string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
		"--proxy-server=127.0.0.1:9", "--window-size=1200,1400"}
	dom, err := exec.CommandContext(ctx, bin, append(common, "--dump-dom", "file://"+page)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	d := string(dom)
	if !strings.Contains(d, `data-loaded="ok"`) {
		t.Fatalf("the page's script did not finish (DOM body: %.300s)", d[strings.Index(d, "<body"):])
	}
	if i := strings.Index(d, "data-errors="); i >= 0 {
		t.Fatalf("script errors on the page: %.200s", d[i:])
	}
	// Timelines are drawn lazily: the ones near the window must be drawn.
	for _, want := range []string{`<svg class="timeline"`, `pod-state failed`, `class="violation"`, `<table class="matrix verdicts"`, `id="glance"`, `id="failures"`, `data-drawn="1"`} {
		if !strings.Contains(d, want) {
			t.Errorf("rendered page lacks %s", want)
		}
	}
	out, err := exec.CommandContext(ctx, bin, append(common, "--screenshot="+shot, "file://"+page)...).CombinedOutput()
	if err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	if b := img.Bounds(); b.Dx() != 1200 || b.Dy() != 1400 {
		t.Fatalf("screenshot is %v, want 1200x1400", b)
	}
	t.Logf("screenshot: %s", shot)
}

// The first screen at 1400 px: the per-controller lines, then the failures,
// then the matrices, and nothing wider than the window — with the columns of
// a make test run (four controllers, kubelet nodes, a second release) and
// the catalog's longest names.
func TestFirstScreenFitsAt1400(t *testing.T) {
	bin := browser()
	if bin == "" {
		t.Skip("headless Chromium not found: install Debian's chromium package (make test does) to run this test")
	}
	var runs []Run
	cols := []struct{ ctl, v, nodes string }{
		{"builtin", "v1.37.1", ""}, {"reference", "v1.37.1", ""}, {"dispatcher", "v1.37.1", ""}, {"multikueue", "v1.37.1", ""},
		{"builtin", "v1.37.1", "kubelet"}, {"reference", "v1.37.1", "kubelet"}, {"builtin", "v1.36.3", ""}, {"reference", "v1.36.3", ""},
	}
	for _, sc := range []string{"nonindexed-parallelism-cut-beyond-backoff-limit", "manual-selector-adopts-orphans-not-others-pods", "complete-simple"} {
		for _, c := range cols {
			r := Run{Suite: "jobconform conformance", Scenario: sc, Controller: c.ctl, Version: c.v, Nodes: c.nodes, Verdict: "PASS", Seconds: 123}
			if c.ctl == "multikueue" && sc == "complete-simple" {
				r.Verdict, r.Failures = "FAIL", []string{"step 0 (await active=0 succeeded=3 failed=0 SuccessCriteriaMet Complete): not reached within 1m0s (last status: active=3 ready=3 terminating=0 succeeded=0 failed=0 uncounted=0 conditions=[]) — a long message that must wrap, not widen the page"}
			}
			runs = append(runs, r)
		}
	}
	runs = append(runs, Run{Suite: "jobconform drills", Scenario: "keeps every field and every finished pod across each change", Verdict: "PASS"})
	page, err := Write(t.TempDir(), "jobconform", runs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dom, err := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--proxy-server=127.0.0.1:9", "--window-size=1400,900", "--dump-dom", "file://"+page).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	d := string(dom)
	m := regexp.MustCompile(`data-scroll-width="(\d+)"`).FindStringSubmatch(d)
	if m == nil {
		t.Fatalf("the page did not measure itself (DOM body: %.300s)", d[strings.Index(d, "<body"):])
	}
	if w, _ := strconv.Atoi(m[1]); w > 1400 {
		t.Errorf("the page is %d px wide at a 1400 px window: it scrolls sideways", w)
	}
	glance, failures, matrix := strings.Index(d, `id="glance"`), strings.Index(d, `id="failures"`), strings.Index(d, `<table class="matrix verdicts"`)
	if glance < 0 || failures < glance || matrix < failures || !strings.Contains(d[failures:matrix], "complete-simple") {
		t.Errorf("first screen order: glance at %d, failures at %d (naming the failure), matrices at %d", glance, failures, matrix)
	}
}
