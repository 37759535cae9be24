package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jobconform/jobconform/scenarios"
)

// validate checks scenario files (or the *.yaml of directories) without a
// cluster: one line per file, the first thing wrong in it or what it holds.
func validate(args []string) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return usageError{err}
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
	for _, f := range files {
		if f == "" {
			bad++
			continue
		}
		got, err := validateFile(f, names)
		if err != nil {
			bad++
			fmt.Printf("%s: %v\n", f, err)
			continue
		}
		fmt.Printf("%s: ok: %s\n", f, strings.Join(got, ", "))
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
