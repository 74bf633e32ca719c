package podcert_test

import (
	"crypto"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"net"
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
