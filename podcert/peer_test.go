package podcert_test

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/x509sa"
)

// TestMutualTLS: two pods, each with a certificate from the signer, do
// mutual TLS and learn each other's service account.
func TestMutualTLS(t *testing.T) {
	ca := newCA(t, true)
	s := newSigner(t, ca, nil)
	srcFor := func(key crypto.Signer, sa, pod string) *podcert.Source {
		k, c := issue(t, s, key, func(p *podcert.Request) { p.ServiceAccountName, p.PodName = sa, pod })
		path := filepath.Join(t.TempDir(), "bundle.pem")
		require.NoError(t, os.WriteFile(path, append(k, c...), 0o600))
		src, err := podcert.NewSource(podcert.SourceConfig{BundlePath: path, Now: fixedClock(t0)})
		require.NoError(t, err)
		return src
	}
	ping, pong := srcFor(testkeys.Generated("p256"), "ping", "ping-0"), srcFor(testkeys.Generated("ed25519"), "pong", "pong-0")
	peers, err := podcert.NewPeers(podcert.PeerConfig{TrustBundle: s.TrustBundle(), TrustDomain: "cluster.local", Now: fixedClock(t0)})
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
	other, err := podcert.NewPeers(podcert.PeerConfig{TrustBundle: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: otherRoot.Raw}), Now: fixedClock(t0)})
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
			assert.ErrorIs(t, err, ksa.ErrInvalidConfig)
		})
	}
}

// handshakeOnce runs one TLS handshake over a pipe and returns the
// connection states of both ends.
func handshakeOnce(client, server *tls.Config) (cs, ss tls.ConnectionState, cerr, serr error) {
	a, b := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := tls.Server(b, server)
		serr = sc.Handshake()
		ss = sc.ConnectionState()
		_ = b.Close()
	}()
	cc := tls.Client(a, client)
	cerr = cc.Handshake()
	cs = cc.ConnectionState()
	_ = a.Close()
	<-done
	return cs, ss, cerr, serr
}

// TestPeersFollowTheTrustFile: peers configured with a TrustFile use the
// roots the kubelet projected last, as a CA rotation publishes them: a
// certificate of the next CA is refused until the bundle holds that CA,
// then accepted on both sides; once the old CA leaves the bundle, its
// certificates are refused.
func TestPeersFollowTheTrustFile(t *testing.T) {
	oldCA := newCA(t, false)
	nextKey := testkeys.Generated("p256-next-root")
	nextTmpl := caTemplate("ksa test next root", 3, t0.Add(-time.Hour), t0.Add(365*24*time.Hour))
	nextRoot := makeCert(t, nextTmpl, nextTmpl, nextKey.Public(), nextKey)
	nextCA := &testCA{root: nextRoot, cert: nextRoot, key: nextKey, chain: []*x509.Certificate{nextRoot}}
	oldSigner, nextSigner := newSigner(t, oldCA, nil), newSigner(t, nextCA, nil)
	srcFor := func(s *podcert.Signer, sa string) *podcert.Source {
		k, c := issue(t, s, testkeys.Generated("p256"), func(p *podcert.Request) { p.ServiceAccountName = sa })
		path := filepath.Join(t.TempDir(), "bundle.pem")
		require.NoError(t, os.WriteFile(path, append(k, c...), 0o600))
		src, err := podcert.NewSource(podcert.SourceConfig{BundlePath: path, Now: fixedClock(t0)})
		require.NoError(t, err)
		return src
	}
	m := &mount{t: t, dir: t.TempDir()}
	m.write(map[string][]byte{"ca.pem": oldSigner.TrustBundle()})
	trust, err := podcert.NewTrustFile(podcert.TrustFileConfig{Path: filepath.Join(m.dir, "ca.pem")})
	require.NoError(t, err)
	peers, err := podcert.NewPeers(podcert.PeerConfig{TrustFile: trust, TrustDomain: "cluster.local", Now: fixedClock(t0)})
	require.NoError(t, err)
	oldPing, nextPong := srcFor(oldSigner, "ping"), srcFor(nextSigner, "pong")
	server := peers.ServerConfig(nextPong, nil) // one configuration for the whole test
	client := peers.ClientConfig(oldPing, nil)

	_, _, cerr, serr := handshakeOnce(client, server)
	require.Error(t, cerr, "the next CA is not trusted yet")
	require.Error(t, serr)

	m.write(map[string][]byte{"ca.pem": append(oldSigner.TrustBundle(), nextSigner.TrustBundle()...)})
	cs, ss, cerr, serr := handshakeOnce(client, server)
	require.NoError(t, cerr)
	require.NoError(t, serr)
	id, err := peers.Identity(&ss)
	require.NoError(t, err)
	assert.Equal(t, "ping", id.ServiceAccount.Name, "the server learns the client's identity")
	id, err = peers.VerifyServer(cs.PeerCertificates)
	require.NoError(t, err)
	assert.Equal(t, "pong", id.ServiceAccount.Name)

	m.write(map[string][]byte{"ca.pem": nextSigner.TrustBundle()})
	_, _, _, serr = handshakeOnce(client, server)
	require.Error(t, serr, "the old CA is retired")
	_, err = peers.Identity(&ss)
	require.ErrorIs(t, err, x509sa.ErrUntrusted, "requests on a connection of the retired CA are refused")

	_, err = podcert.NewPeers(podcert.PeerConfig{TrustFile: trust, TrustBundle: oldSigner.TrustBundle()})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
}

