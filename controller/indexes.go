package controller

import (
	"sort"
	"strconv"
	"strings"
)

// indexSet is a set of completion indexes kept sorted, rendered the way
// status.completedIndexes and status.failedIndexes spell it: "1,3-5,7,8" —
// runs of three or more as a range, a pair as two numbers.
type indexSet []int

// parseIndexes reads "1,3-5,7", keeping indexes below limit and skipping
// malformed parts (the apiserver validates what is written).
func parseIndexes(s string, limit int) indexSet {
	var out indexSet
	if s == "" {
		return out
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		for i := a; i <= b && i < limit; i++ {
			out = append(out, i)
		}
	}
	return out.with()
}

// with returns the union of s and more, sorted and without duplicates.
func (s indexSet) with(more ...int) indexSet {
	all := append(append(indexSet(nil), s...), more...)
	sort.Ints(all)
	out := all[:0]
	for i, v := range all {
		if i == 0 || v != all[i-1] {
			out = append(out, v)
		}
	}
	return out
}

func (s indexSet) has(i int) bool {
	j := sort.SearchInts(s, i)
	return j < len(s) && s[j] == i
}

func (s indexSet) String() string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(s[i]))
		switch {
		case j == i+1:
			b.WriteByte(',')
			b.WriteString(strconv.Itoa(s[j]))
		case j > i+1:
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(s[j]))
		}
		i = j + 1
	}
	return b.String()
}
