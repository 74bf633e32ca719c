package base

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHoldsPrivateKey(t *testing.T) {
	rsaKey, err := os.ReadFile("../../../testdata/keys/rsa.key")
	require.NoError(t, err)
	rsaPub, err := os.ReadFile("../../../testdata/keys/rsa.pub")
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		data string
		want bool
	}{
		{name: "PKCS #8 PEM", data: string(rsaKey), want: true},
		{name: "a public key", data: string(rsaPub)},
		{name: "PKCS #1 PEM", data: "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\n", want: true},
		{name: "SEC 1 PEM", data: "-----BEGIN EC PRIVATE KEY-----\n", want: true},
		{name: "encrypted PEM", data: "-----BEGIN ENCRYPTED PRIVATE KEY-----\n", want: true},
		{name: "OpenSSH", data: "-----BEGIN OPENSSH PRIVATE KEY-----\n", want: true},
		{name: "a damaged PEM key", data: "junk\n-----BEGIN PRIVATE KEY-----\nnot base64", want: true},
		{name: "a private JWK", data: `{"kty":"EC","crv":"P-256","x":"a","y":"b","d":"c"}`, want: true},
		{name: "a key set with a private key", data: `{"keys":[{"kty":"RSA","n":"a","e":"AQAB","D":"x"}]}`, want: true},
		{name: "a symmetric JWK nested", data: `{"a":[{"b":{"kty":"oct","k":"c2VjcmV0"}}]}`, want: true},
		{name: "a public key set", data: `{"keys":[{"kty":"RSA","kid":"k","n":"a","e":"AQAB"}]}`},
		{name: "a token", data: "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln\n"},
		{name: "a d member without kty", data: `{"d":"x"}`},
		{name: "empty", data: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, holdsPrivateKey([]byte(tc.data)))
		})
	}
}

func TestSamePath(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "k")
	require.NoError(t, os.WriteFile(name, []byte("x"), 0o600))
	require.NoError(t, os.Link(name, filepath.Join(dir, "hard")))
	require.NoError(t, os.Symlink(name, filepath.Join(dir, "soft")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other"), []byte("x"), 0o600))
	t.Chdir(dir)
	for _, tc := range []struct {
		name string
		a, b string
		want bool
	}{
		{name: "same path", a: name, b: name, want: true},
		{name: "cleaned", a: dir + "/./sub/../k", b: name, want: true},
		{name: "relative and absolute", a: "k", b: name, want: true},
		{name: "a hard link", a: filepath.Join(dir, "hard"), b: name, want: true},
		{name: "a symbolic link", a: "soft", b: "k", want: true},
		{name: "another file of the same content", a: "other", b: "k"},
		{name: "a file that does not exist yet", a: "new", b: "k"},
		{name: "two names that do not exist", a: "new", b: "newer"},
		{name: "one name that does not exist", a: "new", b: "./new", want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, SamePath(tc.a, tc.b))
		})
	}
}
