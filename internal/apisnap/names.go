package apisnap

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// name is a Go name as the changelog writes one in a code span: an
// identifier after its package's name or import path ("jwks.Parse",
// "extsigner.Ring.Update", "github.com/ksa-go/ksa/oidc/oidctest.Issuer",
// "crypto.Signer"), or a package by its import path.
type name struct {
	// pkg is the package's name or import path; ident "Name" or
	// "Type.Member", empty when the name is the package.
	pkg, ident string
}

func (n name) String() string {
	if n.ident == "" {
		return n.pkg
	}
	return n.pkg + "." + n.ident
}

// parseName reads a code span as a name. A leading * or &, and arguments
// or type arguments after it, are left out: "*oidc.Verifier",
// "extsigner.Listen(ctx, cfg)". A package's name starts with a lower-case
// letter, its identifiers are exported; a span that is not a name (a
// command, an unqualified identifier) reports false.
func parseName(span string) (name, bool) {
	s := strings.TrimLeft(strings.TrimSpace(span), "*&")
	s, _, _ = strings.Cut(s, "(")
	s, _, _ = strings.Cut(s, "[")
	if s == "" || strings.ContainsAny(s, " \t") {
		return name{}, false
	}
	slash := strings.LastIndex(s, "/")
	elems := strings.Split(s[slash+1:], ".")
	// The last path element may hold dots (gopkg.in/yaml.v3): it ends at
	// the first element that starts with an upper-case letter.
	first := len(elems)
	for i, e := range elems {
		if r, _ := utf8.DecodeRuneInString(e); unicode.IsUpper(r) {
			first = i
			break
		}
	}
	pkg := s[:slash+1] + strings.Join(elems[:first], ".")
	idents := elems[first:]
	if len(idents) > 2 || !validPackage(pkg, slash >= 0) {
		return name{}, false
	}
	for _, id := range idents {
		if !isExported(id) {
			return name{}, false
		}
	}
	if slash < 0 && len(idents) == 0 {
		return name{}, false // a bare word: not a package's import path
	}
	return name{pkg: pkg, ident: strings.Join(idents, ".")}, true
}

// validPackage reports whether pkg is a package's name (lower-case
// first) or, when path, an import path.
func validPackage(pkg string, path bool) bool {
	if !path {
		r, _ := utf8.DecodeRuneInString(pkg)
		return isIdent(pkg) && unicode.IsLower(r)
	}
	for _, elem := range strings.Split(pkg, "/") {
		if elem == "" || elem == "." || elem == ".." {
			return false
		}
		for _, r := range elem {
			if !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-._~", r)) {
				return false
			}
		}
	}
	return true
}

// names returns the names in an entry's code spans.
func names(e Entry) []name {
	var out []name
	for _, span := range codeSpans(e.Text) {
		if n, ok := parseName(span); ok {
			out = append(out, n)
		}
	}
	return out
}

// filePackage is the package of a snapshot file (api/oidc/oidctest.txt):
// its name as the changelog writes it ("oidctest") and its import path.
// The module's root package is api/<last element of the module path>.txt.
func filePackage(module, file string) (short, path string) {
	rel := strings.TrimSuffix(strings.TrimPrefix(file, "api/"), ".txt")
	short = rel[strings.LastIndex(rel, "/")+1:]
	if rel == module[strings.LastIndex(module, "/")+1:] {
		return short, module
	}
	return short, module + "/" + rel
}
