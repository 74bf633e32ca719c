package podcert_test

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/x509sa"
)

// issue runs a request for key through the signer and returns the key PEM
// and chain PEM as the kubelet would write them.
func issue(t testing.TB, s *podcert.Signer, key crypto.Signer, mod func(*certificatesv1.PodCertificateRequest)) (keyPEM, chainPEM []byte) {
	t.Helper()
	pcr := newPCR(t, key)
	if mod != nil {
		mod(pcr)
	}
	req := podcert.FromV1(pcr)
	d, err := s.Decide(&req)
	require.NoError(t, err)
	require.Equal(t, podcert.Issued, d.Outcome, d.Message)
	der, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), []byte(d.CertificateChain)
}

func TestParseBundle(t *testing.T) {
	ca := newCA(t, true)
	s := newSigner(t, ca, nil)
	keyPEM, chainPEM := issue(t, s, testkeys.Generated("p256"), nil)
	otherKey, _ := issue(t, s, testkeys.Generated("p384"), nil)
	certBlock := func(der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}) }
	cat := func(parts ...[]byte) []byte {
		return []byte(strings.Join(func() []string {
			var o []string
			for _, p := range parts {
				o = append(o, string(p))
			}
			return o
		}(), ""))
	}
	for _, tc := range []struct {
		name    string
		data    []byte
		wantErr error
	}{
		{name: "kubelet bundle", data: cat(keyPEM, chainPEM)},
		{name: "chain first", data: cat(chainPEM, keyPEM)},
		{name: "empty", data: nil, wantErr: podcert.ErrInvalidBundle},
		{name: "no key", data: chainPEM, wantErr: podcert.ErrInvalidBundle},
		{name: "no certificate", data: keyPEM, wantErr: podcert.ErrInvalidBundle},
		{name: "two keys", data: cat(keyPEM, otherKey, chainPEM), wantErr: podcert.ErrInvalidBundle},
		{name: "key of another leaf", data: cat(otherKey, chainPEM), wantErr: podcert.ErrInvalidBundle},
		{name: "text between blocks", data: cat(keyPEM, []byte("junk\n"), chainPEM), wantErr: podcert.ErrInvalidBundle},
		{name: "EC key block", data: cat([]byte(strings.ReplaceAll(string(keyPEM), "PRIVATE KEY", "EC PRIVATE KEY")), chainPEM), wantErr: podcert.ErrInvalidBundle},
		{name: "leaf not an identity", data: cat(keyPEM, certBlock(ca.cert.Raw)), wantErr: podcert.ErrInvalidBundle},
		{name: "garbage certificate", data: cat(keyPEM, certBlock([]byte{1, 2, 3})), wantErr: podcert.ErrInvalidBundle},
		{name: "too many certificates", data: cat(keyPEM, []byte(strings.Repeat(string(chainPEM), podcert.MaxBundleCertificates))), wantErr: podcert.ErrLimit},
		{name: "too large", data: make([]byte, podcert.MaxBundleSize+1), wantErr: podcert.ErrLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := podcert.ParseBundle(tc.data)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				assert.Nil(t, c)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "system:serviceaccount:shop:cart", c.Identity.ServiceAccount.Username())
			assert.Equal(t, "cart-7d9f", c.Identity.Pod.Name)
			assert.Len(t, c.Certificate.Certificate, 2)
			assert.Equal(t, x509sa.CredentialID(c.Certificate.Leaf), c.Identity.CredentialID)
		})
	}
	c, err := podcert.ParseKeyAndChain(keyPEM, chainPEM)
	require.NoError(t, err)
	assert.Equal(t, "cart", c.Identity.ServiceAccount.Name)
	_, err = podcert.ParseKeyAndChain(chainPEM, keyPEM)
	assert.ErrorIs(t, err, podcert.ErrInvalidBundle)
}

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
				k, c := issue(t, s, key, func(p *certificatesv1.PodCertificateRequest) { p.Spec.PodName = pod })
				if split {
					m.write(map[string][]byte{"key.pem": k, "chain.pem": c})
				} else {
					m.write(map[string][]byte{"credentialbundle.pem": append(k, c...)})
				}
			}
			cfg := podcert.SourceConfig{BundlePath: filepath.Join(m.dir, "credentialbundle.pem"), Clock: clock}
			if split {
				cfg = podcert.SourceConfig{KeyPath: filepath.Join(m.dir, "key.pem"), ChainPath: filepath.Join(m.dir, "chain.pem"), Clock: clock}
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
		assert.ErrorIs(t, err, podcert.ErrInvalidConfig)
	}
}

