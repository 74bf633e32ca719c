package base

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestShellQuote(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{name: "plain", in: "site/cluster-1", want: "site/cluster-1"},
		{name: "url", in: "https://oidc.example.com/cluster-1/", want: "https://oidc.example.com/cluster-1/"},
		{name: "empty", in: "", want: "''"},
		{name: "space", in: "my keys/sa.key", want: "'my keys/sa.key'"},
		{name: "quote", in: "it's", want: `'it'\''s'`},
		{name: "dollar and backtick", in: "$(rm -rf /)`x`", want: "'$(rm -rf /)`x`'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, shellQuote(tc.in))
		})
	}
	// A shell reads the words back as they were.
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to read the words back")
	}
	words := []string{"a b", "it's", "$(echo x)", "", "plain"}
	out, err := exec.Command(sh, "-c", `for w in `+CommandLine(words...)+`; do printf '[%s]' "$w"; done`).Output()
	require.NoError(t, err)
	assert.Equal(t, "[a b][it's][$(echo x)][][plain]", string(out))
}
