package scale

import (
	"bytes"
	"fmt"
	"sort"
	"time"

	"github.com/jobconform/jobconform/internal/apiaudit"
	"github.com/jobconform/jobconform/internal/kube"
	"github.com/jobconform/jobconform/internal/timeline"
	"github.com/jobconform/jobconform/reports"
)

// fromTimeline fills what a recording tells of a run: the pods created, the
// time from the Job's creation to its terminal condition (or its removal),
// and the most pods created within one second.
func fromTimeline(tl timeline.Timeline, f *reports.Figures) {
	var created, finished time.Time
	var creates []time.Time
	seen := map[string]bool{}
	for _, e := range tl {
		switch e.Kind {
		case "Job":
			if e.Type == timeline.Added && created.IsZero() {
				created = e.Time
			}
			if finished.IsZero() && (e.Type == timeline.Deleted || (e.Job() != nil && kube.JobFinished(e.Job()))) {
				finished = e.Time
			}
		case "Pod":
			if e.Type == timeline.Added && !seen[e.Name] {
				seen[e.Name] = true
				creates = append(creates, e.Time)
			}
		}
	}
	f.Created = len(creates)
	if !created.IsZero() && !finished.IsZero() {
		f.ToFinish = finished.Sub(created).Seconds()
	}
	f.PeakCreates = peakWithin(creates, time.Second)
}

// peakWithin is the most of ts that fall within any window of length w.
func peakWithin(ts []time.Time, w time.Duration) int {
	sorted := append([]time.Time(nil), ts...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Before(sorted[j]) })
	best, lo := 0, 0
	for hi := range sorted {
		for sorted[hi].Sub(sorted[lo]) >= w {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}

// fromAudit fills the API requests user made, read from an audit log's
// entries written from offset on (those of this run: specs run one at a
// time). Requests counts every request but the informers' watches: the
// apiserver cuts a pod watch whose reader falls behind a burst, and the
// informer opens it again from where it was (seen: a reference
// controller's 22 times in a 1,000-pod run, the idle slowed one's too,
// at the same instants), so their number is the apiserver's doing; and
// the built-in's informers are kube-controller-manager's shared ones,
// whose requests are not its job-controller user's, so counting the
// reference's would not compare like with like. They stay in ByVerb.
func fromAudit(log string, offset int64, user string, f *reports.Figures) error {
	data, err := apiaudit.Since(log, offset)
	if err != nil {
		return err
	}
	t, err := apiaudit.Read(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("the apiserver's audit log %s: %w", log, err)
	}
	mine := t.Requests.Of(user)
	f.Requests = mine.Sum(func(k apiaudit.Key) bool { return k.Verb != "watch" })
	f.ByVerb = map[string]int{}
	for k, n := range mine {
		f.ByVerb[k.Verb+" "+k.Resource] += n
	}
	f.StatusWrites = mine.Sum(func(k apiaudit.Key) bool {
		return k.Resource == "jobs/status" && (k.Verb == "update" || k.Verb == "patch")
	})
	f.Conflicts = t.Conflicts.Of(user).Total()
	f.Throttled = t.Throttled.Of(user).Sum(func(k apiaudit.Key) bool { return k.Verb != "watch" })
	return nil
}
