package apisnap

import (
	"strings"
	"testing"
)

func FuzzParseChangelog(f *testing.F) {
	f.Add("# Changelog\n\n## [Unreleased]\n\n### Removed\n\n- `jwks.Parse`: use\n  `jwks.ParseJSON`.\n\n## [0.1.0] - 2026-02-01\n\n### Added\n\n- A.\n\n" + HistoryHeading + "\n\n- H.\n")
	f.Add("# Changelog\n\n## [0.2.0] - 2026-02-01\n## [0.1.0] - 2026-03-01\n")
	f.Add("# Changelog\n\n## [Unreleased]\n\n### Added\n\n- A\n\n  ```\n## x\n")
	f.Fuzz(func(t *testing.T, text string) {
		log, err := ParseChangelog(text)
		if err != nil {
			return
		}
		lines := strings.Count(text, "\n") + 1
		prev := ""
		for i, s := range log.Sections {
			if s.Version == "" && i > 0 {
				t.Fatalf("Unreleased as section %d", i)
			}
			if prev != "" && CompareVersions(s.Version, prev) >= 0 {
				t.Fatalf("%s after %s", s.Version, prev)
			}
			prev = s.Version
			for _, g := range s.Groups {
				for _, e := range g.Entries {
					if e.Line < g.Line || e.Line > lines {
						t.Fatalf("entry on line %d, group on %d, %d lines", e.Line, g.Line, lines)
					}
				}
			}
		}
	})
}

func FuzzParseRelease(f *testing.F) {
	f.Add("# c\nversion v0.1.0\nksa: func F()\noidc/oidctest: type Issuer struct\n")
	f.Add("version v0.0.0\n")
	f.Fuzz(func(t *testing.T, text string) {
		r, err := ParseRelease(text)
		if err != nil {
			return
		}
		back, err := ParseRelease(r.Format("example.com/m"))
		if err != nil {
			t.Fatalf("written again: %v", err)
		}
		if back.Version != r.Version || len(back.API) != len(r.API) {
			t.Fatalf("written again: %+v, was %+v", back, r)
		}
		for file, lines := range r.API {
			if strings.Join(back.API[file], "\n") != strings.Join(lines, "\n") {
				t.Fatalf("%s written again: %q, was %q", file, back.API[file], lines)
			}
		}
	})
}

func FuzzParseDecl(f *testing.F) {
	for _, l := range []string{"const A untyped int = 1", "func F[T any](T) T", "type T struct, embedded *sync.Mutex",
		"type S interface { A }", "type S interface, A()", "method (*R[K, V]) M(K) V", "type T[K"} {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		d, ok := parseDecl(line)
		if !ok {
			return
		}
		if !isIdent(d.name) || d.member != "" && !isIdent(d.member) || d.key == "" {
			t.Fatalf("%q: %+v", line, d)
		}
	})
}

func FuzzParseName(f *testing.F) {
	for _, s := range []string{"jwks.Parse", "*oidc.Verifier", "github.com/ksa-go/ksa/oidc/oidctest.Issuer.URL", "gopkg.in/yaml.v3.Node", "keystore/pkcs11", "a.b/c.D(x)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, span string) {
		n, ok := parseName(span)
		if !ok {
			return
		}
		back, ok := parseName(n.String())
		if !ok || back != n {
			t.Fatalf("%q read as %+v, written %q, read again as %+v, %v", span, n, n.String(), back, ok)
		}
	})
}
