package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLongFunctions(t *testing.T) {
	dir := t.TempDir()
	body := "package p\n\nfunc short() {\n}\n\nfunc long() {\n" + strings.Repeat("\t_ = 1\n", 5) + "}\n"
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	// A test file is not counted.
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte(strings.Replace(body, "long()", "longTest()", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	long, err := longFunctions(6, dir)
	if err != nil || len(long) != 1 || !strings.Contains(long[0], "p.go:6 long: 7 lines (at most 6)") {
		t.Fatalf("longFunctions = %q, %v", long, err)
	}
	if long, err := longFunctions(7, dir); err != nil || len(long) != 0 {
		t.Fatalf("at most 7: %q, %v", long, err)
	}
}
