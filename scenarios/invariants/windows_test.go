package invariants

import (
	"os"
	"regexp"
	"testing"
	"time"
)

// docs/checks.md states every window's value: the statement follows the code.
func TestWindowsAsDocumented(t *testing.T) {
	code := map[string]time.Duration{
		"CauseGrace":           CauseGrace,
		"ReplacementTolerance": ReplacementTolerance,
		"countSettleWindow":    countSettleWindow,
		"SettleWindow":         SettleWindow,
		"RestartGrace":         RestartGrace,
		"DeadlineActGrace":     DeadlineActGrace,
		"DeadlineLateBound":    DeadlineLateBound,
		"AdoptionGrace":        AdoptionGrace,
		"DeletionGrace":        DeletionGrace,
		"FirstPodsWithin":      FirstPodsWithin,
		"ReleaseWithin":        ReleaseWithin,
		"TerminalEventGrace":   TerminalEventGrace,
		"ReadySlack":           ReadySlack,
		"MirrorWithin":         MirrorWithin,
	}
	data, err := os.ReadFile("../../docs/checks.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile("(?m)^\\| `(\\w+)` \\| ([0-9][0-9a-z.]*)").FindAllSubmatch(data, -1)
	seen := map[string]bool{}
	for _, r := range rows {
		name, value := string(r[1]), string(r[2])
		want, ok := code[name]
		if !ok {
			t.Errorf("docs/checks.md states window %s, which the code does not have", name)
			continue
		}
		seen[name] = true
		if got, err := time.ParseDuration(value); err != nil || got != want {
			t.Errorf("docs/checks.md says %s is %s; the code has %s", name, value, want)
		}
	}
	for name := range code {
		if !seen[name] {
			t.Errorf("docs/checks.md does not state window %s", name)
		}
	}
}

// docs/checks.md's "Late by cause first" table states, for every upper
// bound, whether it proves lateness by the controller's acts: the statement
// follows Invariant.ClockOnly, and every Late invariant is in it.
func TestLateChecksAsDocumented(t *testing.T) {
	data, err := os.ReadFile("../../docs/checks.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile("(?m)^\\| `([a-z-]+)` \\| (yes|no) \\|").FindAllSubmatch(data, -1)
	stated := map[string]string{}
	for _, r := range rows {
		stated[string(r[1])] = string(r[2])
	}
	late := map[string]bool{}
	for _, inv := range All {
		if !inv.Late {
			if inv.ClockOnly != "" {
				t.Errorf("%s says why it is judged by the clock alone, but is no upper bound (Late)", inv.Name)
			}
			continue
		}
		late[inv.Name] = true
		want := "yes"
		if inv.ClockOnly != "" {
			want = "no"
		}
		if got := stated[inv.Name]; got != want {
			t.Errorf("docs/checks.md says %s is judged by cause first: %q; the code: %q", inv.Name, got, want)
		}
	}
	for name := range stated {
		if !late[name] {
			t.Errorf("docs/checks.md lists %s as an upper bound; the code has no such Late invariant", name)
		}
	}
}
