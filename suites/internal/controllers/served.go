package controllers

import (
	"os"
	"time"

	"github.com/jobconform/jobconform/internal/ports"
	"github.com/jobconform/jobconform/internal/process"
)

// served is what every controller this package runs holds while it runs:
// its process, the ports it serves on, and a directory of its own (its
// configuration, certificates), if any. stop gives them all back.
type served struct {
	proc  *process.Process
	claim *ports.Claim
	dir   string
}

// stopGrace is how long a controller has to exit after SIGTERM.
const stopGrace = 10 * time.Second

// stop ends the process gracefully, releases the ports and removes the
// directory; the error is the process's.
func (s *served) stop() error {
	var err error
	if s.proc != nil {
		err = s.proc.Stop(stopGrace)
	}
	s.claim.Release()
	s.claim = nil
	if s.dir != "" {
		os.RemoveAll(s.dir)
		s.dir = ""
	}
	return err
}
