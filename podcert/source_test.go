package podcert_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/x509sa"
)

// mount writes files the way the kubelet's atomic writer does: into a new
// directory, then a symlink swap.
type mount struct {
	t   testing.TB
	dir string
	n   int
}

func (m *mount) write(files map[string][]byte) {
	m.t.Helper()
	m.n++
	ts := filepath.Join(m.dir, "..data-"+string(rune('a'+m.n)))
	require.NoError(m.t, os.Mkdir(ts, 0o700))
	for name, data := range files {
		require.NoError(m.t, os.WriteFile(filepath.Join(ts, name), data, 0o600))
	}
	tmp := filepath.Join(m.dir, "..data_tmp")
	require.NoError(m.t, os.Symlink(filepath.Base(ts), tmp))
	require.NoError(m.t, os.Rename(tmp, filepath.Join(m.dir, "..data")))
	for name := range files {
		link := filepath.Join(m.dir, name)
		if _, err := os.Lstat(link); errors.Is(err, os.ErrNotExist) {
			require.NoError(m.t, os.Symlink(filepath.Join("..data", name), link))
		}
	}
}

func TestSourceReloads(t *testing.T) {
	ca := newCA(t, false)
	s := newSigner(t, ca, nil)
	now := t0
	clock := func() time.Time { return now }
	for _, split := range []bool{false, true} {
		t.Run(map[bool]string{false: "bundle", true: "key and chain"}[split], func(t *testing.T) {
			m := &mount{t: t, dir: t.TempDir()}
			put := func(key crypto.Signer, pod string) {
				k, c := issue(t, s, key, func(p *podcert.Request) { p.PodName = pod })
				if split {
					m.write(map[string][]byte{"key.pem": k, "chain.pem": c})
				} else {
					m.write(map[string][]byte{"credentialbundle.pem": append(k, c...)})
				}
			}
			cfg := podcert.SourceConfig{BundlePath: filepath.Join(m.dir, "credentialbundle.pem"), Now: clock}
			if split {
				cfg = podcert.SourceConfig{KeyPath: filepath.Join(m.dir, "key.pem"), ChainPath: filepath.Join(m.dir, "chain.pem"), Now: clock}
			}
			_, err := podcert.NewSource(cfg)
			require.ErrorIs(t, err, podcert.ErrInvalidBundle, "nothing mounted yet")

			put(testkeys.Generated("p256"), "pod-a")
			src, err := podcert.NewSource(cfg)
			require.NoError(t, err)
			c, err := src.GetCertificate(nil)
			require.NoError(t, err)
			assert.Equal(t, "pod-a", podOf(t, c))

			// The kubelet refreshes: the next use serves the new one.
			put(testkeys.Generated("p384"), "pod-b")
			c, err = src.GetClientCertificate(nil)
			require.NoError(t, err)
			assert.Equal(t, "pod-b", podOf(t, c))

			// A broken write keeps the last good credential.
			if split {
				k, _ := issue(t, s, testkeys.Generated("p256"), nil)
				_, ch := issue(t, s, testkeys.Generated("p521"), nil)
				m.write(map[string][]byte{"key.pem": k, "chain.pem": ch})
			} else {
				m.write(map[string][]byte{"credentialbundle.pem": []byte("garbage")})
			}
			c, err = src.GetCertificate(nil)
			require.NoError(t, err)
			assert.Equal(t, "pod-b", podOf(t, c))
			require.Error(t, src.Reload())

			// Past its expiry, nothing is served.
			now = c.Leaf.NotAfter
			_, err = src.GetCertificate(nil)
			require.ErrorIs(t, err, podcert.ErrInvalidBundle)
			now = t0
		})
	}
}

func podOf(t *testing.T, c *tls.Certificate) string {
	t.Helper()
	d, err := x509sa.DecodeCertificate(c.Leaf)
	require.NoError(t, err)
	return d.Subject.PodName
}

func TestNewSourceValidates(t *testing.T) {
	for _, cfg := range []podcert.SourceConfig{{}, {KeyPath: "k"}, {BundlePath: "b", KeyPath: "k", ChainPath: "c"}} {
		_, err := podcert.NewSource(cfg)
		assert.ErrorIs(t, err, ksa.ErrInvalidConfig)
	}
}

