package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRootHelpListsEveryCommand: "ksa --help" names every command of the
// tree that runs (its path without "ksa ", at the start of a line of the
// list), and no command the tree does not have: a command added without
// a line here fails, as "issuer publish", "podcert serve", "podcert rbac"
// and "spiffe serve" once went unlisted.
func TestRootHelpListsEveryCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, Main([]string{"--help"}, strings.NewReader(""), &stdout, &stderr), stderr.String())
	help := stdout.String()

	listed := map[string]bool{}
	_, list, ok := strings.Cut(help, "\nCommands:\n")
	require.True(t, ok, "ksa --help has no Commands: list:\n%s", help)
	for line := range strings.Lines(list) {
		if strings.TrimSpace(line) == "" {
			break
		}
		if !strings.HasPrefix(line, "  ") || strings.HasPrefix(line, "   ") {
			continue // a description's continuation
		}
		// "  PATH  description": the path ends at two spaces.
		path, _, _ := strings.Cut(strings.TrimPrefix(line, "  "), "  ")
		listed[strings.TrimSpace(path)] = true
	}

	want := map[string]bool{}
	for _, c := range allCommands()[1:] {
		if !c.Runnable() || c.Hidden || c.HasAvailableSubCommands() {
			continue
		}
		want[strings.TrimPrefix(c.CommandPath(), "ksa ")] = true
	}
	require.Greater(t, len(want), 20)
	for path := range want {
		assert.True(t, listed[path], "ksa --help does not list %q", path)
	}
	for path := range listed {
		assert.True(t, want[path], "ksa --help lists %q, which is no command", path)
	}
}
