package main

import (
	"strings"
	"testing"
	"time"

	"github.com/jobconform/jobconform/internal/options"
)

// The time left adds up the kept times of the jobs still to come, keyed by
// what each runs, and says which were never measured; the times survive
// from one run to the next through the cache directory.
func TestSuiteTimesLeft(t *testing.T) {
	t.Setenv("JOBCONFORM_CACHE_DIR", t.TempDir())
	conf := job{suite: "conformance", o: options.Options{Version: "v1.37.1"}}
	focused := conf
	focused.o.Run.Focus = "reference"
	chaos := job{suite: "chaos", o: options.Options{Version: "v1.37.1"}}
	if jobKey(conf) == jobKey(focused) {
		t.Fatalf("a focused run keyed as the whole suite: %q", jobKey(conf))
	}
	times := loadSuiteTimes()
	if got := times.left([]job{conf, chaos}); !strings.Contains(got, "unknown") {
		t.Errorf("nothing measured: %q", got)
	}
	times.record(conf, 13*time.Minute)
	if got := times.left([]job{conf, chaos}); !strings.Contains(got, "about 13 min left") || !strings.Contains(got, "1 suite(s) never measured") {
		t.Errorf("one of two measured: %q", got)
	}
	times.record(chaos, 11*time.Minute+40*time.Second)
	again := loadSuiteTimes() // as the next run reads them
	if got := again.left([]job{conf, chaos}); !strings.Contains(got, "about 25 min left in this stream") {
		t.Errorf("both measured, read back: %q", got)
	}
	if got := again.left([]job{focused}); !strings.Contains(got, "unknown") {
		t.Errorf("a focused run has no time of its own: %q", got)
	}
}