// servingPair is a serving certificate from a CA, without identity, and
// its key in the block type given, as cert-manager writes tls.crt and
// tls.key.
func servingPair(t testing.TB, ca *testCA, key crypto.Signer, blockType string) (keyPEM, certPEM []byte) {
	t.Helper()
	var der []byte
	var err error
	switch blockType {
	case "RSA PRIVATE KEY":
		der = x509.MarshalPKCS1PrivateKey(key.(*rsa.PrivateKey))
	case "EC PRIVATE KEY":
		der, err = x509.MarshalECPrivateKey(key.(*ecdsa.PrivateKey))
	default:
		der, err = x509.MarshalPKCS8PrivateKey(key)
	}
	require.NoError(t, err)
	leaf := makeCert(t, &x509.Certificate{SerialNumber: big.NewInt(77), Subject: pkix.Name{CommonName: "webhook.ns.svc"},
		DNSNames: []string{"webhook.ns.svc"}, NotBefore: t0.Add(-time.Hour), NotAfter: t0.Add(90 * 24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, ca.cert, key.Public(), ca.key)
	return pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}),
		append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Raw}), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})...)
}

// TestSourceAnyCertificate: with AnyCertificate, a Source serves a
// cert-manager Secret's tls.key and tls.crt (keys in PKCS#1, SEC1 or
// PKCS#8, RSA 2048 included, a leaf without identity) and follows its
// renewals; without it, such a pair is refused.
func TestSourceAnyCertificate(t *testing.T) {
	ca := newCA(t, true)
	for _, tc := range []struct {
		name      string
		key       string
		blockType string
	}{
		{name: "RSA 2048, PKCS#1 (cert-manager's default)", key: "rsa2048", blockType: "RSA PRIVATE KEY"},
		{name: "P-256, SEC1", key: "p256", blockType: "EC PRIVATE KEY"},
		{name: "Ed25519, PKCS#8", key: "ed25519", blockType: "PRIVATE KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &mount{t: t, dir: t.TempDir()}
			k, c := servingPair(t, ca, testkeys.Generated(tc.key), tc.blockType)
			m.write(map[string][]byte{"tls.key": k, "tls.crt": c})
			cfg := podcert.SourceConfig{KeyPath: filepath.Join(m.dir, "tls.key"), ChainPath: filepath.Join(m.dir, "tls.crt"), Now: fixedClock(t0)}

			_, err := podcert.NewSource(cfg)
			require.ErrorIs(t, err, podcert.ErrInvalidBundle, "a pod certificate is required by default")

			cfg.AnyCertificate = true
			var reloads []error
			cfg.OnReload = func(err error) { reloads = append(reloads, err) }
			src, err := podcert.NewSource(cfg)
			require.NoError(t, err)
			cred, err := src.Current()
			require.NoError(t, err)
			assert.Equal(t, ksa.Identity{}, cred.Identity)
			assert.Equal(t, []string{"webhook.ns.svc"}, cred.Certificate.Leaf.DNSNames)
			assert.Len(t, cred.Certificate.Certificate, 2)
			assert.Empty(t, reloads, "no reload before a change")

			// The renewal is served from the next handshake on.
			k2, c2 := servingPair(t, ca, testkeys.Generated("p384"), "EC PRIVATE KEY")
			m.write(map[string][]byte{"tls.key": k2, "tls.crt": c2})
			got, err := src.GetCertificate(nil)
			require.NoError(t, err)
			assert.True(t, got.Leaf.PublicKey.(interface{ Equal(crypto.PublicKey) bool }).Equal(testkeys.Generated("p384").Public()))
			assert.Equal(t, []error{nil}, reloads)

			// A half-written renewal keeps the previous pair and is reported.
			m.write(map[string][]byte{"tls.key": k, "tls.crt": c2})
			got, err = src.GetCertificate(nil)
			require.NoError(t, err)
			assert.True(t, got.Leaf.PublicKey.(interface{ Equal(crypto.PublicKey) bool }).Equal(testkeys.Generated("p384").Public()))
			require.Len(t, reloads, 2)
			assert.ErrorIs(t, reloads[1], podcert.ErrInvalidBundle)
		})
	}

	t.Run("openssl EC key with parameters", func(t *testing.T) {
		dir := t.TempDir()
		k, c := servingPair(t, ca, testkeys.Generated("p256"), "EC PRIVATE KEY")
		params := pem.EncodeToMemory(&pem.Block{Type: "EC PARAMETERS", Bytes: []byte{0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07}})
		require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.key"), append(params, k...), 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.crt"), c, 0o600))
		_, err := podcert.NewSource(podcert.SourceConfig{KeyPath: filepath.Join(dir, "tls.key"), ChainPath: filepath.Join(dir, "tls.crt"), AnyCertificate: true, Now: fixedClock(t0)})
		require.NoError(t, err)
	})

	for name, key := range map[string]string{"RSA 1024": "rsa1024", "P-224": "p224"} {
		t.Run("refuses "+name, func(t *testing.T) {
			dir := t.TempDir()
			k, c := servingPair(t, ca, testkeys.Generated(key), "PRIVATE KEY")
			require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.key"), k, 0o600))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "tls.crt"), c, 0o600))
			_, err := podcert.NewSource(podcert.SourceConfig{KeyPath: filepath.Join(dir, "tls.key"), ChainPath: filepath.Join(dir, "tls.crt"), AnyCertificate: true, Now: fixedClock(t0)})
			require.ErrorIs(t, err, podcert.ErrInvalidBundle)
			require.ErrorIs(t, err, jwks.ErrUnsupportedKey)
		})
	}
}

