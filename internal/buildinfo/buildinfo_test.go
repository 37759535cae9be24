package buildinfo

import (
	"runtime"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	i := Info{Version: "v0.3.0", Commit: "04199a8289d39c51c3241daa72b64fde36859205", Modified: true, Go: "go1.26.8", Platform: "linux/amd64"}
	if got, want := i.String(), "jobconform v0.3.0, commit 04199a8289d3+ (modified), go1.26.8 linux/amd64"; got != want {
		t.Errorf("String: %q, want %q", got, want)
	}
	if got := i.Label(); got != "v0.3.0 04199a8289d3+" {
		t.Errorf("Label: %q", got)
	}
	if got := (Info{Version: "v0.3.0", Go: "go1.26.8", Platform: "linux/amd64"}).Label(); got != "v0.3.0" {
		t.Errorf("Label without a commit: %q", got)
	}
}

// A test binary knows its Go and platform; its module is the package's own.
func TestRead(t *testing.T) {
	i := Read()
	if i.Go != runtime.Version() || !strings.Contains(i.Platform, runtime.GOARCH) || i.Version == "" {
		t.Errorf("Read: %+v", i)
	}
}

// A release build's stamped version (make dist, action.yml) is the version,
// whatever the module's own says.
func TestStamped(t *testing.T) {
	defer func(old string) { stamped = old }(stamped)
	stamped = "v0.3.0"
	if i := read(); i.Version != "v0.3.0" {
		t.Errorf("version %q, want the stamped v0.3.0", i.Version)
	}
}
