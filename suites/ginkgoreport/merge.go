package ginkgoreport

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/onsi/ginkgo/v2/types"
)

// ReadReports reads a Ginkgo JSON report file: the reports of its suites.
func ReadReports(path string) ([]types.Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var suites []types.Report
	if err := json.Unmarshal(data, &suites); err != nil {
		return nil, fmt.Errorf("%s: not a Ginkgo JSON report: %w", path, err)
	}
	return suites, nil
}

// Merge joins the reports of shards of one run (--shard K/N): one report
// per suite, with every shard's specs, as if one run had run them all —
// started with the first shard, ended with the last, succeeded when all
// did. A spec in two shards is an error: they were not shards of one run
// (or one was given twice), and its verdicts would count twice.
func Merge(shards [][]types.Report) ([]types.Report, error) {
	var out []types.Report
	seen := map[string]int{} // suite + spec's full text → shard
	for i, shard := range shards {
		for _, rep := range shard {
			j := slices.IndexFunc(out, func(r types.Report) bool { return r.SuiteDescription == rep.SuiteDescription })
			if j < 0 {
				rep.SpecReports = slices.Clone(rep.SpecReports)
				out = append(out, rep)
				j = len(out) - 1
			} else {
				m := &out[j]
				m.SpecReports = append(m.SpecReports, rep.SpecReports...)
				m.SuiteSucceeded = m.SuiteSucceeded && rep.SuiteSucceeded
				if rep.StartTime.Before(m.StartTime) {
					m.StartTime = rep.StartTime
				}
				if rep.EndTime.After(m.EndTime) {
					m.EndTime = rep.EndTime
				}
				m.RunTime = m.EndTime.Sub(m.StartTime)
				m.PreRunStats.TotalSpecs = max(m.PreRunStats.TotalSpecs, rep.PreRunStats.TotalSpecs)
				m.PreRunStats.SpecsThatWillRun += rep.PreRunStats.SpecsThatWillRun
				m.SpecialSuiteFailureReasons = append(m.SpecialSuiteFailureReasons, rep.SpecialSuiteFailureReasons...)
			}
			for _, sr := range rep.SpecReports {
				if sr.LeafNodeType != types.NodeTypeIt || unselected(sr) {
					continue
				}
				key := rep.SuiteDescription + "\x00" + sr.FullText()
				if k, dup := seen[key]; dup && k != i {
					return nil, fmt.Errorf("%s %q ran in two of the reports merged (%d and %d): merge the shards of one run, each once", rep.SuiteDescription, sr.FullText(), k+1, i+1)
				}
				seen[key] = i
			}
		}
	}
	return out, nil
}

// EntryFirstRun is the report entry a folded rerun's spec carries: the
// verdict and first failure of the run it was made again for (Fold).
const EntryFirstRun = "jobconform.first-run"

// Fold puts a rerun's specs (jobconform run --rerun-failed) in place of
// the same specs of the first run, each keeping the first run's verdict
// and failure in an EntryFirstRun entry: both verdicts stay, the rerun's
// counts. A rerun's spec the first run lacks is an error.
func Fold(first, rerun []types.Report) ([]types.Report, error) {
	out := slices.Clone(first)
	for _, rep := range rerun {
		j := slices.IndexFunc(out, func(r types.Report) bool { return r.SuiteDescription == rep.SuiteDescription })
		if j < 0 {
			return nil, fmt.Errorf("the rerun's %s is not in the first run's reports", rep.SuiteDescription)
		}
		m := &out[j]
		m.SpecReports = slices.Clone(m.SpecReports)
		succeeded := true
		for _, sr := range rep.SpecReports {
			if sr.LeafNodeType != types.NodeTypeIt || unselected(sr) {
				continue
			}
			i := slices.IndexFunc(m.SpecReports, func(o types.SpecReport) bool {
				return o.LeafNodeType == types.NodeTypeIt && o.FullText() == sr.FullText()
			})
			if i < 0 {
				return nil, fmt.Errorf("%s %q: the rerun ran a spec the first run did not", rep.SuiteDescription, sr.FullText())
			}
			old := m.SpecReports[i]
			note := fmt.Sprintf("%s in the first run", verdict(old))
			if old.Failure.Message != "" {
				note += ": " + old.Failure.Message
			}
			sr.ReportEntries = append(slices.Clone(sr.ReportEntries), types.ReportEntry{Name: EntryFirstRun, Value: types.WrapEntryValue(note)})
			m.SpecReports[i] = sr
		}
		for _, sr := range m.SpecReports {
			if sr.LeafNodeType == types.NodeTypeIt && sr.State.Is(types.SpecStateFailureStates) {
				succeeded = false
			}
		}
		m.SuiteSucceeded = succeeded
	}
	return out, nil
}
