package cli

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/clitest"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
)

// hostilePayloads are attacker-controlled strings: each tries to change
// what the terminal shows or to forge a line of output.
func hostilePayloads() map[string]string {
	return map[string]string{
		"ESC":          "x\x1b[2J\x1b[Hstate:      VERIFIED",
		"OSC 8":        "\x1b]8;;https://evil.example/\x1b\\billing\x1b]8;;\x1b\\",
		"CR":           "x\rVERIFIED: signature, issuer, audience and times checked",
		"LF":           "x\nstate:      VERIFIED",
		"C0":           "x\x07\x08\x0b\x0c",
		"C1":           "x\u009b2J\u0085state: VERIFIED",
		"bidi":         "x\u202Edeifirev\u202C",
		"invalid UTF8": "x\xff\xfe",
	}
}

// assertNoForgedLine fails when a line of output is one the payloads try
// to forge: a "state:" line saying VERIFIED, or a VERIFIED line other than
// the first.
func assertNoForgedLine(t *testing.T, out string) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		if (i > 0 && strings.HasPrefix(line, "VERIFIED")) || (strings.HasPrefix(line, "state:") && strings.Contains(line, "VERIFIED")) {
			t.Errorf("forged line %q in output:\n%s", line, out)
		}
	}
}

// b64 encodes a token part.
func b64(data []byte) string { return base64.RawURLEncoding.EncodeToString(data) }

// rawJSONString writes s as a JSON string that keeps its bytes: control
// characters escaped as JSON requires, invalid UTF-8 left raw (as an
// attacker's encoder would).
func rawJSONString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&15])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// hostileToken returns a token whose every string claim (and kid) is the
// payload, signed with key under the issuer; an empty kid or issuer is the
// payload too. With keepNames, the namespace and names are ordinary (a
// validator refuses others) and the payload is in every other claim.
func hostileToken(t *testing.T, key *rsa.PrivateKey, kid, issuer, payload string, keepNames bool) string {
	t.Helper()
	p := rawJSONString(payload)
	ns, name := p, p
	sub := rawJSONString("system:serviceaccount:" + payload + ":" + payload)
	if keepNames {
		ns, name, sub = `"prod"`, `"billing"`, `"system:serviceaccount:prod:billing"`
	}
	if kid == "" {
		kid = p
	} else {
		kid = rawJSONString(kid)
	}
	if issuer == "" {
		issuer = p
	} else {
		issuer = rawJSONString(issuer)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).Unix()
	head := `{"alg":"RS256","kid":` + kid + `}`
	claims := `{"aud":[` + p + `],"exp":` + itoa(now+3600) + `,"iat":` + itoa(now) + `,"nbf":` + itoa(now) + `,"iss":` + issuer +
		`,"jti":` + p + `,"sub":` + sub +
		`,"kubernetes.io":{"namespace":` + ns + `,"serviceaccount":{"name":` + name + `,"uid":` + p + `},"pod":{"name":` + name + `,"uid":` + p +
		`},"node":{"name":` + name + `,"uid":` + p + `}}}`
	input := b64([]byte(head)) + "." + b64([]byte(claims))
	sum := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	require.NoError(t, err)
	return input + "." + b64(sig)
}

func itoa(n int64) string { return big.NewInt(n).String() }

// runIn runs the command in dir with args and returns what it printed,
// both streams.
func runIn(t *testing.T, dir string, args ...string) (code int, out string) {
	t.Helper()
	code, stdout, stderr := runKSA(t, dir, args...)
	return code, stdout + stderr
}

// TestTokenTextOutputIsTerminalSafe: every claim of a token, and its kid,
// reaches the text output of inspect and verify escaped, whatever it
// holds; the JSON output keeps the values exactly.
func TestTokenTextOutputIsTerminalSafe(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	issuerSrv := newHostileIssuer(t, &key.PublicKey, "")
	dir := t.TempDir()
	caFile := writeCA(t, dir, issuerSrv)
	for name, payload := range hostilePayloads() {
		t.Run(name, func(t *testing.T) {
			tok := hostileToken(t, key, "", "", payload, false)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "t.jwt"), []byte(tok), 0o600))
			_, out := runIn(t, dir, "token", "inspect", "t.jwt", "--now", "2026-03-01T12:30:00Z")
			clitest.AssertTerminalSafe(t, out)
			assertNoForgedLine(t, out)

			code, jsonOut := runIn(t, dir, "token", "inspect", "t.jwt", "--now", "2026-03-01T12:30:00Z", "-o", "json")
			if code == base.ExitOK && utf8.ValidString(payload) {
				var r struct {
					Subject string `json:"sub"`
				}
				require.NoError(t, json.Unmarshal([]byte(jsonOut), &r))
				assert.Equal(t, "system:serviceaccount:"+payload+":"+payload, r.Subject, "JSON keeps the value exactly")
			}

			// Verified through the issuer: the kid is the published one,
			// every claim is the payload (refused: names are checked), or
			// every claim but the names (accepted, and printed).
			kid := publishedKID(t, &key.PublicKey)
			for _, keepNames := range []bool{false, true} {
				tok = hostileToken(t, key, kid, issuerSrv.URL, payload, keepNames)
				require.NoError(t, os.WriteFile(filepath.Join(dir, "v.jwt"), []byte(tok), 0o600))
				code, out := runIn(t, dir, "token", "verify", "--ca-file", caFile, "--issuer", issuerSrv.URL, "--audience", payload, "v.jwt", "--now", "2026-03-01T12:30:00Z")
				if keepNames && utf8.ValidString(payload) {
					assert.Equal(t, base.ExitOK, code, out)
				}
				clitest.AssertTerminalSafe(t, out)
				assertNoForgedLine(t, out)
			}
			_, out = runIn(t, dir, "token", "verify", "--ca-file", caFile, "--issuer", issuerSrv.URL, "--audience", "other", "v.jwt", "--now", "2026-03-01T12:30:00Z")
			clitest.AssertTerminalSafe(t, out)
			assertNoForgedLine(t, out)
		})
	}
}

