package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jobconform/jobconform/scenarios"
	"github.com/jobconform/jobconform/scenarios/catalog"
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
	var got []string
	docs := bytes.Split(data, []byte("\n---\n"))
	for i, doc := range docs {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		where := ""
		if len(docs) > 1 {
			where = fmt.Sprintf("document %d: ", i+1)
		}
		s, err := scenarios.Parse(doc)
		if err != nil {
			return nil, fmt.Errorf("%s%v", where, err)
		}
		if prev, dup := names[s.Name]; dup {
			return nil, fmt.Errorf("%sscenario name %q is also used in %s", where, s.Name, prev)
		}
		names[s.Name] = path
		suite := "conformance"
		if s.HasChaos() {
			suite = "chaos"
		}
		got = append(got, s.Name+" ("+suite+")")
	}
	if len(got) == 0 {
		return nil, errors.New("no scenario in this file")
	}
	return got, nil
}

// list prints the scenarios a run would use.
func list(args []string) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	var dirs stringsFlag
	fs.Var(&dirs, "scenarios", "directory of your own scenario files (repeatable)")
	builtin := fs.Bool("builtin-scenarios", true, "list jobconform's catalog too")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	set, err := catalog.Assemble(*builtin, dirs...)
	if err != nil {
		return usageError{err}
	}
	fmt.Printf("%-11s %-48s %-38s %-10s %s\n", "SUITE", "SCENARIO", "FEATURES", "RELEASES", "FILE")
	for _, part := range []struct {
		suite string
		all   []*scenarios.Scenario
	}{{"conformance", set.Conformance}, {"chaos", set.Chaos}} {
		for _, s := range part.all {
			versions := s.Versions
			if versions == "" {
				versions = "all"
			}
			if len(s.Controllers) > 0 {
				versions += " (" + strings.Join(s.Controllers, ",") + " only)"
			}
			fmt.Printf("%-11s %-48s %-38s %-10s %s\n", part.suite, s.Name, strings.Join(s.Features, ","), versions, s.File)
		}
	}
	fmt.Printf("%d conformance and %d chaos scenarios\n", len(set.Conformance), len(set.Chaos))
	return nil
}

// schema prints the JSON Schema of scenario files.
func schema(args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("schema takes no arguments (got %q)", args)}
	}
	data, err := scenarios.Schema()
	if err != nil {
		return err
	}
	fmt.Println(string(data))
	return nil
}