// TestSourceFileOverLimit: a file over MaxBundleSize is refused as over the
// limit, before it is read (the limit error was once dropped, leaving only
// "cannot read").
func TestSourceFileOverLimit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "credentialbundle.pem")
	require.NoError(t, os.WriteFile(path, make([]byte, podcert.MaxBundleSize+1), 0o600))
	_, err := podcert.NewSource(podcert.SourceConfig{BundlePath: path})
	require.ErrorIs(t, err, podcert.ErrInvalidBundle)
	require.ErrorIs(t, err, podcert.ErrLimit)
	assert.ErrorContains(t, err, "over the limit of "+strconv.Itoa(podcert.MaxBundleSize))
}

// TestSourceReadsABrokenWriteOnce: files that fail to load are not read
// again, nor reported again, on every use while they stay as they are
// (every handshake read and parsed a broken bundle again and reported it
// once more); the next change is loaded.
func TestSourceReadsABrokenWriteOnce(t *testing.T) {
	ca := newCA(t, false)
	s := newSigner(t, ca, nil)
	m := &mount{t: t, dir: t.TempDir()}
	k, c := issue(t, s, testkeys.Generated("p256"), func(p *podcert.Request) { p.PodName = "pod-a" })
	m.write(map[string][]byte{"credentialbundle.pem": append(k, c...)})
	var reloads []error
	src, err := podcert.NewSource(podcert.SourceConfig{BundlePath: filepath.Join(m.dir, "credentialbundle.pem"), Now: fixedClock(t0),
		OnReload: func(err error) { reloads = append(reloads, err) }})
	require.NoError(t, err)

	m.write(map[string][]byte{"credentialbundle.pem": k}) // the key without its chain
	for range 5 {
		got, err := src.GetCertificate(nil)
		require.NoError(t, err)
		assert.Equal(t, "pod-a", podOf(t, got))
	}
	require.Len(t, reloads, 1, "one broken write, one load")
	assert.ErrorIs(t, reloads[0], podcert.ErrInvalidBundle)

	require.NoError(t, os.Remove(filepath.Join(m.dir, "credentialbundle.pem")))
	for range 5 {
		_, err := src.GetCertificate(nil)
		require.NoError(t, err)
	}
	require.Len(t, reloads, 2, "a file gone: one load")
	assert.ErrorIs(t, reloads[1], os.ErrNotExist)

	k2, c2 := issue(t, s, testkeys.Generated("p384"), func(p *podcert.Request) { p.PodName = "pod-b" })
	m.write(map[string][]byte{"credentialbundle.pem": append(k2, c2...)})
	got, err := src.GetCertificate(nil)
	require.NoError(t, err)
	assert.Equal(t, "pod-b", podOf(t, got))
	assert.Equal(t, []error{nil}, reloads[2:])
}
