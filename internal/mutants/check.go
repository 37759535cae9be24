package mutants

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Checker type-checks mutants of the controller package against its
// dependencies' export data (compiled once by go list -export): a fraction
// of a second a mutant, where a go build of each would take seconds.
type Checker struct {
	src     string
	exports map[string]string // import path → export data file
}

// NewChecker prepares a Checker for controller/ at src (SourceDir).
func NewChecker(ctx context.Context, src string) (*Checker, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}", ".")
	cmd.Dir = src
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export in %s: %v\n%s", src, err, stderr.String())
	}
	c := &Checker{src: src, exports: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "="); ok && file != "" {
			c.exports[path] = file
		}
	}
	return c, sc.Err()
}

// Check applies the mutants and type-checks the controller package they
// make; an error names them and says what does not compile.
func (c *Checker) Check(ms ...Mutant) error {
	edited, err := Apply(c.src, ms...)
	if err != nil {
		return err
	}
	paths, err := filepath.Glob(filepath.Join(c.src, "*.go"))
	if err != nil {
		return err
	}
	files := map[string][]byte{}
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		if files[filepath.Base(path)], err = os.ReadFile(path); err != nil {
			return err
		}
	}
	for name, data := range edited {
		files[name] = data
	}
	var order []string
	for name := range files {
		order = append(order, name)
	}
	sort.Strings(order)
	fset := token.NewFileSet()
	var parsed []*ast.File
	for _, name := range order {
		f, err := parser.ParseFile(fset, filepath.Join(c.src, name), files[name], 0)
		if err != nil {
			return fmt.Errorf("mutant %s does not parse: %v", names(ms), err)
		}
		parsed = append(parsed, f)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := c.exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s (the mutant imports what controller/ does not)", path)
		}
		return os.Open(file)
	})
	var errs []string
	conf := types.Config{Importer: imp, Error: func(err error) { errs = append(errs, err.Error()) }}
	_, _ = conf.Check(ControllerPackage, fset, parsed, nil)
	if len(errs) > 0 {
		return fmt.Errorf("mutant %s does not compile (mend its edits in internal/mutants/catalog*.go):\n%s", names(ms), strings.Join(errs, "\n"))
	}
	return nil
}

func names0(ms []Mutant) string { return names(ms) }
