package reports

import (
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
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
	for _, want := range []string{`<svg class="timeline"`, `pod-state failed`, `class="violation"`, `<table class="matrix verdicts"`, `id="glance"`, `id="failures"`} {
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
