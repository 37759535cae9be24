package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The bash script completes the commands at the first word and a
// command's own flags after it, as bash itself runs it; zsh's is the same
// function; fish's lists the same flags; an unknown shell is bad input.
func TestCompletion(t *testing.T) {
	bin := buildJobconform(t)
	script, err := exec.Command(bin, "completion", "bash").Output()
	if err != nil {
		t.Fatal(err)
	}
	complete := func(words ...string) []string {
		t.Helper()
		prog := string(script) + "\nCOMP_WORDS=(" + strings.Join(words, " ") + ")\nCOMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n_jobconform\necho \"${COMPREPLY[@]}\"\n"
		out, err := exec.Command("bash", "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		return strings.Fields(string(out))
	}
	if got := complete("jobconform", "ex"); strings.Join(got, " ") != "explore" {
		t.Errorf("jobconform ex<TAB>: %v", got)
	}
	if got := complete("jobconform", "run", "--require"); strings.Join(got, " ") != "--require-oracle" {
		t.Errorf("jobconform run --require<TAB>: %v", got)
	}
	if got := complete("jobconform", "explore", "--see"); strings.Join(got, " ") != "--seed" {
		t.Errorf("jobconform explore --see<TAB>: %v (explore's own flag)", got)
	}
	if got := complete("jobconform", "version", "--see"); len(got) != 0 {
		t.Errorf("jobconform version --see<TAB>: %v (run's flag offered to version)", got)
	}
	if got := complete("jobconform", "reference-controller", "--kubeconf"); strings.Join(got, " ") != "--kubeconfig" {
		t.Errorf("jobconform reference-controller --kubeconf<TAB>: %v (its flags are printed to stderr)", got)
	}
	if zsh, err := exec.Command(bin, "completion", "zsh").Output(); err != nil || !strings.Contains(string(zsh), "bashcompinit") || !strings.Contains(string(zsh), string(script)) {
		t.Errorf("zsh: %v\n%s", err, zsh)
	}
	fish, err := exec.Command(bin, "completion", "fish").Output()
	if err != nil || !strings.Contains(string(fish), "complete -c jobconform -n '__fish_seen_subcommand_from run' -l require-oracle -d ") {
		t.Errorf("fish: %v\n%s", err, fish)
	}
	if out, code := exitCode(t, exec.Command(bin, "completion", "tcsh")); code != exitBadInput || !strings.Contains(out, "bash, zsh or fish") {
		t.Errorf("completion tcsh: exit %d\n%s", code, out)
	}
}
