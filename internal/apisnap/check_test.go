package apisnap_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/apisnap"
)

const module = "example.com/m"

// unreleased is a changelog whose Unreleased section holds groups (its
// first group's heading on line 5), then a release 0.1.0 holding older.
func unreleased(groups, older string) string {
	text := "# Changelog\n\n## [Unreleased]\n\n" + groups + "\n"
	if older != "" {
		text += "## [0.1.0] - 2026-01-02\n\n" + older + "\n"
	}
	return text + apisnap.HistoryHeading + "\n\n- The history.\n"
}

// problem is what a test expects of an apisnap.Problem.
type problem struct {
	name    string
	entries []int
}

func problems(ps []apisnap.Problem) []problem {
	var out []problem
	for _, p := range ps {
		out = append(out, problem{name: p.Name, entries: p.Entries})
	}
	return out
}

// jwksAPI is a package's API at a release.
var jwksAPI = []string{
	"func Parse([]byte) (*Set, error)",
	"method (*Set) Len() int",
	"method (Set) Keys() []Key",
	"type Key struct",
	"type Key struct, ID string",
	"type Set struct",
	"type Set struct, embedded sync.Mutex",
	"type Source interface { Get }",
	"type Source interface, Get(string) (Key, error)",
	"const Max untyped int = 10",
}

// without returns lines without drop, plus add.
func without(lines []string, drop []string, add ...string) []string {
	var out []string
	for _, l := range lines {
		keep := true
		for _, d := range drop {
			if l == d {
				keep = false
			}
		}
		if keep {
			out = append(out, l)
		}
	}
	return append(out, add...)
}

