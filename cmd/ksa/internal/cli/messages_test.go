package cli

import (
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"go/ast"
	"go/parser"
	"go/token"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/clitest"
	"github.com/ksa-go/ksa/keystore"
)

// TestEveryErrorEndsWithAFix: errors of every kind (cobra's, the flags',
// the library's, the command's) are one line that ends with a fix, in
// the command's words: flags, never Go fields.
func TestEveryErrorEndsWithAFix(t *testing.T) {
	keys, err := filepath.Abs("../../testdata/keys")
	require.NoError(t, err)
	x509dir, err := filepath.Abs("../../testdata/x509")
	require.NoError(t, err)
	ecKey := filepath.Join(keys, "ec.key")
	rsaKey := filepath.Join(keys, "rsa.key")
	cert := filepath.Join(x509dir, "cart.crt")
	ca := writeTestCA(t, ecKey)
	for _, tc := range []struct {
		name string
		args []string
		// fix is a word the fix must hold (a flag, usually).
		fix string
	}{
		{name: "unknown command", args: []string{"frobnicate"}, fix: "issuer"},
		{name: "unknown subcommand", args: []string{"issuer", "frobnicate"}, fix: "keygen"},
		{name: "misspelt command", args: []string{"isuer"}, fix: "did you mean issuer?"},
		{name: "misspelt subcommand", args: []string{"issuer", "rendr"}, fix: "did you mean render?"},
		{name: "group without a subcommand", args: []string{"token"}, fix: "inspect"},
		{name: "unknown flag", args: []string{"signer", "serve", "--verify-key", "k"}, fix: "--previous-key"},
		{name: "unknown flag far from any", args: []string{"issuer", "keygen", "--zzzzzzzz"}, fix: "--out"},
		{name: "unknown shorthand", args: []string{"issuer", "keygen", "-x"}, fix: "--out"},
		{name: "flag without its value", args: []string{"issuer", "keygen", "--out"}, fix: "--out"},
		{name: "missing required flag", args: []string{"issuer", "render", "--issuer", "https://x.example"}, fix: "--key"},
		{name: "missing required flags", args: []string{"podcert", "rbac", "--signer-name", "example.com/pods"}, fix: "--service-account"},
		{name: "bad output format", args: []string{"issuer", "keygen", "--out", "k", "-o", "xml"}, fix: "--output"},
		{name: "bad duration", args: []string{"token", "mint", "--duration", "soon"}, fix: "--duration"},
		{name: "bad number", args: []string{"issuer", "keygen", "--bits", "many"}, fix: "--bits"},
		{name: "bad boolean", args: []string{"x509", "csr", "--object=maybe"}, fix: "--object"},
		{name: "too many arguments", args: []string{"token", "inspect", "a", "b"}, fix: "FILE"},
		{name: "signer: lifetime out of range", args: []string{"signer", "serve", "--socket", "s.sock", "--key", ecKey, "--max-token-lifetime", "1m"}, fix: "--max-token-lifetime"},
		{name: "signer: an abstract socket", args: []string{"signer", "serve", "--socket", "@ksa-test-msg", "--key", ecKey}, fix: "--socket"},
		{name: "signer: the abstract opt-in on a socket file", args: []string{"signer", "serve", "--socket", "s.sock", "--key", ecKey, "--insecure-abstract-socket"}, fix: "--insecure-abstract-socket"},
		{name: "signer: the shared-directory opt-in on an abstract socket", args: []string{"signer", "serve", "--socket", "@ksa-test-msg", "--key", ecKey, "--insecure-abstract-socket", "--insecure-shared-socket-directory"}, fix: "--insecure-shared-socket-directory"},
		{name: "signer: a file at the socket path", args: []string{"signer", "serve", "--socket", ecKey, "--key", ecKey}, fix: "--socket"},
		{name: "podcert: lifetime out of range", args: []string{"podcert", "serve", "--signer-name", "example.com/pods", "--ca-key", ecKey, "--ca-cert", ca, "--max-lifetime", "1m"}, fix: "--max-lifetime"},
		{name: "podcert: not a CA", args: []string{"podcert", "serve", "--signer-name", "example.com/pods", "--ca-key", ecKey, "--ca-cert", cert}, fix: "--ca-cert"},
		{name: "podcert: bad signer name", args: []string{"podcert", "serve", "--signer-name", "pods", "--ca-key", ecKey, "--ca-cert", cert}, fix: "--signer-name"},
		{name: "podcert: bad trust domain", args: []string{"podcert", "serve", "--signer-name", "example.com/pods", "--ca-key", ecKey, "--ca-cert", ca, "--trust-domain", "Not A Domain"}, fix: "--trust-domain"},
		{name: "podcert: bad API version", args: []string{"podcert", "serve", "--signer-name", "example.com/pods", "--ca-key", ecKey, "--ca-cert", cert, "--api-version", "v2"}, fix: "--api-version"},
		{name: "podcert: negative workers", args: []string{"podcert", "serve", "--signer-name", "example.com/pods", "--ca-key", ecKey, "--ca-cert", cert, "--workers", "-1"}, fix: "--workers"},
		{name: "csr: unknown usage", args: []string{"x509", "csr", "--namespace", "shop", "--service-account", "cart", "--key", ecKey, "--usage", "peer"}, fix: "--usage"},
		{name: "csr: short lifetime", args: []string{"x509", "csr", "--namespace", "shop", "--service-account", "cart", "--key", ecKey, "--object", "--lifetime", "1m"}, fix: "--lifetime"},
		{name: "csr: bad signer name", args: []string{"x509", "csr", "--namespace", "shop", "--service-account", "cart", "--key", ecKey, "--object", "--signer-name", "x"}, fix: "--signer-name"},
		{name: "csr: bad namespace", args: []string{"x509", "csr", "--namespace", "Shop", "--service-account", "cart", "--key", ecKey}, fix: "--namespace"},
		{name: "csr: bad trust domain", args: []string{"x509", "csr", "--namespace", "shop", "--service-account", "cart", "--key", ecKey, "--usage", "both", "--host", "cart.shop.svc", "--trust-domain", "Not A Domain"}, fix: "--trust-domain"},
		{name: "mint: short duration", args: []string{"token", "mint", "--issuer", "https://x.example", "--signing-key", rsaKey, "--namespace", "prod", "--service-account", "billing", "--uid", "u", "--duration", "1m"}, fix: "--duration"},
		{name: "mint: bad namespace", args: []string{"token", "mint", "--issuer", "https://x.example", "--signing-key", rsaKey, "--namespace", "Prod", "--service-account", "billing", "--uid", "u"}, fix: "--namespace"},
		{name: "render: a query in the issuer", args: []string{"issuer", "render", "--issuer", "https://x.example/?a=1", "--key", rsaKey, "--out", "site"}, fix: "--issuer"},
		{name: "render: http jwks uri", args: []string{"issuer", "render", "--issuer", "https://x.example", "--jwks-uri", "http://x.example/jwks", "--key", rsaKey, "--out", "site"}, fix: "--jwks-uri"},
		{name: "webhook: missing certificate", args: []string{"webhook", "serve", "--credspecs", "none.yaml", "--tls-cert-file", "none.crt", "--tls-key-file", "none.key"}, fix: "--credspecs"},
		{name: "webhook: bad --allow", args: []string{"webhook", "serve", "--credspecs", "none.yaml", "--allow", "x"}, fix: "--allow"},
		{name: "mint: a PIN in the reference", args: []string{"token", "mint", "--issuer", "https://x.example", "--signing-key", "pkcs11:token=ksa;id=01?pin-value=4321", "--namespace", "prod", "--service-account", "billing", "--uid", "u"}, fix: "pin-source"},
		{name: "signer: unknown key store", args: []string{"signer", "serve", "--socket", "s.sock", "--key", "pkcs12:token=ksa"}, fix: "pkcs11:"},
		{name: "render: an AWS alias", args: []string{"issuer", "render", "--issuer", "https://x.example", "--key", "awskms:key-id=alias/sa", "--out", "site"}, fix: "key-id="},
		{name: "podcert: Cloud KMS key without version", args: []string{"podcert", "serve", "--signer-name", "example.com/pods", "--ca-key", "cloudkms:projects/p/locations/l/keyRings/r/cryptoKeys/k", "--ca-cert", ca}, fix: "cryptoKeyVersions"},
		{name: "keygen: key store without --public-out", args: []string{"issuer", "keygen", "--out", "awskms:name=sa"}, fix: "--public-out"},
		{name: "keygen: PKCS #11 key without object", args: []string{"issuer", "keygen", "--out", "pkcs11:token=ksa;id=01?pin-source=pin", "--public-out", "sa.pub"}, fix: "object="},
		{name: "rotate: next key in a key store with an id only", args: []string{"issuer", "rotate", "--issuer", "https://x.example", "--signing-key", rsaKey, "--next-key", "pkcs11:token=ksa;id=01?pin-source=pin", "--out", "site"}, fix: "object="},
		{name: "csr: PIN file missing", args: []string{"x509", "csr", "--namespace", "shop", "--service-account", "cart", "--key", "pkcs11:token=ksa;id=01?pin-source=/nonexistent/pin"}, fix: "pin-source"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "k"), nil, 0o600))
			code, _, stderr := runKSA(t, dir, tc.args...)
			assert.NotEqual(t, base.ExitOK, code)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			require.True(t, strings.HasPrefix(stderr, "ksa: "), stderr)
			what, fix, ok := strings.Cut(stderr, "; fix: ")
			require.True(t, ok, "no fix: %q", stderr)
			assert.Contains(t, fix, tc.fix, stderr)
			clitest.AssertUserWords(t, stderr)
			assertFixAdds(t, strings.TrimPrefix(what, "ksa: "), fix)
		})
	}
}

