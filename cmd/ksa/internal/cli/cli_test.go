package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		{name: "help", args: []string{"--help"}, code: exitOK},
		{name: "unknown command", args: []string{"frobnicate"}, code: exitUsage},
		{name: "unknown subcommand", args: []string{"issuer", "frobnicate"}, code: exitUsage},
		{name: "group without subcommand", args: []string{"token"}, code: exitUsage},
		{name: "unknown flag", args: []string{"issuer", "keygen", "--bogus"}, code: exitUsage},
		{name: "missing required flag", args: []string{"issuer", "keygen"}, code: exitUsage},
		{name: "bad output format", args: []string{"credspec", "crd", "-o", "xml"}, code: exitUsage},
		{name: "too many arguments", args: []string{"token", "inspect", "a", "b"}, code: exitUsage},
		{name: "bad --now", args: []string{"credspec", "crd", "--now", "noon"}, code: exitUsage},
		{name: "bad flag value", args: []string{"issuer", "keygen", "--bits", "1024", "--out", "k.key"}, code: exitUsage},
		{name: "bad --allowed-uid", args: []string{"signer", "serve", "--socket", "s.sock", "--key", "k.key", "--allowed-uid", "root"}, code: exitUsage},
		{name: "failure: missing key file", args: []string{"issuer", "render", "--issuer", "https://x", "--key", "none.key", "--out", "site"}, code: exitFailure},
		{name: "failure: not https", args: []string{"issuer", "check", "http://x"}, code: exitFailure},
		{name: "success", args: []string{"credspec", "crd"}, code: exitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runKSA(t, t.TempDir(), tc.args...)
			assert.Equal(t, tc.code, code, stderr)
			if code != exitOK {
				assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
				assert.True(t, strings.HasPrefix(stderr, "ksa: "), stderr)
			}
		})
	}
}

func TestKeygenWritesPrivateKeyMode0600AndNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runKSA(t, dir, "issuer", "keygen", "--type", "ecdsa", "--curve", "P-384", "--out", "sa.key")
	require.Equal(t, exitOK, code, stderr)
	st, err := os.Stat(filepath.Join(dir, "sa.key"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	st, err = os.Stat(filepath.Join(dir, "sa.pub"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())
	before, err := os.ReadFile(filepath.Join(dir, "sa.key"))
	require.NoError(t, err)

	code, _, stderr = runKSA(t, dir, "issuer", "keygen", "--out", "sa.key")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "sa.key already exists")
	after, err := os.ReadFile(filepath.Join(dir, "sa.key"))
	require.NoError(t, err)
	assert.Equal(t, before, after)

	// Only the public file exists: the private one is not written either.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other.pub"), []byte("x"), 0o644))
	code, _, _ = runKSA(t, dir, "issuer", "keygen", "--out", "other.key")
	assert.Equal(t, exitFailure, code)
	assert.NoFileExists(t, filepath.Join(dir, "other.key"))
	assertNoTempFiles(t, dir)
}

func TestReadInputLimit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		size    int
		wantErr bool
	}{
		{name: "at the limit", size: 10},
		{name: "one over", size: 11, wantErr: true},
		{name: "empty", size: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := readInput("-", strings.NewReader(strings.Repeat("a", tc.size)), 10)
			if tc.wantErr {
				assert.ErrorIs(t, err, errTooLarge)
				return
			}
			require.NoError(t, err)
			assert.Len(t, data, tc.size)
		})
	}
	_, err := readInput("-", nil, 10)
	assert.Error(t, err)
}

func TestRelTime(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    int64
		want string
	}{
		{name: "now", d: 0, want: "now"},
		{name: "future", d: 3600 + 61, want: "in 1h1m1s"},
		{name: "past days", d: -(2*86400 + 60), want: "2d1m ago"},
		{name: "seconds", d: 5, want: "in 5s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, relTime(unix(tc.d), unix(0)))
		})
	}
}

type unix int64

func (u unix) Unix() int64 { return int64(u) }

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.Contains(e.Name(), ".tmp-"), "temporary file left: %s", e.Name())
	}
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
			assert.Equal(t, exitFailure, code)
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
	assert.Equal(t, exitFailure, code, stderr)
	assert.Less(t, len(stderr), 600, stderr)
	assert.Contains(t, oneLine(strings.Repeat("é", 200)), "...")
}