// TestMutualTLS: two pods, each with a certificate from the signer, do
// mutual TLS and learn each other's service account.
func TestMutualTLS(t *testing.T) {
	ca := newCA(t, true)
	s := newSigner(t, ca, nil)
	srcFor := func(key crypto.Signer, sa, pod string) *podcert.Source {
		k, c := issue(t, s, key, func(p *certificatesv1.PodCertificateRequest) { p.Spec.ServiceAccountName, p.Spec.PodName = sa, pod })
		path := filepath.Join(t.TempDir(), "bundle.pem")
		require.NoError(t, os.WriteFile(path, append(k, c...), 0o600))
		src, err := podcert.NewSource(podcert.SourceConfig{BundlePath: path, Clock: fixedClock(t0)})
		require.NoError(t, err)
		return src
	}
	ping, pong := srcFor(testkeys.Generated("p256"), "ping", "ping-0"), srcFor(testkeys.Generated("ed25519"), "pong", "pong-0")
	peers, err := podcert.NewPeers(podcert.PeerConfig{TrustBundle: s.TrustBundle(), TrustDomain: "cluster.local", Clock: fixedClock(t0)})
	require.NoError(t, err)

	handshake := func(client, server *tls.Config) (clientSaw, serverSaw ksa.Identity, cerr, serr error) {
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := tls.Server(b, server)
			if serr = sc.Handshake(); serr == nil {
				serverSaw, serr = peers.VerifyClient(sc.ConnectionState().PeerCertificates)
			}
			_ = b.Close()
		}()
		cc := tls.Client(a, client)
		if cerr = cc.Handshake(); cerr == nil {
			clientSaw, cerr = peers.VerifyServer(cc.ConnectionState().PeerCertificates)
		}
		_ = a.Close()
		<-done
		return
	}
	clientSaw, serverSaw, cerr, serr := handshake(peers.ClientConfig(ping, nil), peers.ServerConfig(pong, nil))
	require.NoError(t, cerr)
	require.NoError(t, serr)
	assert.Equal(t, "system:serviceaccount:shop:pong", clientSaw.ServiceAccount.Username())
	assert.Equal(t, "pong-0", clientSaw.Pod.Name)
	assert.Equal(t, "system:serviceaccount:shop:ping", serverSaw.ServiceAccount.Username())

	// A server admitting only pong refuses ping.
	onlyPong := func(id ksa.Identity) error {
		if id.ServiceAccount.Name != "pong" {
			return errors.New("not pong")
		}
		return nil
	}
	_, _, _, serr = handshake(peers.ClientConfig(ping, nil), peers.ServerConfig(pong, onlyPong))
	assert.ErrorContains(t, serr, "not pong")

	// Another CA's roots trust neither.
	otherKey := testkeys.Generated("p384-other-root")
	tmpl := caTemplate("other root", 9, t0.Add(-time.Hour), t0.Add(time.Hour))
	otherRoot := makeCert(t, tmpl, tmpl, otherKey.Public(), otherKey)
	other, err := podcert.NewPeers(podcert.PeerConfig{TrustBundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: otherRoot.Raw}), Clock: fixedClock(t0)})
	require.NoError(t, err)
	_, _, cerr, _ = handshake(other.ClientConfig(ping, nil), peers.ServerConfig(pong, nil))
	assert.ErrorIs(t, cerr, x509sa.ErrUntrusted)
}

func TestNewPeersValidates(t *testing.T) {
	for name, bundle := range map[string][]byte{
		"empty":     nil,
		"not PEM":   []byte("junk"),
		"key block": pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1}}),
		"bad cert":  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1}}),
		"too large": make([]byte, podcert.MaxTrustBundleSize+1),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := podcert.NewPeers(podcert.PeerConfig{TrustBundle: bundle})
			assert.ErrorIs(t, err, podcert.ErrInvalidConfig)
		})
	}
}
