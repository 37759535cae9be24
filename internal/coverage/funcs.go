package coverage

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
)

// fn is a function's extent in its file, as go tool cover -func finds it.
type fn struct {
	Name                                 string
	Line                                 int
	startLine, startCol, endLine, endCol int
}

// functions lists the functions of a Go source file, methods as Type.Name.
func functions(path string) ([]fn, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("read upstream's source: %w", err)
	}
	var out []fn
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		name := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			name = receiver(fd.Recv.List[0].Type) + "." + name
		}
		s, e := fset.Position(fd.Pos()), fset.Position(fd.End())
		out = append(out, fn{Name: name, Line: s.Line, startLine: s.Line, startCol: s.Column, endLine: e.Line, endCol: e.Column})
	}
	return out, nil
}

func receiver(t ast.Expr) string {
	switch t := t.(type) {
	case *ast.StarExpr:
		return receiver(t.X)
	case *ast.IndexExpr:
		return receiver(t.X)
	case *ast.IndexListExpr:
		return receiver(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}

// enclosing is the function of funcs holding line:col, or a package-level
// stand-in (a function literal in a variable's initializer).
func enclosing(funcs []fn, line, col int) fn {
	for _, f := range funcs {
		after := line > f.startLine || (line == f.startLine && col >= f.startCol)
		before := line < f.endLine || (line == f.endLine && col <= f.endCol)
		if after && before {
			return f
		}
	}
	return fn{Name: "(package level)"}
}
