package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// maxFuncLines is the longest a function of the command may be, counted
// from its func line to its closing brace, without the lines of a
// command's help (the Long and Example strings of a literal).
const maxFuncLines = 60

// TestFunctionLength: no function of the module (tests aside) is longer
// than maxFuncLines: the command is wiring, its decisions the library's.
func TestFunctionLength(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if n := funcLines(fset, fn); n > maxFuncLines {
				t.Errorf("%s: %s is %d lines, more than %d: split it, or move its decisions into the library", fset.Position(fn.Pos()), fn.Name.Name, n, maxFuncLines)
			}
		}
		return nil
	})
	require.NoError(t, err)
}

// funcLines counts the lines of fn, less those of the help strings
// (Long:, Example:) of the literals in it.
func funcLines(fset *token.FileSet, fn *ast.FuncDecl) int {
	lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		if key, ok := kv.Key.(*ast.Ident); ok && (key.Name == "Long" || key.Name == "Example") {
			lines -= fset.Position(kv.End()).Line - fset.Position(kv.Pos()).Line
		}
		return true
	})
	return lines
}
