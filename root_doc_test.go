package ksa_test

import (
	"errors"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

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

// TestRootDocListsEveryCommand: the package comment's item on cmd/ksa
// names every command that "ksa --help" lists (the Commands: list of
// cmd/ksa/internal/cli/root.go, which that module's tests hold to the
// command tree): each word of a command's path, as a word of the item.
func TestRootDocListsEveryCommand(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	_, item, ok := strings.Cut(f.Doc.Text(), "\n  - cmd/ksa ")
	require.True(t, ok, "doc.go has no item on cmd/ksa")
	item, _, _ = strings.Cut(item, "\n  - ")
	split := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	}
	words := map[string]bool{}
	for _, w := range split(item) {
		words[w] = true
	}

	root, err := os.ReadFile(filepath.Join("cmd", "ksa", "internal", "cli", "root.go"))
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("cmd/ksa is a module of its own, absent from a download of this one")
	}
	require.NoError(t, err)
	_, list, ok := strings.Cut(string(root), "\nCommands:\n")
	require.True(t, ok, "cmd/ksa/internal/cli/root.go has no Commands: list")
	n := 0
	for line := range strings.Lines(list) {
		if strings.TrimSpace(line) == "" {
			break
		}
		if !strings.HasPrefix(line, "  ") || strings.HasPrefix(line, "   ") {
			continue
		}
		path, _, _ := strings.Cut(strings.TrimPrefix(line, "  "), "  ")
		for _, w := range split(path) {
			assert.True(t, words[w], "doc.go's item on cmd/ksa does not name %q (of %q)", w, path)
		}
		n++
	}
	assert.Greater(t, n, 20)
}