// fillerWords are words a fix may hold without saying anything: "fix
// --ca-key", "check the --ring path" name no action the problem did not.
var fillerWords = map[string]bool{"fix": true, "check": true, "correct": true, "see": true, "the": true, "a": true, "an": true,
	"it": true, "its": true, "then": true, "again": true, "and": true, "or": true, "please": true}

// helpPointer matches a pointer to a command's help ("see 'ksa x509 csr
// --help'"): no fix by itself.
var helpPointer = regexp.MustCompile(`\(?(see )?'ksa [^']*--help'\)?`)

// fixWords are the words of a message, lower-cased: flags keep their
// dashes, quotes and punctuation go.
func fixWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == '{' || r == '}' || unicode.IsLetter(r) || unicode.IsDigit(r))
	})
}

// fixRepeats reports whether a fix merely repeats its problem: without
// filler words and help pointers, every word it has is the problem's.
func fixRepeats(what, fix string) bool {
	inWhat := map[string]bool{}
	for _, w := range fixWords(what) {
		inWhat[strings.Trim(w, ".")] = true
	}
	said := false
	for _, w := range fixWords(helpPointer.ReplaceAllString(fix, "")) {
		w = strings.Trim(w, ".")
		if w == "" || fillerWords[w] {
			continue
		}
		said = true
		if !inWhat[w] {
			return false
		}
	}
	// A pointer to the help alone is a fix; beside the problem's words
	// it does not make one.
	return said || !helpPointer.MatchString(fix)
}

