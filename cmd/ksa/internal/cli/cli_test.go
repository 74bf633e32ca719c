package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/clitest"
)

// runKSA runs the command in dir and returns its exit status and output.
func runKSA(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Chdir(dir)
	var out, errOut bytes.Buffer
	code = Main(args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{name: "help", args: []string{"--help"}, code: base.ExitOK},
		{name: "unknown command", args: []string{"frobnicate"}, code: base.ExitUsage},
		{name: "unknown subcommand", args: []string{"issuer", "frobnicate"}, code: base.ExitUsage},
		{name: "group without subcommand", args: []string{"token"}, code: base.ExitUsage},
		{name: "unknown flag", args: []string{"issuer", "keygen", "--bogus"}, code: base.ExitUsage},
		{name: "missing required flag", args: []string{"issuer", "keygen"}, code: base.ExitUsage},
		{name: "bad output format", args: []string{"credspec", "crd", "-o", "xml"}, code: base.ExitUsage},
		{name: "too many arguments", args: []string{"token", "inspect", "a", "b"}, code: base.ExitUsage},
		{name: "bad --now", args: []string{"credspec", "crd", "--now", "noon"}, code: base.ExitUsage},
		{name: "bad flag value", args: []string{"issuer", "keygen", "--bits", "1024", "--out", "k.key"}, code: base.ExitUsage},
		{name: "bad --allowed-uid", args: []string{"signer", "serve", "--socket", "s.sock", "--key", "k.key", "--allowed-uid", "root"}, code: base.ExitUsage},
		{name: "failure: missing key file", args: []string{"issuer", "render", "--issuer", "https://x", "--key", "none.key", "--out", "site"}, code: base.ExitFailure},
		{name: "failure: not https", args: []string{"issuer", "check", "http://x"}, code: base.ExitFailure},
		{name: "success", args: []string{"credspec", "crd"}, code: base.ExitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runKSA(t, t.TempDir(), tc.args...)
			assert.Equal(t, tc.code, code, stderr)
			if code != base.ExitOK {
				assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
				assert.True(t, strings.HasPrefix(stderr, "ksa: "), stderr)
			}
		})
	}
}

func TestKeygenWritesPrivateKeyMode0600AndNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runKSA(t, dir, "issuer", "keygen", "--type", "ecdsa", "--curve", "P-384", "--out", "sa.key")
	require.Equal(t, base.ExitOK, code, stderr)
	st, err := os.Stat(filepath.Join(dir, "sa.key"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	st, err = os.Stat(filepath.Join(dir, "sa.pub"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())
	before, err := os.ReadFile(filepath.Join(dir, "sa.key"))
	require.NoError(t, err)

	code, _, stderr = runKSA(t, dir, "issuer", "keygen", "--out", "sa.key")
	assert.Equal(t, base.ExitFailure, code)
	assert.Contains(t, stderr, "sa.key already exists")
	after, err := os.ReadFile(filepath.Join(dir, "sa.key"))
	require.NoError(t, err)
	assert.Equal(t, before, after)

	// Only the public file exists: the private one is not written either.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other.pub"), []byte("x"), 0o644))
	code, _, _ = runKSA(t, dir, "issuer", "keygen", "--out", "other.key")
	assert.Equal(t, base.ExitFailure, code)
	assert.NoFileExists(t, filepath.Join(dir, "other.key"))
	clitest.AssertNoTempFiles(t, dir)
}

// TestCredspecFromFileNeverEchoesInput: whatever the file holds, the error
// neither quotes it nor grows with it.
func TestCredspecFromFileNeverEchoesInput(t *testing.T) {
	token := "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.eyJpc3MiOiJodHRwczovL2lzc3VlciIsInN1YiI6InN5c3RlbTpzZXJ2aWNlYWNjb3VudDpwcm9kOmJpbGxpbmcifQ.c2lnbmF0dXJl"
	long := strings.Repeat("a", 60<<10)
	for _, tc := range []struct {
		name, data, secret string
	}{
		{name: "a token", data: token, secret: "eyJ"},
		{name: "a 60 KB line", data: long, secret: strings.Repeat("a", 100)},
		{name: "a 60 KB string", data: `"` + long + `"`, secret: strings.Repeat("a", 100)},
		{name: "a 60 KB member name", data: `{"` + long + `":1}`, secret: strings.Repeat("a", 100)},
		{name: "a 60 KB value of a known member", data: `{"CmsPlugins":[1],"x":"` + long + `"}`, secret: strings.Repeat("a", 100)},
		{name: "a 60 KB value of the wrong type", data: `{"CmsPlugins":"` + long + `"}`, secret: strings.Repeat("a", 100)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "spec.json"), []byte(tc.data), 0o644))
			code, stdout, stderr := runKSA(t, dir, "credspec", "generate", "--from-file", "spec.json")
			assert.Equal(t, base.ExitFailure, code)
			assert.Empty(t, stdout)
			assert.NotContains(t, stderr, tc.secret)
			assert.Less(t, len(stderr), 400, stderr)
		})
	}
}

// TestErrorLineIsBounded: an error quoting its input, however long, stays
// a short line.
func TestErrorLineIsBounded(t *testing.T) {
	dir := t.TempDir()
	long := `{"apiVersion":"windows.k8s.io/v1","kind":"GMSACredentialSpec","metadata":{"name":"a"},"credspec":{"` + strings.Repeat("x", 60<<10) + `":1}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "specs.yaml"), []byte(long), 0o644))
	code, _, stderr := runKSA(t, dir, "webhook", "serve", "--credspecs", "specs.yaml", "--addr", "127.0.0.1:0")
	assert.Equal(t, base.ExitFailure, code, stderr)
	assert.Less(t, len(stderr), 600, stderr)
	assert.Contains(t, base.OneLine(strings.Repeat("é", 200)), "...")
}
