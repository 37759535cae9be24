package invariants

import (
	"compress/gzip"
	"flag"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/jobconform/jobconform/internal/timeline"
)

// A recording the scale suite kept (recording-*.jsonl.gz, a failed spec's
// whole recording), judged again by the invariants of this checkout:
//
//	go test ./scenarios/invariants -run TestJudgeRecording -args \
//	    -recording F -finalizer batch.kubernetes.io/job-tracking -builtin
var (
	recordingFile = flag.String("recording", "", "a recording (JSON lines, gzipped or not) to judge in TestJudgeRecording")
	recordingFin  = flag.String("finalizer", "batch.kubernetes.io/job-tracking", "the tracking finalizer of the controller the recording judged")
	recordingJob  = flag.String("job", "job", "the name of the Job the recording judged")
	recordingVer  = flag.String("k8s-version", "", "the release the recording ran on")
	recordingBI   = flag.Bool("builtin", false, "the recording judged the built-in controller")
)

func TestJudgeRecording(t *testing.T) {
	if *recordingFile == "" {
		t.Skip("no -recording given")
	}
	f, err := os.Open(*recordingFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(*recordingFile, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	tl, err := timeline.ReadTimeline(r)
	if err != nil {
		t.Fatal(err)
	}
	ctx := Context{Job: *recordingJob, Finalizer: *recordingFin, Version: *recordingVer, BuiltIn: *recordingBI}
	for _, res := range CheckAll(ctx, tl) {
		for _, v := range res.Violations {
			t.Errorf("%s", v)
		}
	}
	t.Logf("%d entries judged", len(tl))
}
