package apisnap_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/apisnap"
)

func TestDeprecations(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want map[string]string
	}{
		{name: "none",
			src:  "// Package p.\npackage p\n\n// F does.\nfunc F() {}\n",
			want: map[string]string{}},
		{name: "a function, a method, a type: the paragraph, its lines joined",
			src: `package p

// F does.
//
// Deprecated: Use [G]
// instead.
func F() {}

// T is.
//
// Deprecated: Use [U].
type T = U

type U struct{}

// M does.
//
// Deprecated: Use [U.N].
func (*U) M() {}

// m is unexported.
//
// Deprecated: Use [U.N].
func (*U) m() {}
`,
			want: map[string]string{"F": "Deprecated: Use [G] instead.", "T": "Deprecated: Use [U].", "U.M": "Deprecated: Use [U.N]."}},
		{name: "fields, embedded fields and interface methods",
			src: `package p

import "sync"

type C struct {
	// Deprecated: Use [C.B].
	A, B int
	// Deprecated: Embed nothing; use [C.B].
	*sync.Mutex
	// Deprecated: Use [C.B].
	hidden int
}

type I interface {
	// Deprecated: Use [I.N].
	M()
	N()
}
`,
			want: map[string]string{"C.A": "Deprecated: Use [C.B].", "C.B": "Deprecated: Use [C.B].", "C.Mutex": "Deprecated: Embed nothing; use [C.B].", "I.M": "Deprecated: Use [I.N]."}},
		{name: "a group's doc comment, unless the spec has its own; the package's",
			src: `// Package p is gone.
//
// Deprecated: Use [example.com/q].
package p

// Deprecated: Use [Z].
const (
	X = 1
	// Y is current.
	Y = 2
)

const Z = 3
`,
			want: map[string]string{"": "Deprecated: Use [example.com/q].", "X": "Deprecated: Use [Z]."}},
		{name: "only a paragraph that starts with Deprecated:",
			src: `package p

// F is not Deprecated: it says so mid-sentence.
func F() {}
`,
			want: map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parser.ParseFile(token.NewFileSet(), "p.go", tc.src, parser.ParseComments)
			require.NoError(t, err)
			assert.Equal(t, tc.want, apisnap.Deprecations([]*ast.File{f}))
		})
	}
}

func TestRelease(t *testing.T) {
	r := apisnap.Release{Version: "v0.1.0", API: apisnap.API{
		"api/ksa.txt":           {"func ParseUsername(string) (ServiceAccount, error)"},
		"api/oidc/oidctest.txt": {"func Start() *Issuer", "type Issuer struct"},
		"api/oidc.txt":          {"type Verifier struct"},
	}}
	text := r.Format("github.com/ksa-go/ksa")
	assert.Contains(t, text, "# The exported API of github.com/ksa-go/ksa v0.1.0, its last release.\n")
	assert.Contains(t, text, "version v0.1.0\nksa: func ParseUsername(string) (ServiceAccount, error)\noidc: type Verifier struct\noidc/oidctest: func Start() *Issuer\n")
	back, err := apisnap.ParseRelease(text)
	require.NoError(t, err)
	assert.Equal(t, r, back)

	for _, tc := range []struct {
		name, text string
	}{
		{name: "no version", text: "# comment\n"},
		{name: "a version without v", text: "version 0.1.0\n"},
		{name: "a line before the version", text: "jwks: func F()\nversion v0.1.0\n"},
		{name: "a line without its package", text: "version v0.1.0\nfunc F()\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := apisnap.ParseRelease(tc.text)
			assert.Error(t, err)
		})
	}
}