// assertFixAdds fails on a fix that merely repeats its problem.
func assertFixAdds(t *testing.T, what, fix string) {
	t.Helper()
	assert.False(t, fixRepeats(what, fix), "the fix %q only repeats the problem %q", fix, what)
}

func TestFixRepeats(t *testing.T) {
	for _, tc := range []struct {
		what, fix string
		repeats   bool
	}{
		{what: "--ca-key: the key is not the CA certificate's", fix: "fix --ca-key (see 'ksa podcert serve --help')", repeats: true},
		{what: "ring file r.yaml does not exist", fix: "check the --ring path", repeats: false},
		{what: "--ring r.yaml does not exist", fix: "check --ring", repeats: true},
		{what: "--ca-key: the key is not the CA certificate's", fix: "give --ca-key the key of --ca-cert", repeats: false},
		{what: "sa.key already exists", fix: "choose another --out", repeats: false},
		{what: "--to: location \"s3:///x\" names no bucket", fix: "see 'ksa issuer publish --help'", repeats: false},
		{what: "--socket: keys/rsa.key exists and is not a socket", fix: "fix --socket", repeats: true},
		{what: "--socket: keys/rsa.key exists and is not a socket", fix: "check --socket", repeats: true},
	} {
		assert.Equal(t, tc.repeats, fixRepeats(tc.what, tc.fix), "%q / %q", tc.what, tc.fix)
	}
}

