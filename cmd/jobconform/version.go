package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/jobconform/jobconform/internal/buildinfo"
)

// version is jobconform version: which build this is (module version,
// commit, Go, platform), as a line or as JSON (-o json).
func version(args []string) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	out := fs.String("o", "text", "output: text (one line) or json")
	if err := parseFlags(fs, args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("version takes no arguments (got %q)", fs.Args())}
	}
	i := buildinfo.Read()
	switch *out {
	case "text":
		fmt.Println(i)
	case "json":
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(i)
	default:
		return usageError{fmt.Errorf("-o %q: use text or json", *out)}
	}
	return nil
}

// announced are the commands that print the build first: those whose
// output a person keeps (a run's log, a bug report).
var announced = map[string]bool{"run": true, "explore": true, "test": true, "mutate": true, "soak": true, "matrix": true, "bench": true}
