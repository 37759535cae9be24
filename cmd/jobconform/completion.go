package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"
)

// init gives the completion command its run: completion reads commands,
// which an initializer of commands may not refer back to.
func init() {
	commands[slices.IndexFunc(commands, func(c subcommand) bool { return c.name == "completion" })].run = completion
}

// completion prints a shell's completion script: jobconform's commands, and
// each command's flags as its -h lists them, read from this binary when
// the script is written (so the script matches the jobconform that wrote
// it: write it again after an upgrade). Words that are not flags complete
// as file names (scenario files, reports, directories).
func completion(ctx context.Context, args []string) error {
	if len(args) != 1 || (args[0] != "bash" && args[0] != "zsh" && args[0] != "fish") {
		return usageError{fmt.Errorf("completion takes one shell: bash, zsh or fish (e.g. jobconform completion bash > /etc/bash_completion.d/jobconform)")}
	}
	self, err := os.Executable()
	if err != nil {
		return harnessError{fmt.Errorf("completion: where is this jobconform? %w", err)}
	}
	var cmds []completed
	for _, c := range commands {
		if c.hidden {
			continue
		}
		flags, err := flagsOf(ctx, self, c.name)
		if err != nil {
			return harnessError{err}
		}
		cmds = append(cmds, completed{name: c.name, summary: c.summary, flags: flags})
	}
	switch args[0] {
	case "bash":
		fmt.Print(bashCompletion(cmds))
	case "zsh":
		// zsh runs the bash function through its bashcompinit.
		fmt.Print("#compdef jobconform\nautoload -U +X bashcompinit && bashcompinit\n" + bashCompletion(cmds))
	case "fish":
		fmt.Print(fishCompletion(cmds))
	}
	return nil
}

// completed is a command as a completion script offers it.
type completed struct {
	name, summary string
	flags         []flagHelp
}

// flagHelp is one flag of a command's -h: its name and the first line of
// its usage.
type flagHelp struct{ name, usage string }

// helpFlag is a flag's line in a command's -h: "  --name VALUE" (printHelp),
// or "  -name type" (Go's flag.PrintDefaults).
var helpFlag = regexp.MustCompile(`^  --?([A-Za-z0-9][A-Za-z0-9_.-]*)`)

// flagsOf runs "jobconform name -h" and reads the flags it lists (the
// commands print them to stdout and exit before doing anything).
func flagsOf(ctx context.Context, self, name string) ([]flagHelp, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, name, "-h")
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, err := cmd.CombinedOutput() // -h: to stdout, or stderr for the controllers (klog's flags); exit 0, or 2
	if ctx.Err() != nil {
		return nil, fmt.Errorf("completion: %s %s -h did not answer in 30 s", self, name)
	}
	lines := strings.Split(string(out), "\n")
	var flags []flagHelp
	for i, l := range lines {
		m := helpFlag.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		usage := ""
		if i+1 < len(lines) && (strings.HasPrefix(lines[i+1], "    \t") || strings.HasPrefix(lines[i+1], "        ")) {
			usage = strings.TrimSpace(lines[i+1])
		} else if _, rest, ok := strings.Cut(l, "\t"); ok {
			usage = strings.TrimSpace(rest) // a bool flag's usage sits on its own line
		}
		flags = append(flags, flagHelp{name: m[1], usage: usage})
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) { // it did not run; a command with no flags exits 2 on -h
		return nil, fmt.Errorf("completion: %s %s -h: %w", self, name, err)
	}
	return flags, nil
}

// bashCompletion completes the command at the first word, then that
// command's flags (spelled --name, which Go's flag package takes as -name)
// at a word that starts with a dash, and file names elsewhere.
func bashCompletion(cmds []completed) string {
	var b strings.Builder
	b.WriteString("# jobconform completion bash: source it, or put it in /etc/bash_completion.d/jobconform\n")
	b.WriteString("_jobconform() {\n\tlocal cur=${COMP_WORDS[COMP_CWORD]} flags=\n")
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.name
	}
	fmt.Fprintf(&b, "\tif [[ $COMP_CWORD -eq 1 ]]; then\n\t\tCOMPREPLY=($(compgen -W %q -- \"$cur\"))\n\t\treturn\n\tfi\n", strings.Join(names, " "))
	b.WriteString("\tcase ${COMP_WORDS[1]} in\n")
	for _, c := range cmds {
		var fl []string
		for _, f := range c.flags {
			fl = append(fl, "--"+f.name)
		}
		fmt.Fprintf(&b, "\t%s) flags=%q ;;\n", c.name, strings.Join(fl, " "))
	}
	b.WriteString("\tesac\n")
	b.WriteString("\tif [[ $cur == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n\telse\n\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n\tfi\n}\n")
	b.WriteString("complete -o default -F _jobconform jobconform\n")
	return b.String()
}

// fishCompletion offers the commands with their summaries, then each
// command's flags with their usage.
func fishCompletion(cmds []completed) string {
	var b strings.Builder
	b.WriteString("# jobconform completion fish: put it in ~/.config/fish/completions/jobconform.fish\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "complete -c jobconform -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(firstClause(c.summary)))
	}
	for _, c := range cmds {
		for _, f := range c.flags {
			fmt.Fprintf(&b, "complete -c jobconform -n '__fish_seen_subcommand_from %s' -l %s -d %s\n", c.name, f.name, fishQuote(firstClause(f.usage)))
		}
	}
	return b.String()
}

// firstClause is s up to its first colon, semicolon or parenthesis: a
// description fits a line.
func firstClause(s string) string {
	if i := strings.IndexAny(s, ":;("); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}
