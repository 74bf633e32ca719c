package ksa_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/apisnap"
)

// TestChangelog holds CHANGELOG.md to Keep a Changelog's structure (as
// apisnap.ParseChangelog checks it: Unreleased, then releases newest
// first, then the history; groups among Security, Added, Changed,
// Deprecated, Removed and Fixed) and ksa.Version to its newest release.
func TestChangelog(t *testing.T) {
	b, err := os.ReadFile("CHANGELOG.md")
	require.NoError(t, err)
	log, err := apisnap.ParseChangelog(string(b))
	require.NoError(t, err)
	newest, ok := log.Released()
	require.True(t, ok, "CHANGELOG.md has no release and no %q", apisnap.HistoryHeading)
	assert.Equal(t, "v"+newest.Version, ksa.Version,
		"ksa.Version (version.go) is CHANGELOG.md's newest release (line %d): a release changes both", newest.Line)
}
