// Command funclen fails when a function of the given trees is longer than
// a limit: hack/verify.sh keeps suites/ and cmd/ readable with it.
//
//	go run ./hack/funclen -max 80 suites cmd
//
// A function's length runs from its func line to its closing brace, the
// function literals inside it included; tests are not counted.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	limit := flag.Int("max", 80, "the most lines a function may have")
	flag.Parse()
	long, err := longFunctions(*limit, flag.Args()...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(2)
	}
	for _, l := range long {
		fmt.Println(l)
	}
	if len(long) > 0 {
		os.Exit(1)
	}
}

// longFunctions lists "file:line name: N lines" for every function of the
// non-test Go files under roots longer than limit lines.
func longFunctions(limit int, roots ...string) ([]string, error) {
	fset := token.NewFileSet()
	var long []string
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, decl := range f.Decls {
				fd, ok := decl.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				from, to := fset.Position(fd.Pos()), fset.Position(fd.End())
				if n := to.Line - from.Line + 1; n > limit {
					long = append(long, fmt.Sprintf("%s:%d %s: %d lines (at most %d)", path, from.Line, fd.Name.Name, n, limit))
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return long, nil
}
