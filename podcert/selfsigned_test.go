package podcert_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/podcert"
)

func TestSelfSigned(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		cert, certPEM, err := podcert.SelfSigned(podcert.SelfSignedConfig{Now: fixedClock(t0)})
		require.NoError(t, err)
		leaf := cert.Leaf
		require.NotNil(t, leaf)
		assert.Equal(t, "localhost", leaf.Subject.CommonName)
		assert.Equal(t, []string{"localhost"}, leaf.DNSNames)
		require.Len(t, leaf.IPAddresses, 2)
		assert.True(t, leaf.IPAddresses[0].Equal(net.IPv4(127, 0, 0, 1)))
		assert.True(t, leaf.IPAddresses[1].Equal(net.IPv6loopback))
		assert.Equal(t, t0.Add(-time.Minute), leaf.NotBefore)
		assert.Equal(t, t0.Add(podcert.DefaultSelfSignedLifetime), leaf.NotAfter)
		assert.Equal(t, 24*time.Hour, podcert.DefaultSelfSignedLifetime)
		assert.Equal(t, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, leaf.ExtKeyUsage)
		assert.Equal(t, x509.KeyUsageDigitalSignature, leaf.KeyUsage)
		assert.False(t, leaf.IsCA)
		pub, ok := leaf.PublicKey.(*ecdsa.PublicKey)
		require.True(t, ok)
		assert.Equal(t, elliptic.P256(), pub.Curve)
		assert.True(t, pub.Equal(cert.PrivateKey.(*ecdsa.PrivateKey).Public()))

		block, rest := pem.Decode(certPEM)
		require.NotNil(t, block)
		assert.Empty(t, rest)
		assert.Equal(t, "CERTIFICATE", block.Type)
		assert.Equal(t, cert.Certificate[0], block.Bytes)
		roots := x509.NewCertPool()
		require.True(t, roots.AppendCertsFromPEM(certPEM))
		_, err = leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: "localhost", CurrentTime: t0})
		require.NoError(t, err)
	})

	t.Run("hosts, name and lifetime", func(t *testing.T) {
		cert, _, err := podcert.SelfSigned(podcert.SelfSignedConfig{CommonName: "ksa-webhook", Hosts: []string{"Webhook.NS.svc", "10.0.0.1"},
			Lifetime: podcert.MaxSelfSignedLifetime, Now: fixedClock(t0)})
		require.NoError(t, err)
		assert.Equal(t, "ksa-webhook", cert.Leaf.Subject.CommonName)
		assert.Equal(t, []string{"webhook.ns.svc"}, cert.Leaf.DNSNames)
		require.Len(t, cert.Leaf.IPAddresses, 1)
		assert.Equal(t, "10.0.0.1", cert.Leaf.IPAddresses[0].String())
		assert.Equal(t, t0.Add(91*24*time.Hour), cert.Leaf.NotAfter)
	})

	t.Run("serves TLS", func(t *testing.T) {
		cert, certPEM, err := podcert.SelfSigned(podcert.SelfSignedConfig{})
		require.NoError(t, err)
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
		srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
		srv.StartTLS()
		t.Cleanup(srv.Close)
		roots := x509.NewCertPool()
		require.True(t, roots.AppendCertsFromPEM(certPEM))
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
		resp, err := client.Get(srv.URL)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		assert.Equal(t, "ok", string(body))
	})

	for _, tc := range []struct {
		name  string
		cfg   podcert.SelfSignedConfig
		field string
	}{
		{name: "bad host", cfg: podcert.SelfSignedConfig{Hosts: []string{"*.example.com"}}, field: "podcert.SelfSignedConfig.Hosts"},
		{name: "negative lifetime", cfg: podcert.SelfSignedConfig{Lifetime: -time.Second}, field: "podcert.SelfSignedConfig.Lifetime"},
		{name: "lifetime over the limit", cfg: podcert.SelfSignedConfig{Lifetime: podcert.MaxSelfSignedLifetime + time.Second}, field: "podcert.SelfSignedConfig.Lifetime"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := podcert.SelfSigned(tc.cfg)
			require.ErrorIs(t, err, ksa.ErrInvalidConfig)
			var ce *ksa.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, tc.field, ce.Field)
		})
	}

	t.Run("random source fails", func(t *testing.T) {
		_, _, err := podcert.SelfSigned(podcert.SelfSignedConfig{Rand: failingRand{}})
		require.ErrorIs(t, err, podcert.ErrSigning)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	})
}
