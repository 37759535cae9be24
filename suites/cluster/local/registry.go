package local

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// ownerFile in a state directory holds the pid of the process that made it.
const ownerFile = "owner.pid"

var (
	liveMu sync.Mutex
	live   = map[*Cluster]struct{}{}
)

func register(c *Cluster) {
	liveMu.Lock()
	defer liveMu.Unlock()
	live[c] = struct{}{}
}

func unregister(c *Cluster) {
	liveMu.Lock()
	defer liveMu.Unlock()
	delete(live, c)
}

// StopAll stops every cluster this process started and has not stopped yet.
func StopAll() error {
	liveMu.Lock()
	var cs []*Cluster
	for c := range live {
		cs = append(cs, c)
	}
	liveMu.Unlock()
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Stop())
	}
	return errors.Join(errs...)
}

// StopAllOnSignal makes SIGINT and SIGTERM stop every live cluster and then
// exit the program with 130 / 143. Programs that own their signal handling
// (Ginkgo suites, which run their cleanup on interrupt) should not call it.
// Children die with the process in any case (PDEATHSIG); this also removes
// their state directories.
func StopAllOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-ch
		fmt.Fprintf(os.Stderr, "\n%s: stopping local clusters\n", sig)
		_ = StopAll()
		code := 130
		if sig == syscall.SIGTERM {
			code = 143
		}
		os.Exit(code)
	}()
}

// sweepStale removes state directories left by processes that died without
// stopping their cluster (SIGKILL, power loss). Their children are already
// gone: PDEATHSIG killed them with their parent.
func sweepStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "jobconform-*"))
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(d)
		}
	}
}
