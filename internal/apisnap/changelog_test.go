package apisnap_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/apisnap"
)

const history = apisnap.HistoryHeading + "\n\nThe history.\n\n- **Keys**: JWKS.\n"

func TestParseChangelog(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		// line is the line of the *ChangelogError expected, 0 for none.
		line int
	}{
		{name: "Unreleased, releases newest first, the history",
			text: "# Changelog\n\nIntroduction.\n\n## [Unreleased]\n\n### Security\n\n- A.\n\n### Deprecated\n\n- B.\n\n" +
				"## [0.2.0] - 2026-03-01\n\n### Removed\n\n- C.\n\n## [0.1.0] - 2026-02-01\n\n### Added\n\n- D.\n\n" + history},
		{name: "no Unreleased section: a release just cut",
			text: "# Changelog\n\n## [0.1.0] - 2026-02-01\n\n### Added\n\n- D.\n\n" + history},
		{name: "an empty Unreleased section",
			text: "# Changelog\n\n## [Unreleased]\n\n## [0.1.0] - 2026-02-01\n\n### Fixed\n\n- D.\n\n" + history},
		{name: "an entry's code block may hold a heading",
			text: "# Changelog\n\n## [Unreleased]\n\n### Added\n\n- A:\n\n  ```sh\n  ## not a heading\n  ```\n\n" + history},
		{name: "no title", text: "## [Unreleased]\n", line: 1},
		{name: "empty", text: "", line: 1},
		{name: "Unreleased after a release",
			text: "# Changelog\n\n## [0.1.0] - 2026-02-01\n\n## [Unreleased]\n", line: 5},
		{name: "a version with v",
			text: "# Changelog\n\n## [v0.1.0] - 2026-02-01\n", line: 3},
		{name: "a version of two numbers",
			text: "# Changelog\n\n## [0.1] - 2026-02-01\n", line: 3},
		{name: "a release without date",
			text: "# Changelog\n\n## [0.1.0]\n", line: 3},
		{name: "a date not YYYY-MM-DD",
			text: "# Changelog\n\n## [0.1.0] - 2026-2-1\n", line: 3},
		{name: "releases oldest first",
			text: "# Changelog\n\n## [0.1.0] - 2026-02-01\n\n## [0.2.0] - 2026-03-01\n", line: 5},
		{name: "the same version twice",
			text: "# Changelog\n\n## [0.1.0] - 2026-02-01\n\n## [0.1.0] - 2026-02-01\n", line: 5},
		{name: "an older release dated later",
			text: "# Changelog\n\n## [0.2.0] - 2026-02-01\n\n## [0.1.0] - 2026-03-01\n", line: 5},
		{name: "a section after the history",
			text: "# Changelog\n\n" + history + "\n## [0.1.0] - 2026-02-01\n", line: 9},
		{name: "a group of the history",
			text: "# Changelog\n\n" + history + "\n### Added\n", line: 9},
		{name: "an unknown group",
			text: "# Changelog\n\n## [Unreleased]\n\n### Breaking\n", line: 5},
		{name: "a group twice in a section (a merge)",
			text: "# Changelog\n\n## [Unreleased]\n\n### Added\n\n- A.\n\n### Fixed\n\n- B.\n\n### Added\n\n- C.\n", line: 13},
		{name: "a group before any section",
			text: "# Changelog\n\n### Added\n", line: 3},
		{name: "an entry outside any group",
			text: "# Changelog\n\n## [Unreleased]\n\n- A.\n", line: 5},
		{name: "a fourth-level heading",
			text: "# Changelog\n\n## [Unreleased]\n\n#### Notes\n", line: 5},
		{name: "another section heading",
			text: "# Changelog\n\n## Next\n", line: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := apisnap.ParseChangelog(tc.text)
			if tc.line == 0 {
				require.NoError(t, err)
				return
			}
			var ce *apisnap.ChangelogError
			require.True(t, errors.As(err, &ce), "%v", err)
			assert.Equal(t, tc.line, ce.Line, "%v", err)
		})
	}
}

func TestChangelogEntries(t *testing.T) {
	text := "# Changelog\n\n## [Unreleased]\n\n### Removed\n\n- `a.A`: use\n  `a.B`.\n\n  Still A.\n- `a.C`.\n\n### Added\n\n- `a.D`.\n\n" +
		"## [0.2.0] - 2026-03-01\n\n### Removed\n\n- `a.E`.\n\n## [0.1.0] - 2026-02-01\n\n### Removed\n\n- `a.F`.\n\n" + history
	log, err := apisnap.ParseChangelog(text)
	require.NoError(t, err)
	released, ok := log.Released()
	require.True(t, ok)
	assert.Equal(t, "0.2.0", released.Version)
	for _, tc := range []struct {
		name    string
		entries []apisnap.Entry
		want    []apisnap.Entry
	}{
		{name: "since v0.2.0: Unreleased",
			entries: log.Since("v0.2.0", "Removed"),
			want:    []apisnap.Entry{{Line: 7, Text: "`a.A`: use `a.B`. Still A."}, {Line: 11, Text: "`a.C`."}}},
		{name: "since v0.1.0: Unreleased and 0.2.0",
			entries: log.Since("v0.1.0", "Removed"),
			want:    []apisnap.Entry{{Line: 7, Text: "`a.A`: use `a.B`. Still A."}, {Line: 11, Text: "`a.C`."}, {Line: 21, Text: "`a.E`."}}},
		{name: "since v0.0.0, Added: Unreleased",
			entries: log.Since("v0.0.0", "Added"),
			want:    []apisnap.Entry{{Line: 15, Text: "`a.D`."}}},
		{name: "all, Removed",
			entries: log.All("Removed"),
			want:    []apisnap.Entry{{Line: 7, Text: "`a.A`: use `a.B`. Still A."}, {Line: 11, Text: "`a.C`."}, {Line: 21, Text: "`a.E`."}, {Line: 27, Text: "`a.F`."}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.entries)
		})
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{a: "v0.1.0", b: "0.1.0", want: 0},
		{a: "v0.10.0", b: "v0.9.1", want: 1},
		{a: "v0.0.0", b: "v0.1.0", want: -1},
		{a: "v1", b: "v0.0.0", want: -1},
	} {
		t.Run(tc.a+" "+tc.b, func(t *testing.T) {
			assert.Equal(t, tc.want, apisnap.CompareVersions(tc.a, tc.b))
		})
	}
}