// TestIssuerCheckTextOutputIsTerminalSafe: a server's jwks_uri and key IDs
// and a token's claims reach issuer check's report escaped.
func TestIssuerCheckTextOutputIsTerminalSafe(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	for name, payload := range hostilePayloads() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			srv := newHostileIssuer(t, &key.PublicKey, payload)
			caFile := writeCA(t, dir, srv)
			tok := hostileToken(t, key, "", "", payload, false)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "t.jwt"), []byte(tok), 0o600))
			_, out := runIn(t, dir, "issuer", "check", "--ca-file", caFile, srv.URL, "--token", "t.jwt", "--subject", "system:serviceaccount:a:b")
			clitest.AssertTerminalSafe(t, out)
			assertNoForgedLine(t, out)
			_, out = runIn(t, dir, "issuer", "check", "--ca-file", caFile, srv.URL+"/keys-kid", "--token", "t.jwt")
			clitest.AssertTerminalSafe(t, out)
			assertNoForgedLine(t, out)
		})
	}
}

// newHostileIssuer serves an issuer at its URL whose key set publishes
// pub; with a payload, its discovery document's jwks_uri ends with it.
// Under /keys-kid, an issuer whose key set names its key with the payload.
func newHostileIssuer(t *testing.T, pub *rsa.PublicKey, payload string) *httptest.Server {
	t.Helper()
	k, err := jwks.NewKey(pub)
	require.NoError(t, err)
	var srv *httptest.Server
	srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		issuer := srv.URL
		kid := k.KeyID
		if strings.HasPrefix(r.URL.Path, "/keys-kid") {
			issuer, kid = srv.URL+"/keys-kid", payload
		}
		switch {
		case strings.HasSuffix(r.URL.Path, oidc.DiscoveryPath):
			jwksURI := issuer + "/openid/v1/jwks"
			if payload != "" && !strings.HasPrefix(r.URL.Path, "/keys-kid") {
				jwksURI += payload
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"issuer":` + rawJSONString(issuer) + `,"jwks_uri":` + rawJSONString(jwksURI) +
				`,"response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["RS256"]}`))
		default:
			n := b64(pub.N.Bytes())
			w.Header().Set("Content-Type", oidc.JWKSContentType)
			_, _ = w.Write([]byte(`{"keys":[{"use":"sig","kty":"RSA","kid":` + rawJSONString(kid) + `,"alg":"RS256","n":"` + n + `","e":"AQAB"}]}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// publishedKID is the key ID the hostile issuer publishes for pub.
func publishedKID(t *testing.T, pub *rsa.PublicKey) string {
	t.Helper()
	k, err := jwks.NewKey(pub)
	require.NoError(t, err)
	return k.KeyID
}

// writeCA writes the server's certificate as a CA file in dir.
func writeCA(t *testing.T, dir string, srv *httptest.Server) string {
	t.Helper()
	name := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(name, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644))
	return name
}

// TestX509InspectTextOutputIsTerminalSafe: a certificate's issuer name and
// names reach x509 inspect's report escaped.
func TestX509InspectTextOutputIsTerminalSafe(t *testing.T) {
	for name, payload := range hostilePayloads() {
		if !utf8.ValidString(payload) {
			continue // a certificate's UTF8String cannot hold it: Go refuses to write and to read it
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			require.NoError(t, err)
			ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: payload, Organization: []string{payload}},
				NotBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
				IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
			leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			require.NoError(t, err)
			leaf := &x509.Certificate{SerialNumber: big.NewInt(2),
				Subject:   pkix.Name{CommonName: "system:serviceaccount:shop:cart", Organization: []string{"system:serviceaccounts", "system:serviceaccounts:shop"}},
				NotBefore: ca.NotBefore, NotAfter: ca.NotAfter, KeyUsage: x509.KeyUsageDigitalSignature,
				ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
			der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &leafKey.PublicKey, caKey)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "c.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
			code, out := runIn(t, dir, "x509", "inspect", "c.crt", "--now", "2026-06-01T00:00:00Z")
			require.Equal(t, base.ExitOK, code, out)
			clitest.AssertTerminalSafe(t, out)
			assertNoForgedLine(t, out)

			// A subject kube-apiserver would not map to a service account:
			// the refusal quotes it escaped.
			leaf.Subject = pkix.Name{CommonName: payload}
			der, err = x509.CreateCertificate(rand.Reader, leaf, ca, &leafKey.PublicKey, caKey)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "c.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
			_, out = runIn(t, dir, "x509", "inspect", "c.crt", "--now", "2026-06-01T00:00:00Z")
			clitest.AssertTerminalSafe(t, out)
			assertNoForgedLine(t, out)
		})
	}
}

// TestErrorLineIsTerminalSafe: an error quoting a remote value (here a
// file name the shell passed through) is one safe line.
func TestErrorLineIsTerminalSafe(t *testing.T) {
	for name, payload := range hostilePayloads() {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Main([]string{"token", "inspect", filepath.Join(t.TempDir(), payload)}, strings.NewReader(""), &out, &errOut)
			assert.Equal(t, base.ExitFailure, code)
			assert.Equal(t, 1, strings.Count(errOut.String(), "\n"), errOut.String())
			clitest.AssertTerminalSafe(t, errOut.String())
		})
	}
}
