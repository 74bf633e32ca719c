package apisnap

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseDecl(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		ident      string // "" when the line does not parse
		key        string // "": the line itself
	}{
		{name: "a constant: its value is not part of the key", line: `const Timeout time.Duration = 90000000000 (1m30s)`, ident: "Timeout", key: "const Timeout time.Duration"},
		{name: "a string constant with = inside", line: `const Sep untyped string = " = "`, ident: "Sep", key: "const Sep untyped string"},
		{name: "a variable", line: "var ErrX error", ident: "ErrX"},
		{name: "a generic function", line: "func Keys[K comparable, V any](map[K]V) []K", ident: "Keys"},
		{name: "a struct", line: "type Config struct", ident: "Config"},
		{name: "a field", line: "type Config struct, Timeout int", ident: "Config.Timeout"},
		{name: "an embedded field from another package", line: "type Config struct, embedded *sync.Mutex", ident: "Config.Mutex"},
		{name: "an embedded generic field", line: "type Config struct, embedded example.com/x/ring.Ring[example.com/y.Key]", ident: "Config.Ring"},
		{name: "a generic type's field", line: "type Ring[T any, K comparable] struct, Keys []T", ident: "Ring.Keys"},
		{name: "an interface's method list: its key is the kind only", line: "type Source interface { Close, Get }", ident: "Source", key: "type Source interface"},
		{name: "an empty interface", line: "type Empty interface {}", ident: "Empty", key: "type Empty interface"},
		{name: "an interface's method", line: "type Source interface, Get(string) ([]byte, error)", ident: "Source.Get"},
		{name: "a constraint", line: "type Number interface{~int | ~int64}", ident: "Number"},
		{name: "an alias", line: "type Alias = Ring[int]", ident: "Alias"},
		{name: "another type", line: "type Hook func(Outcome)", ident: "Hook"},
		{name: "a method of a pointer", line: "method (*Ring[T]) Add(T)", ident: "Ring.Add"},
		{name: "a method of a value", line: "method (Outcome) String() string", ident: "Outcome.String"},
		{name: "not a line of Lines", line: "package jwks"},
		{name: "a method without receiver", line: "method Add(T)"},
		{name: "a field without name", line: "type Config struct, "},
		{name: "empty", line: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := parseDecl(tc.line)
			if tc.ident == "" {
				assert.False(t, ok)
				return
			}
			assert.True(t, ok)
			assert.Equal(t, tc.ident, d.ident())
			want := tc.key
			if want == "" {
				want = tc.line
			}
			assert.Equal(t, want, d.key)
		})
	}
}

func TestSatisfied(t *testing.T) {
	for _, tc := range []struct {
		name string
		old  string
		now  []string
		want bool
	}{
		{name: "the same line", old: "var ErrX error", now: []string{"var ErrX error"}, want: true},
		{name: "a constant's new value", old: "const Max untyped int = 10", now: []string{"const Max untyped int = 20"}, want: true},
		{name: "a constant's new type", old: "const Max untyped int = 10", now: []string{"const Max int = 10"}},
		{name: "an interface with a method more", old: "type S interface { A }", now: []string{"type S interface { A, B }"}, want: true},
		{name: "an interface that became a struct", old: "type S interface {}", now: []string{"type S struct"}},
		{name: "a pointer's method a value has now", old: "method (*T) M()", now: []string{"method (T) M()"}, want: true},
		{name: "a value's method only a pointer has now", old: "method (T) M()", now: []string{"method (*T) M()"}},
		{name: "a changed signature", old: "func F(int)", now: []string{"func F(int, int)"}},
		{name: "an unreadable line, there", old: "package p", now: []string{"package p"}, want: true},
		{name: "an unreadable line, gone", old: "package p", now: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, satisfied(tc.old, keys(tc.now)))
		})
	}
}

func TestParseName(t *testing.T) {
	for _, tc := range []struct {
		span string
		want name
		ok   bool
	}{
		{span: "jwks.Parse", want: name{pkg: "jwks", ident: "Parse"}, ok: true},
		{span: "extsigner.Ring.Update", want: name{pkg: "extsigner", ident: "Ring.Update"}, ok: true},
		{span: "*oidc.Verifier", want: name{pkg: "oidc", ident: "Verifier"}, ok: true},
		{span: "extsigner.Listen(ctx, cfg)", want: name{pkg: "extsigner", ident: "Listen"}, ok: true},
		{span: "rotation.Schedule[K]", want: name{pkg: "rotation", ident: "Schedule"}, ok: true},
		{span: "github.com/ksa-go/ksa/oidc/oidctest.Issuer", want: name{pkg: "github.com/ksa-go/ksa/oidc/oidctest", ident: "Issuer"}, ok: true},
		{span: "github.com/ksa-go/ksa/podcert/podcertctl", want: name{pkg: "github.com/ksa-go/ksa/podcert/podcertctl"}, ok: true},
		{span: "gopkg.in/yaml.v3.Node", want: name{pkg: "gopkg.in/yaml.v3", ident: "Node"}, ok: true},
		{span: "keystore/pkcs11", want: name{pkg: "keystore/pkcs11"}, ok: true},
		{span: "crypto/x509.Certificate.Verify", want: name{pkg: "crypto/x509", ident: "Certificate.Verify"}, ok: true},
		{span: "Ref.String"}, // no package
		{span: "Parse"},      // no package
		{span: "jwks"},       // a bare word
		{span: "jwks.parse"}, // unexported
		{span: "jwks.A.B.C"}, // too deep
		{span: "go test ./internal/apisnap -update"},
		{span: "./internal/apisnap"},
		{span: "FILE.lock"},
		{span: "--to"},
		{span: ""},
	} {
		t.Run(tc.span, func(t *testing.T) {
			n, ok := parseName(tc.span)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, n)
		})
	}
}

func TestFilePackage(t *testing.T) {
	for _, tc := range []struct {
		file, short, path string
	}{
		{file: "api/ksa.txt", short: "ksa", path: "github.com/ksa-go/ksa"},
		{file: "api/jwks.txt", short: "jwks", path: "github.com/ksa-go/ksa/jwks"},
		{file: "api/oidc/oidctest.txt", short: "oidctest", path: "github.com/ksa-go/ksa/oidc/oidctest"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			short, path := filePackage("github.com/ksa-go/ksa", tc.file)
			assert.Equal(t, tc.short, short)
			assert.Equal(t, tc.path, path)
		})
	}
}
