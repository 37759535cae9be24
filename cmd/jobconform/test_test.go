package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// clusterPackages are exactly the packages (the suites' aside, which make
// test runs with -short) whose tests skip under -short: a package that
// starts clusters and is missing from the list would run beside others, one
// listed that starts none would wait its turn for nothing.
func TestClusterPackagesListed(t *testing.T) {
	root := filepath.Join("..", "..")
	var found []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "_artifacts") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		if strings.Contains(string(data), "testing.Short()") && !slices.Contains(found, rel) {
			found = append(found, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"suites/conformance", "suites/chaos", "suites/drill", "suites/scale"} {
		found = slices.DeleteFunc(found, func(p string) bool { return p == s })
	}
	slices.Sort(found)
	want := slices.Sorted(slices.Values(clusterPackages))
	if !slices.Equal(found, want) {
		t.Errorf("packages whose tests skip under -short: %v; clusterPackages: %v", found, want)
	}
}
