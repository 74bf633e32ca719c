package apisnap_test

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/apisnap"
)

// check type-checks src as package example.com/p.
func check(t *testing.T, src string) *types.Package {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", "package p\n"+src, 0)
	require.NoError(t, err)
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check("example.com/p", fset, []*ast.File{f}, nil)
	require.NoError(t, err)
	return pkg
}

func TestLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want []string
	}{
		{name: "constants: type, exact value, durations also as time prints them",
			src: `import "time"
const Max = 1 << 10
const Name = "ksa"
const Half = 0.5
const Timeout time.Duration = 90 * time.Second
const hidden = 1`,
			want: []string{
				`const Half untyped float = 1/2`,
				`const Max untyped int = 1024`,
				`const Name untyped string = "ksa"`,
				`const Timeout time.Duration = 90000000000 (1m30s)`,
			}},
		{name: "variables and functions: types without names, variadic, generic",
			src: `import ("context"; "io")
var ErrX error
var Default = &T{}
type T struct{}
func Read(ctx context.Context, r io.Reader, opts ...string) (n int, err error) { return 0, nil }
func Keys[K comparable, V any](m map[K]V) []K { return nil }
func Hook(fn func(ctx context.Context) error) {}
func unexported() {}`,
			want: []string{
				`func Hook(func(ctx context.Context) error)`,
				`func Keys[K comparable, V any](map[K]V) []K`,
				`func Read(context.Context, io.Reader, ...string) (int, error)`,
				`type T struct`,
				`var Default *T`,
				`var ErrX error`,
			}},
		{name: "structs: exported and embedded fields, methods by receiver, promoted ones",
			src: `import "sync"
type Base struct{ ID string }
func (Base) Name() string { return "" }
func (*Base) SetName(string) {}
type Config struct {
	Base
	*sync.Mutex
	Timeout int
	secret  string
}
func (c Config) Valid() bool { return true }
func (c *Config) check() {}`,
			want: []string{
				`method (*Base) SetName(string)`,
				`method (*Config) SetName(string)`,
				`method (Base) Name() string`,
				`method (Config) Lock()`,
				`method (Config) Name() string`,
				`method (Config) TryLock() bool`,
				`method (Config) Unlock()`,
				`method (Config) Valid() bool`,
				`type Base struct`,
				`type Base struct, ID string`,
				`type Config struct`,
				`type Config struct, Timeout int`,
				`type Config struct, embedded *sync.Mutex`,
				`type Config struct, embedded Base`,
			}},
		{name: "interfaces: method list and each method, embedded ones included; constraints",
			src: `import "io"
type Source interface {
	io.Closer
	Get(name string) ([]byte, error)
}
type Empty interface{}
type Number interface{ ~int | ~int64 }`,
			want: []string{
				`type Empty interface {}`,
				`type Number interface{~int | ~int64}`,
				`type Source interface { Close, Get }`,
				`type Source interface, Close() error`,
				`type Source interface, Get(string) ([]byte, error)`,
			}},
		{name: "other types, aliases, generic types with methods; unexported types' methods left out",
			src: `type Outcome int
func (o Outcome) String() string { return "" }
type Hook func(Outcome)
type Ring[T any] struct{ Keys []T }
func (r *Ring[T]) Add(k T) {}
type Alias = Ring[int]
type inner struct{}
func (inner) Exported() {}`,
			want: []string{
				`method (*Ring[T]) Add(T)`,
				`method (Outcome) String() string`,
				`type Alias = Ring[int]`,
				`type Hook func(Outcome)`,
				`type Outcome int`,
				`type Ring[T any] struct`,
				`type Ring[T any] struct, Keys []T`,
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, apisnap.Lines(check(t, tc.src)))
		})
	}
}

func TestFile(t *testing.T) {
	for _, tc := range []struct {
		name string
		pkg  apisnap.Package
		want string
	}{
		{name: "the root package", pkg: apisnap.Package{Path: "github.com/ksa-go/ksa", Rel: "."}, want: "api/ksa.txt"},
		{name: "a package", pkg: apisnap.Package{Path: "github.com/ksa-go/ksa/jwks", Rel: "jwks"}, want: "api/jwks.txt"},
		{name: "a nested package", pkg: apisnap.Package{Path: "github.com/ksa-go/ksa/oidc/oidctest", Rel: "oidc/oidctest"}, want: "api/oidc/oidctest.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.pkg.File())
		})
	}
}
