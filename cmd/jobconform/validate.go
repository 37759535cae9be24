package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/jobconform/jobconform/scenarios"
)

// validate checks scenario files (or the *.yaml of directories) without a
// cluster: one line per file, the first thing wrong in it or what it holds
// (-o json: the same as JSON; -o github: GitHub Actions annotations on
// the files that are wrong, and the lines).
func validate(args []string) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	format := fs.String("o", "text", "output: text, json, or github (workflow annotations on the files that are wrong)")
	if err := parseFlags(fs, args); err != nil {
		return usageError{err}
	}
	if *format != "text" && *format != "json" && *format != "github" {
		return usageError{fmt.Errorf("-o %q: use text, json or github", *format)}
	}
	if fs.NArg() == 0 {
		return usageError{errors.New("validate: give scenario files or directories")}
	}
	var files []string
	for _, a := range fs.Args() {
		info, err := os.Stat(a)
		if err != nil {
			files = append(files, a) // reported below
			continue
		}
		if !info.IsDir() {
			files = append(files, a)
			continue
		}
		found, _ := filepath.Glob(filepath.Join(a, "*.yaml"))
		yml, _ := filepath.Glob(filepath.Join(a, "*.yml"))
		found = append(found, yml...)
		if len(found) == 0 {
			fmt.Printf("%s: no scenario files (*.yaml, *.yml) in this directory\n", a)
			files = append(files, "")
			continue
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	bad, names := 0, map[string]string{}
	var results []validated
	for _, f := range files {
		if f == "" {
			bad++
			continue
		}
		got, err := validateFile(f, names)
		v := validated{File: f, Scenarios: got}
		if err != nil {
			bad++
			v.Error = err.Error()
		}
		results = append(results, v)
	}
	if err := printValidated(os.Stdout, *format, results); err != nil {
		return err
	}
	if bad > 0 {
		return usageError{fmt.Errorf("%d of %d files are not valid scenarios (the scenario format: jobconform schema)", bad, len(files))}
	}
	return nil
}

// validateFile parses every document of one file; names tracks the scenario
// names seen so far (a run refuses one name twice).
func validateFile(path string, names map[string]string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	all, errs := scenarios.ParseFile(data, path, names)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	if len(all) == 0 {
		return nil, errors.New("no scenario in this file")
	}
	var got []string
	for _, s := range all {
		suite := "conformance"
		if s.HasChaos() {
			suite = "chaos"
		}
		got = append(got, s.Name+" ("+suite+")")
	}
	return got, nil
}

// validated is one file's verdict.
type validated struct {
	File      string   `json:"file"`
	Scenarios []string `json:"scenarios,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// printValidated writes the files' verdicts as format says.
func printValidated(w io.Writer, format string, results []validated) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	case "github":
		for _, v := range results {
			if v.Error == "" {
				fmt.Fprintf(w, "%s: ok: %s\n", v.File, strings.Join(v.Scenarios, ", "))
				continue
			}
			line := 0
			if m := lineOf.FindStringSubmatch(v.Error); m != nil {
				line, _ = strconv.Atoi(m[1])
			}
			ghError(w, v.File, line, "not a valid jobconform scenario", v.Error)
		}
		return nil
	}
	for _, v := range results {
		if v.Error != "" {
			fmt.Fprintf(w, "%s: %s\n", v.File, v.Error)
		} else {
			fmt.Fprintf(w, "%s: ok: %s\n", v.File, strings.Join(v.Scenarios, ", "))
		}
	}
	return nil
}
