package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/ginkgo/command"
	ginkgorun "github.com/onsi/ginkgo/v2/ginkgo/run"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/jobconform/jobconform/internal/options"
)

// mergeReports writes the suites' Ginkgo JSON reports (each a list of suite
// reports) as one list into path.
func mergeReports(path string, parts []string) error {
	var all []json.RawMessage
	for _, part := range parts {
		data, err := os.ReadFile(part)
		if err != nil {
			return err
		}
		var suites []json.RawMessage
		if err := json.Unmarshal(data, &suites); err != nil {
			return fmt.Errorf("%s: %w", part, err)
		}
		all = append(all, suites...)
	}
	data, err := json.Marshal(all)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// runGinkgo runs the Ginkgo CLI's run command in this process and returns its
// exit code.
func runGinkgo(args []string) (code int) {
	prog := command.Program{
		Name:           "ginkgo",
		DefaultCommand: ginkgorun.BuildRunCommand(),
		Exiter:         func(c int) { code = c },
	}
	prog.RunAndExit(append([]string{"ginkgo"}, args...))
	return code
}

// tail copies the lines appended to path to w until stopped: the set-up's
// progress, which Ginkgo shows only at the end otherwise.
func tail(path string, w io.Writer, prefix string) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		var offset int64
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			offset = copyLines(path, offset, w, prefix)
			select {
			case <-done:
				copyLines(path, offset, w, prefix)
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// copyLines writes the complete lines of path after offset, and returns the
// offset after the last one.
func copyLines(path string, offset int64, w io.Writer, prefix string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return offset
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return offset
	}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return offset // an incomplete line waits for its end
		}
		offset += int64(len(line))
		fmt.Fprint(w, prefix+line)
	}
}

// badInput reads a Ginkgo JSON report for a set-up that failed on the user's
// input (options.BadInputPrefix), and returns its message.
func badInput(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var suites []types.Report
	if err := json.Unmarshal(data, &suites); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	for _, r := range suites {
		for _, sr := range r.SpecReports {
			if sr.State.Is(types.SpecStateFailureStates) && strings.Contains(sr.Failure.Message, options.BadInputPrefix) {
				msg := sr.Failure.Message[strings.Index(sr.Failure.Message, options.BadInputPrefix)+len(options.BadInputPrefix):]
				return msg, nil
			}
		}
	}
	return "", nil
}

// selectedNone tells whether the Ginkgo report at path says its run selected
// no spec at all: jobconform plans a job only for specs its filters select,
// so a job that runs none means Ginkgo read the filters otherwise, and a
// green job that judged nothing must not pass for a verdict.
func selectedNone(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var suites []types.Report
	if json.Unmarshal(data, &suites) != nil || len(suites) == 0 {
		return false
	}
	for _, r := range suites {
		if r.PreRunStats.SpecsThatWillRun > 0 {
			return false
		}
	}
	return true
}
