package ksa_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	// markdownFile is a Markdown file named in a comment.
	markdownFile = regexp.MustCompile(`[\w./-]*\w\.md\b`)
	// fileLine is a Go file cited by line: its name, a colon, a number.
	fileLine = regexp.MustCompile(`\w\.go:\d`)
)

// TestCommentsCiteNoOutsideFiles: the comments of every Go file of the
// repository (all its modules) say facts, or name packages, rather than
// cite files a reader of the repository does not have: no Markdown file
// but the repository's own, no section sign but an RFC's, no Go file by
// line.
func TestCommentsCiteNoOutsideFiles(t *testing.T) {
	own := map[string]bool{}
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata"):
			return filepath.SkipDir
		case strings.HasSuffix(path, ".md"):
			own[filepath.Base(path)] = true
		case strings.HasSuffix(path, ".go"):
			files = append(files, path)
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		src, err := os.ReadFile(path)
		require.NoError(t, err)
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		require.NoError(t, err)
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				for i, line := range strings.Split(c.Text, "\n") {
					at := fset.Position(c.Pos())
					where := path + ":" + strconv.Itoa(at.Line+i)
					for _, md := range markdownFile.FindAllString(line, -1) {
						assert.True(t, own[filepath.Base(md)] && !strings.Contains(md, "reference/"), "%s: cites %s, which is not in the repository: say the fact\n%s", where, md, line)
					}
					if s, _, ok := strings.Cut(line, "§"); ok {
						assert.Contains(t, s, "RFC ", "%s: cites a section of a document outside the repository: say the fact\n%s", where, line)
					}
					assert.NotRegexp(t, fileLine, line, "%s: cites a file by line: name the package, or say the fact", where)
				}
			}
		}
	}
}
