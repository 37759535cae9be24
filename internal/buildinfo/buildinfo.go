// Package buildinfo says which jobconform this is (issue #71): the module
// version, the commit it was built from and whether its tree had changes,
// and the Go that built it — from the binary's own build information, or,
// for a binary built without it (go run, -buildvcs=false), from the git
// checkout it runs in, said so. Every run prints it and every report
// keeps it, so a baseline or a bug report names the jobconform that made it.
package buildinfo

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// Module is jobconform's module path.
const Module = "github.com/jobconform/jobconform"

// Info is one build of jobconform.
type Info struct {
	// Version is the module version ("(devel)" for a build from a checkout).
	Version string `json:"version"`
	// Commit is the commit built ("" when unknown), Modified whether the
	// tree had changes beside it; FromCheckout that both were read from the
	// checkout's git, not from the binary.
	Commit       string `json:"commit,omitempty"`
	Modified     bool   `json:"modified,omitempty"`
	FromCheckout bool   `json:"fromCheckout,omitempty"`
	// Go is the Go release that built it, Platform where it runs.
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// String is the one line a run prints: "jobconform (devel), commit
// 04199a8289d3 (modified), go1.26.8 linux/amd64".
func (i Info) String() string {
	s := "jobconform " + i.Version
	if i.Commit != "" {
		s += ", commit " + i.Short()
		if i.Modified {
			s += " (modified)"
		}
		if i.FromCheckout {
			s += " (read from the checkout)"
		}
	}
	return s + ", " + i.Go + " " + i.Platform
}

// Short is the version and commit in a dozen characters, for a report's
// heading: "(devel) 04199a8289d3+", the + for changes beside the commit.
func (i Info) Short() string {
	c := i.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	if i.Modified {
		c += "+"
	}
	return c
}

// Label is Version, with the commit when there is one.
func (i Info) Label() string {
	if i.Commit == "" {
		return i.Version
	}
	return i.Version + " " + i.Short()
}

var (
	once sync.Once
	info Info
)

// stamped is the version a release build sets (go build -ldflags "-X
// github.com/jobconform/jobconform/internal/buildinfo.stamped=v0.3.0":
// make dist, action.yml), where the module's own version is not known:
// a build from a tree without git, such as an action's checkout.
var stamped string

// Read is this process's build, read once.
func Read() Info {
	once.Do(func() { info = read() })
	return info
}

func read() Info {
	i := Info{Version: "(unknown)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return i
	}
	if bi.Main.Version != "" {
		i.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Commit = s.Value
		case "vcs.modified":
			i.Modified = s.Value == "true"
		}
	}
	if i.Commit == "" && bi.Main.Path == Module {
		i.Commit, i.Modified, i.FromCheckout = checkout()
	}
	if stamped != "" {
		i.Version = stamped
	}
	return i
}

// checkout reads the commit of the jobconform checkout in the working
// directory (go run from it): nothing when the directory is not one.
func checkout() (commit string, modified, ok bool) {
	mod, err := os.ReadFile("go.mod")
	if err != nil || !bytes.HasPrefix(mod, []byte("module "+Module+"\n")) {
		return "", false, false
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false, false
	}
	status, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	return strings.TrimSpace(string(out)), err == nil && len(bytes.TrimSpace(status)) > 0, true
}
