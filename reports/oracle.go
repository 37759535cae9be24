package reports

import (
	"cmp"
	"fmt"
	"sort"
	"strings"
)

// The differential verdict, never silent (issue #56): every run of a
// controller other than the built-in either was compared with the
// built-in's run of its scenario, or counts as not judged by the oracle,
// with the reason. A report that says nothing about a run reads as "not
// compared", never as "no difference".

// notComparedPrefix starts the harness's notes on a run it did not compare.
const notComparedPrefix = "not compared with the built-in: "

// OracleJudged tells whether the differential verdict applies to r (a
// controller other than the built-in ran the scenario), and if so whether
// r was compared, or why not.
func (r Run) OracleJudged() (applies, compared bool, why string) {
	applies, compared, why, _ = r.oracleJudged()
	return applies, compared, why
}

// oracleJudged is OracleJudged, and for a compared run why its delays were
// not compared ("": they were).
func (r Run) oracleJudged() (applies, compared bool, why, untimed string) {
	if r.Control() || r.Controller == "" || r.Controller == "builtin" || r.Verdict == "skip" {
		return false, false, "", ""
	}
	switch {
	case r.Oracle != nil && (r.Oracle.Compared || len(r.Oracle.Differences) > 0): // Differences alone: a report from before Compared was written
		untimed := ""
		if !r.Oracle.Timed {
			untimed = cmp.Or(r.Oracle.Untimed, "not said (a report from before timing)")
		}
		return true, true, "", untimed
	case r.Oracle != nil && r.Oracle.Note != "":
		return true, false, strings.TrimPrefix(r.Oracle.Note, notComparedPrefix), ""
	}
	return true, false, fmt.Sprintf("the %s suite compares nothing with the built-in", r.Suite), ""
}

// OracleTally is how one controller's runs (a column: controller, release,
// nodes) fared with the differential verdict.
type OracleTally struct {
	Column              string
	Compared, NotJudged int
	// Unaccepted counts the runs not judged for a reason AcceptedNotJudged
	// does not list: what --require-oracle fails.
	Unaccepted int
	// Reasons counts the runs not judged by why, the detail cut off
	// (the scenario's own words stay on its run).
	Reasons map[string]int
	// Timed counts the compared runs whose delays were compared too;
	// Untimed the others by why (oracle.md, Timing).
	Timed   int
	Untimed map[string]int
}

// String is "compared N (timed T; not U: reason ×k), not judged M
// (reason ×k; …)".
func (t OracleTally) String() string {
	s := fmt.Sprintf("compared %d", t.Compared)
	if t.Compared > 0 {
		s += fmt.Sprintf(" (timed %d", t.Timed)
		if n := t.Compared - t.Timed; n > 0 {
			s += fmt.Sprintf("; not %d: %s", n, counted(t.Untimed))
		}
		s += ")"
	}
	s += fmt.Sprintf(", not judged %d", t.NotJudged)
	if t.NotJudged == 0 {
		return s
	}
	s += " (" + counted(t.Reasons) + ")"
	switch t.Unaccepted {
	case 0:
		return s + ", every one for an accepted reason"
	case t.NotJudged:
		return s
	}
	return s + fmt.Sprintf(", %d for a reason not accepted", t.Unaccepted)
}

// counted is "reason ×k; …", sorted.
func counted(reasons map[string]int) string {
	var rs []string
	for why, n := range reasons {
		rs = append(rs, fmt.Sprintf("%s ×%d", why, n))
	}
	sort.Strings(rs)
	return strings.Join(rs, "; ")
}

// OracleTallies counts, per column, the runs the differential verdict
// compared and those it did not judge, in column order; columns it does not
// apply to (the built-in's) are left out.
func OracleTallies(runs []Run) []OracleTally {
	by := map[column]*OracleTally{}
	var order []column
	for _, r := range runs {
		applies, compared, why, untimed := r.oracleJudged()
		if !applies {
			continue
		}
		c := columnOf(r)
		t, ok := by[c]
		if !ok {
			t = &OracleTally{Column: c.String(), Reasons: map[string]int{}, Untimed: map[string]int{}}
			by[c] = t
			order = append(order, c)
		}
		if compared {
			t.Compared++
			if untimed == "" {
				t.Timed++
			} else {
				t.Untimed[reasonGroup(untimed)]++
			}
			continue
		}
		t.NotJudged++
		t.Reasons[reasonGroup(why)]++
		if !AcceptedNotJudged(why) {
			t.Unaccepted++
		}
	}
	sort.Slice(order, func(i, j int) bool { return order[i].String() < order[j].String() })
	out := make([]OracleTally, 0, len(order))
	for _, c := range order {
		out = append(out, *by[c])
	}
	return out
}

// reasonGroup is a reason without its particulars (a failure's text, an
// error's), so that like reasons count together.
func reasonGroup(why string) string {
	if i := strings.IndexAny(why, ":("); i > 0 {
		why = why[:i]
	}
	return strings.TrimSpace(why)
}

// NotJudgedByOracle counts the runs the differential verdict applies to and
// did not judge for a reason AcceptedNotJudged does not list
// (--require-oracle fails a run that has any).
func NotJudgedByOracle(runs []Run) int {
	n := 0
	for _, t := range OracleTallies(runs) {
		n += t.Unaccepted
	}
	return n
}

// AcceptedReasons are the only reasons a run may go not judged under
// --require-oracle (docs/oracle.md, "Never silent", lists them): where the
// built-in has, by design, no answer to compare with — never for want of
// a run, a store that could not be read, or a suite that compares nothing.
// Each is how the harness's note on the run starts (or, for the drill
// suite's, what it holds).
var AcceptedReasons = []string{
	// The scenario promises what the built-in does not do (a controller's
	// own feature): its steps and invariants judge the run.
	"the scenario is not for the built-in controller",
	// The chaos suite's check of itself: one seed, one action log.
	"the harness's own check",
	// The built-in's own two runs ended apart (explore.md).
	"racy",
	// The built-in's run does not apply there (its release lacks what the
	// scenario needs), so neither does a comparison.
	"its run was skipped",
	// A drill step whose built-in acts on every Job (its JobManagedBy gate
	// off): it is no oracle of a delegated Job there.
	"the built-in's JobManagedBy gate is off",
}

// AcceptedNotJudged tells whether why, a run's reason for not being
// judged, is one of AcceptedReasons.
func AcceptedNotJudged(why string) bool {
	why = strings.TrimPrefix(why, notComparedPrefix)
	for _, a := range AcceptedReasons {
		if strings.HasPrefix(why, a) || strings.Contains(why, " "+a+" ") {
			return true
		}
	}
	return false
}
