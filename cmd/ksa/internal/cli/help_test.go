package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
)

// allCommands returns every command of the tree, the root first.
func allCommands() []*cobra.Command {
	root := newRoot(&app{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}})
	var out []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		out = append(out, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return out
}

var flagName = regexp.MustCompile(`--[a-z0-9][a-z0-9-]*`)

// TestUsageLinesNameRealFlags: every flag a usage line names exists on
// its command ("ksa signer serve" once named a --verify-key it did not
// have).
func TestUsageLinesNameRealFlags(t *testing.T) {
	for _, c := range allCommands() {
		for _, name := range flagName.FindAllString(c.Use, -1) {
			assert.NotNil(t, c.Flags().Lookup(strings.TrimPrefix(name, "--")), "%q names %s, which it does not have", c.CommandPath(), name)
		}
	}
}