// writeTestCA writes a self-signed CA certificate for the PEM key file and
// returns its path.
func writeTestCA(t *testing.T, keyFile string) string {
	t.Helper()
	data, err := os.ReadFile(keyFile)
	require.NoError(t, err)
	key, err := keystore.ParseSigningKeyPEM(data)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	name := filepath.Join(t.TempDir(), "ca.crt")
	require.NoError(t, os.WriteFile(name, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	return name
}

// TestNoErrorWithoutAFix: no call to Fail or Usage in the command groups gives
// an empty fix.
func TestNoErrorWithoutAFix(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*/*.go")
	require.NoError(t, err)
	calls := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			id, ok := call.Fun.(*ast.Ident)
			if sel, isSel := call.Fun.(*ast.SelectorExpr); isSel {
				id, ok = sel.Sel, true
			}
			if !ok || (id.Name != "Fail" && id.Name != "Usage") || len(call.Args) < 2 {
				return true
			}
			calls++
			fix := call.Args[0]
			if id.Name == "Fail" {
				fix = call.Args[1]
			}
			if lit, ok := fix.(*ast.BasicLit); ok {
				assert.NotEqual(t, `""`, lit.Value, "%s: %s without a fix", fset.Position(call.Pos()), id.Name)
			}
			// A fix and a problem written out: the fix says more.
			format := call.Args[1]
			if id.Name == "Fail" {
				format = call.Args[2]
			}
			fixLit, ok1 := fix.(*ast.BasicLit)
			formatLit, ok2 := format.(*ast.BasicLit)
			if ok1 && ok2 && fixLit.Kind == token.STRING && formatLit.Kind == token.STRING {
				f, _ := strconv.Unquote(fixLit.Value)
				w, _ := strconv.Unquote(formatLit.Value)
				assert.False(t, fixRepeats(w, f), "%s: the fix %q only repeats the problem %q", fset.Position(call.Pos()), f, w)
			}
			return true
		})
	}
	assert.Greater(t, calls, 100)
}

// TestWebhookManifestErrors: a --credspecs file that is not manifests is
// explained without the decoder's Go types.
func TestWebhookManifestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
	}{
		{name: "an array", doc: "[1,2]\n"},
		{name: "metadata of the wrong type", doc: "apiVersion: windows.k8s.io/v1\nkind: GMSACredentialSpec\nmetadata: \"x\"\n"},
		{name: "list items of the wrong type", doc: "kind: List\nitems: 5\n"},
		{name: "not YAML", doc: "a: [\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "specs.yaml"), []byte(tc.doc), 0o644))
			code, _, stderr := runKSA(t, dir, "webhook", "serve", "--credspecs", "specs.yaml")
			assert.Equal(t, base.ExitFailure, code)
			assert.Contains(t, stderr, "; fix: pass --credspecs")
			clitest.AssertUserWords(t, stderr)
			assert.NotContains(t, stderr, "Go value")
			assert.NotContains(t, stderr, "Go struct")
		})
	}
}
