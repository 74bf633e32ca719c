package ksa_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRootDocListsEveryPackage: the package comment of ksa lists every
// package of the module (internal ones aside) and the command, each in a
// list item of its own ("  - path: ..." or "  - path (...): ...").
func TestRootDocListsEveryPackage(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	items := map[string]bool{}
	for line := range strings.Lines(f.Doc.Text()) {
		item, ok := strings.CutPrefix(line, "  - ")
		if !ok {
			continue
		}
		path, _, _ := strings.Cut(item, ":")
		path, _, _ = strings.Cut(path, " ")
		items[path] = true
	}

	want := []string{"ksa", "cmd/ksa"}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || path == "." {
			return err
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil || d.Name() == "internal" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		files, err := filepath.Glob(filepath.Join(path, "*.go"))
		if err != nil {
			return err
		}
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") {
				want = append(want, filepath.ToSlash(path))
				break
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, len(want), 15)
	for _, p := range want {
		assert.True(t, items[p], "the package comment of ksa (doc.go) lists no %s", p)
	}
	for p := range items {
		assert.Contains(t, want, p, "doc.go lists %s, which is not a package of the module", p)
	}
}