// TestPeersIdentityVerifiesNothingAgain: the identity of a request comes
// from the chain crypto/tls verified in the handshake (a handler used to
// verify the chain again on every request): Identity accepts a verified
// chain without checking its signatures, which VerifyClient refuses, and
// refuses connections whose chains it cannot vouch for.
func TestPeersIdentityVerifiesNothingAgain(t *testing.T) {
	ca := newCA(t, true)
	s := newSigner(t, ca, nil)
	k, c := issue(t, s, testkeys.Generated("p256"), nil)
	cred, err := podcert.ParseBundle(append(k, c...))
	require.NoError(t, err)
	now := t0
	peers, err := podcert.NewPeers(podcert.PeerConfig{TrustBundle: s.TrustBundle(), Now: func() time.Time { return now }})
	require.NoError(t, err)
	leaf := *cred.Certificate.Leaf
	leaf.Signature = append([]byte(nil), leaf.Signature...)
	leaf.Signature[len(leaf.Signature)-1] ^= 0xff // no longer the CA's signature
	verified := []*x509.Certificate{&leaf, ca.cert, ca.root}

	_, err = peers.VerifyClient(verified)
	require.ErrorIs(t, err, x509sa.ErrUntrusted, "verifying the chain finds the bad signature")
	id, err := peers.Identity(&tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{verified}})
	require.NoError(t, err, "Identity takes the handshake's verification")
	assert.Equal(t, "cart", id.ServiceAccount.Name)

	for _, tc := range []struct {
		name string
		cs   *tls.ConnectionState
		at   time.Time
	}{
		{name: "no connection state", cs: nil},
		{name: "no verified chain", cs: &tls.ConnectionState{PeerCertificates: verified}},
		{name: "a root of another bundle", cs: &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{&leaf, ca.cert}}}},
		{name: "a certificate expired since the handshake", cs: &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{verified}}, at: leaf.NotAfter.Add(time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now = t0
			if !tc.at.IsZero() {
				now = tc.at
			}
			_, err := peers.Identity(tc.cs)
			require.ErrorIs(t, err, x509sa.ErrUntrusted)
		})
	}
}

// TestServerConfigWithHTTP: handlers of a server on ServerConfig read the
// client's identity with Identity, request after request on one
// connection.
func TestServerConfigWithHTTP(t *testing.T) {
	ca := newCA(t, false)
	s := newSigner(t, ca, nil)
	bundleFile := func(sa string) *podcert.Source {
		k, c := issue(t, s, testkeys.Generated("p256"), func(p *podcert.Request) { p.ServiceAccountName = sa })
		path := filepath.Join(t.TempDir(), "bundle.pem")
		require.NoError(t, os.WriteFile(path, append(k, c...), 0o600))
		src, err := podcert.NewSource(podcert.SourceConfig{BundlePath: path, Now: fixedClock(t0)})
		require.NoError(t, err)
		return src
	}
	peers, err := podcert.NewPeers(podcert.PeerConfig{TrustBundle: s.TrustBundle(), Now: fixedClock(t0)})
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := peers.Identity(r.TLS)
		if err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		_, _ = w.Write([]byte(id.ServiceAccount.Username()))
	}))
	srv.TLS = peers.ServerConfig(bundleFile("api"), nil)
	srv.StartTLS()
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: peers.ClientConfig(bundleFile("web"), nil)}}
	for range 3 {
		resp, err := client.Get(srv.URL)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "system:serviceaccount:shop:web", string(body))
	}
}
