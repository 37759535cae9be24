package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// A command's -h (issue #71): its synopsis, its own flags, then the suites'
// flags in groups, each spelled --name (Go's flag package takes -name and
// --name alike) with one default, then examples; to stdout.

// flagGroups are the groups of the suites' flags, in the order -h lists
// them. A flag no group names is the command's own, listed first
// (TestFlagGroups holds run's flags to these groups).
var flagGroups = []struct {
	title string
	names []string
}{
	{"Clusters", []string{"k8s-version", "provider", "kubeconfig", "context", "nodes", "binaries", "feature-gates", "unsupported-skew",
		"allow-node-disruption", "pod-image", "pause-image", "pod-host-network"}},
	{"Controllers under test", []string{"controllers", "reference-faults", "external-command", "external-managed-by", "external-finalizer", "kueue-version"}},
	{"What runs", []string{"suites", "focus", "label-filter", "shard", "scenarios", "builtin-scenarios", "builtin-at", "rerun-failed",
		"drills", "drill-path", "scale", "chaos-engine", "chaos-seed", "kubelet-conformance", "fail-fast", "procs", "cluster-procs", "timeout"}},
	{"The differential verdict (the built-in as oracle)", []string{"no-oracle", "oracle-twice", "oracle-from", "require-oracle"}},
	{"Output", []string{"artifacts", "baseline", "coverage", "no-color"}},
}

// helpExamples are command lines shown under a command's flags.
var helpExamples = map[string][]string{
	"run": {
		"jobconform run                                    # the built-in and the reference, every suite, v1.37.1 on kwok",
		"jobconform run --suites conformance --label-filter 'podReplacementPolicy || terminalConditions'",
		"jobconform run --kubeconfig ~/.kube/config --controllers external --external-managed-by example.com/mine",
		"jobconform run --rerun-failed _artifacts          # only what failed there",
	},
	"explore": {
		"jobconform explore --seed 7 --cases 200           # judge the reference on 200 generated Jobs",
		"jobconform explore --seed 7 --cases 50 --write-only --artifacts out   # write the cases, run nothing",
	},
	"list": {"jobconform list --suites conformance --label-filter suspend -o json"},
}

// synopses are the commands' usage lines and summaries, by name (filled in
// init: commands refers, through the commands' code, to printHelp).
var synopses = map[string]subcommand{}

func init() {
	for _, c := range commands {
		synopses[c.name] = subcommand{name: c.name, args: c.args, summary: c.summary}
	}
}

// printHelp writes fs's help for the command named fs.Name() to w.
func printHelp(w io.Writer, fs *flag.FlagSet) {
	name := fs.Name()
	if c, ok := synopses[name]; ok {
		fmt.Fprintf(w, "Usage: %s\n", strings.TrimSpace("jobconform "+c.name+" "+c.args))
		for _, line := range wrap(c.summary, 78) {
			fmt.Fprintf(w, "  %s\n", line)
		}
	} else {
		fmt.Fprintf(w, "Usage: jobconform %s [flags]\n", name)
	}
	grouped := map[string]bool{}
	for _, g := range flagGroups {
		for _, n := range g.names {
			grouped[n] = true
		}
	}
	var own []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if !grouped[f.Name] {
			own = append(own, f)
		}
	})
	if len(own) > 0 {
		title := "Flags"
		if len(own) < countFlags(fs) {
			title = name + "'s own flags"
		}
		printGroup(w, title, own)
	}
	for _, g := range flagGroups {
		var fl []*flag.Flag
		for _, n := range g.names {
			if f := fs.Lookup(n); f != nil {
				fl = append(fl, f)
			}
		}
		printGroup(w, g.title, fl)
	}
	if ex := helpExamples[name]; len(ex) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, e := range ex {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

func countFlags(fs *flag.FlagSet) int {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n
}

// valueNames name the values of the flags whose type is the harness's own
// (flag.UnquoteUsage calls them all "value"), as pflag names a type.
var valueNames = map[string]string{
	"k8s-version": "version", "builtin-at": "version", "binaries": "source", "feature-gates": "gates",
	"controllers": "names", "suites": "names", "drills": "names", "reference-faults": "mutants",
	"scenarios": "dirs", "chaos-seed": "seed",
}

// printGroup lists flags under title: "  --name VALUE", then the usage
// indented, with the default said once (not where the usage says it).
func printGroup(w io.Writer, title string, flags []*flag.Flag) {
	if len(flags) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s:\n", title)
	for _, f := range flags {
		value, usage := flag.UnquoteUsage(f)
		if v, ok := valueNames[f.Name]; ok && value == "value" {
			value = v
		}
		line := "  --" + f.Name
		if value != "" {
			line += " " + value
		}
		fmt.Fprintln(w, line)
		if !strings.Contains(usage, "(default") && !zeroDefault(f.DefValue) {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		for _, l := range wrap(usage, 72) {
			fmt.Fprintf(w, "        %s\n", l)
		}
	}
}

// zeroDefault tells whether a flag's default is its type's zero value,
// which goes unsaid.
func zeroDefault(v string) bool {
	return v == "" || v == "0" || v == "false" || v == "[]" || v == "0s"
}