func TestCheckRemovals(t *testing.T) {
	release := apisnap.Release{Version: "v0.0.0", API: apisnap.API{
		"api/jwks.txt":          jwksAPI,
		"api/oidc/oidctest.txt": {"func Start() *Issuer", "type Issuer struct"},
	}}
	parse := []string{"func Parse([]byte) (*Set, error)"}
	for _, tc := range []struct {
		name       string
		jwks       []string // the package's API now; nil: the release's
		deprecated map[string]string
		noOidctest bool // the package oidc/oidctest is gone
		log        string
		released   string // the release's version, if not v0.0.0
		want       []problem
	}{
		{name: "the same API passes",
			log: unreleased("", "")},
		{name: "additions, a new package's too, pass; so does a constant's new value",
			jwks: without(jwksAPI, []string{"const Max untyped int = 10"}, "const Max untyped int = 20", "func New() *Set", "type Key struct, Alg string"),
			log:  unreleased("", "")},
		{name: "an interface's new method passes; a method moved from the pointer to the value passes",
			jwks: without(jwksAPI, []string{"type Source interface { Get }", "method (*Set) Len() int"},
				"type Source interface { Get, Put }", "type Source interface, Put(Key) error", "method (Set) Len() int"),
			log: unreleased("", "")},
		{name: "a removal with an entry naming its replacement passes",
			jwks: without(jwksAPI, parse, "func ParseJSON([]byte) (*Set, error)"),
			log:  unreleased("### Removed\n\n- `jwks.Parse`: use `jwks.ParseJSON` instead.\n", "")},
		{name: "the entry may name the identifier by import path, with arguments, under Deprecated",
			jwks: without(jwksAPI, parse, "func ParseJSON([]byte) (*Set, error)"),
			log:  unreleased("### Deprecated\n\n- `example.com/m/jwks.Parse(b)`: use\n  `*jwks.ParseJSON` instead.\n", "")},
		{name: "a removal without an entry fails",
			jwks: without(jwksAPI, parse),
			log:  unreleased("### Added\n\n- `jwks.ParseJSON`.\n", ""),
			want: []problem{{name: "jwks.Parse"}}},
		{name: "a changed signature is a removal",
			jwks: without(jwksAPI, parse, "func Parse([]byte, int) (*Set, error)"),
			log:  unreleased("", ""),
			want: []problem{{name: "jwks.Parse"}}},
		{name: "an entry naming no replacement fails, naming the entry's line",
			jwks: without(jwksAPI, parse),
			log:  unreleased("### Removed\n\n- `jwks.Parse`: gone, see `go doc jwks`.\n", ""),
			want: []problem{{name: "jwks.Parse", entries: []int{7}}}},
		{name: "a replacement the API lacks does not count",
			jwks: without(jwksAPI, parse),
			log:  unreleased("### Removed\n\n- `jwks.Parse`: use `jwks.ParseJSON`.\n", ""),
			want: []problem{{name: "jwks.Parse", entries: []int{7}}}},
		{name: "a replacement from another module counts",
			jwks: without(jwksAPI, parse),
			log:  unreleased("### Removed\n\n- `jwks.Parse`: use `encoding/json.Unmarshal`.\n", "")},
		{name: "an entry under Changed does not count",
			jwks: without(jwksAPI, parse, "func ParseJSON([]byte) (*Set, error)"),
			log:  unreleased("### Changed\n\n- `jwks.Parse`: use `jwks.ParseJSON` instead.\n", ""),
			want: []problem{{name: "jwks.Parse"}}},
		{name: "a deprecated forwarder passes: an alias to the moved type",
			jwks: without(jwksAPI, []string{"method (*Set) Len() int", "method (Set) Keys() []Key", "type Set struct", "type Set struct, embedded sync.Mutex"},
				"type Set = example.com/m/keys.Set"),
			deprecated: map[string]string{"Set": "Deprecated: Use [keys.Set]."},
			log:        unreleased("", "")},
		{name: "a deprecated method covers itself, not its type's other members",
			jwks:       without(jwksAPI, []string{"method (*Set) Len() int", "method (Set) Keys() []Key"}, "method (Set) Keys() []string"),
			deprecated: map[string]string{"Set.Keys": "Deprecated: Use [Set.All]."},
			log:        unreleased("", ""),
			want:       []problem{{name: "jwks.Set.Len"}}},
		{name: "a method moved from the value to the pointer is a removal, and so is a field",
			jwks: without(jwksAPI, []string{"method (Set) Keys() []Key", "type Key struct, ID string", "type Set struct, embedded sync.Mutex"},
				"method (*Set) Keys() []Key"),
			log:  unreleased("", ""),
			want: []problem{{name: "jwks.Key.ID"}, {name: "jwks.Set.Keys"}, {name: "jwks.Set.Mutex"}}},
		{name: "an entry naming the type covers its fields and methods",
			jwks: without(jwksAPI, []string{"method (*Set) Len() int", "method (Set) Keys() []Key", "type Set struct", "type Set struct, embedded sync.Mutex"},
				"type KeySet struct"),
			log: unreleased("### Removed\n\n- `jwks.Set`: use `jwks.KeySet`.\n", "")},
		{name: "an interface's removed method fails",
			jwks: without(jwksAPI, []string{"type Source interface { Get }", "type Source interface, Get(string) (Key, error)"}, "type Source interface {}"),
			log:  unreleased("", ""),
			want: []problem{{name: "jwks.Source.Get"}}},
		{name: "a package removed entirely fails",
			noOidctest: true,
			log:        unreleased("", ""),
			want:       []problem{{name: "example.com/m/oidc/oidctest"}}},
		{name: "a package removed entirely passes with an entry naming its import path and a replacement",
			noOidctest: true,
			log:        unreleased("### Removed\n\n- `example.com/m/oidc/oidctest`: use `example.com/m/jwks`.\n", "")},
		{name: "or naming it by its directory",
			noOidctest: true,
			log:        unreleased("### Removed\n\n- `oidc/oidctest`: use `jwks.Parse`.\n", "")},
		{name: "or naming each of its identifiers",
			noOidctest: true,
			log:        unreleased("### Removed\n\n- `oidctest.Start`, `oidctest.Issuer`: use `jwks.Parse`.\n", "")},
		{name: "an entry in the release newer than the baseline counts (a release cut, api/release.txt not yet written again)",
			jwks: without(jwksAPI, parse, "func ParseJSON([]byte) (*Set, error)"),
			log:  unreleased("", "### Deprecated\n\n- `jwks.Parse`: use `jwks.ParseJSON` instead.\n")},
		{name: "after a release, a removal needs an entry under Removed and a deprecation in a release",
			jwks:     without(jwksAPI, parse, "func ParseJSON([]byte) (*Set, error)"),
			released: "v0.1.0",
			log: unreleased("### Removed\n\n- `jwks.Parse`: use `jwks.ParseJSON` instead.\n",
				"### Deprecated\n\n- `jwks.Parse`: use `jwks.ParseJSON` instead.\n")},
		{name: "after a release, a removal never deprecated in a release fails",
			jwks:     without(jwksAPI, parse, "func ParseJSON([]byte) (*Set, error)"),
			released: "v0.1.0",
			log:      unreleased("### Removed\n\n- `jwks.Parse`: use `jwks.ParseJSON` instead.\n", "### Added\n\n- `jwks.Parse`.\n"),
			want:     []problem{{name: "jwks.Parse"}}},
		{name: "after a release, a deprecation in Unreleased does not answer for a removal",
			jwks:     without(jwksAPI, parse, "func ParseJSON([]byte) (*Set, error)"),
			released: "v0.1.0",
			log:      unreleased("### Deprecated\n\n- `jwks.Parse`: use `jwks.ParseJSON` instead.\n\n### Removed\n\n- `jwks.Parse`: use `jwks.ParseJSON` instead.\n", ""),
			want:     []problem{{name: "jwks.Parse"}}},
		{name: "after a release, a package gone needs its deprecation in a release",
			noOidctest: true,
			released:   "v0.1.0",
			log:        unreleased("### Removed\n\n- `oidc/oidctest`: use `jwks.Parse`.\n", ""),
			want:       []problem{{name: "example.com/m/oidc/oidctest"}}},
		{name: "an entry in the baseline's release or older does not count",
			jwks:     without(jwksAPI, parse, "func ParseJSON([]byte) (*Set, error)"),
			released: "v0.1.0",
			log:      unreleased("", "### Deprecated\n\n- `jwks.Parse`: use `jwks.ParseJSON` instead.\n"),
			want:     []problem{{name: "jwks.Parse"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := apisnap.Module{Path: module, API: apisnap.API{
				"api/jwks.txt":          release.API["api/jwks.txt"],
				"api/oidc/oidctest.txt": release.API["api/oidc/oidctest.txt"],
				"api/keys.txt":          {"type Set struct"},
			}, Deprecated: map[string]map[string]string{"api/jwks.txt": tc.deprecated}}
			if tc.jwks != nil {
				m.API["api/jwks.txt"] = tc.jwks
			}
			if tc.noOidctest {
				delete(m.API, "api/oidc/oidctest.txt")
			}
			log, err := apisnap.ParseChangelog(tc.log)
			require.NoError(t, err)
			r := release
			if tc.released != "" {
				r.Version = tc.released
			}
			assert.Equal(t, tc.want, problems(apisnap.CheckRemovals(m, r, log)))
		})
	}
}

// TestCheckRemovalsFix: the failure says what to write.
func TestCheckRemovalsFix(t *testing.T) {
	release := apisnap.Release{Version: "v0.0.0", API: apisnap.API{"api/jwks.txt": {"func Parse([]byte) (*Set, error)"}}}
	m := apisnap.Module{Path: module, API: apisnap.API{"api/jwks.txt": {"func Parse([]byte, int) (*Set, error)"}}}
	log, err := apisnap.ParseChangelog(unreleased("", ""))
	require.NoError(t, err)
	ps := apisnap.CheckRemovals(m, release, log)
	require.Len(t, ps, 1)
	assert.Equal(t, "jwks.Parse, removed or changed:\n"+
		"\t- func Parse([]byte) (*Set, error)\n"+
		"Keep `jwks.Parse` as it was, a forwarder to its replacement with a doc comment paragraph \"Deprecated: Use [<its replacement>] instead.\"; "+
		"or say in CHANGELOG.md, under ## [Unreleased] and ### Removed:\n\n"+
		"\t- `jwks.Parse`: use `<its replacement>` instead.", ps[0].String())
}

func TestCheckDeprecations(t *testing.T) {
	api := apisnap.API{"api/jwks.txt": {"func Parse([]byte) (*Set, error)", "func ParseJSON([]byte) (*Set, error)", "type Set struct"}}
	for _, tc := range []struct {
		name       string
		deprecated map[string]map[string]string
		log        string
		want       []problem
		fix        string
	}{
		{name: "none",
			log: unreleased("", "")},
		{name: "a deprecation with its doc link and its entry passes",
			deprecated: map[string]map[string]string{"api/jwks.txt": {"Parse": "Deprecated: Use [ParseJSON] instead."}},
			log:        unreleased("### Deprecated\n\n- `jwks.Parse`: use `jwks.ParseJSON`.\n", "")},
		{name: "an entry in an earlier release counts",
			deprecated: map[string]map[string]string{"api/jwks.txt": {"Parse": "Deprecated: Use [ParseJSON] instead."}},
			log:        unreleased("", "### Deprecated\n\n- `jwks.Parse`: use `jwks.ParseJSON`.\n")},
		{name: "a deprecation naming no replacement fails",
			deprecated: map[string]map[string]string{"api/jwks.txt": {"Parse": "Deprecated: Do not use."}},
			log:        unreleased("### Deprecated\n\n- `jwks.Parse`: use `jwks.ParseJSON`.\n", ""),
			want:       []problem{{name: "jwks.Parse"}},
			fix:        "Its Deprecated paragraph names no replacement: write it as a doc link, e.g. \"Deprecated: Use [<its replacement>] instead.\""},
		{name: "a Markdown link is not a doc link",
			deprecated: map[string]map[string]string{"api/jwks.txt": {"Parse": "Deprecated: see [the issue](https://example.com)."}},
			log:        unreleased("### Deprecated\n\n- `jwks.Parse`: use `jwks.ParseJSON`.\n", ""),
			want:       []problem{{name: "jwks.Parse"}}},
		{name: "a deprecation without an entry fails, saying the entry with the doc link's name",
			deprecated: map[string]map[string]string{"api/jwks.txt": {"Parse": "Deprecated: Use [ParseJSON] instead."}},
			log:        unreleased("### Removed\n\n- `jwks.Parse`: use `jwks.ParseJSON`.\n", ""),
			want:       []problem{{name: "jwks.Parse"}},
			fix:        "Its doc comment says Deprecated: say it in CHANGELOG.md, under ## [Unreleased] and ### Deprecated:\n\n\t- `jwks.Parse`: use `jwks.ParseJSON` instead."},
		{name: "a deprecated package needs an entry naming its import path",
			deprecated: map[string]map[string]string{"api/jwks.txt": {"": "Deprecated: Use [example.com/m/keys] instead."}},
			log:        unreleased("### Deprecated\n\n- `jwks.Set`: use `crypto.Signer`.\n", ""),
			want:       []problem{{name: "example.com/m/jwks"}},
			fix:        "Its doc comment says Deprecated: say it in CHANGELOG.md, under ## [Unreleased] and ### Deprecated:\n\n\t- `example.com/m/jwks`: use `example.com/m/keys` instead."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, err := apisnap.ParseChangelog(tc.log)
			require.NoError(t, err)
			ps := apisnap.CheckDeprecations(apisnap.Module{Path: module, API: api, Deprecated: tc.deprecated}, log)
			assert.Equal(t, tc.want, problems(ps))
			if tc.fix != "" && len(ps) == 1 {
				assert.Equal(t, tc.fix, ps[0].Fix)
			}
		})
	}
}
