package local

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ownerFile in a state directory holds the pid of the process that made it.
const ownerFile = "owner.pid"

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
