package podcert_test

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/x509sa"
)

// issue runs a request for key through the signer and returns the key PEM
// and chain PEM as the kubelet would write them.
func issue(t testing.TB, s *podcert.Signer, key crypto.Signer, mod func(*podcert.Request)) (keyPEM, chainPEM []byte) {
	t.Helper()
	req := newRequest(t, key)
	if mod != nil {
		mod(&req)
	}
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
			assert.Equal(t, "spiffe://cluster.local/ns/shop/sa/cart", c.SPIFFEID.String())
		})
	}
	c, err := podcert.ParseKeyAndChain(keyPEM, chainPEM)
	require.NoError(t, err)
	assert.Equal(t, "cart", c.Identity.ServiceAccount.Name)
	_, err = podcert.ParseKeyAndChain(chainPEM, keyPEM)
	assert.ErrorIs(t, err, podcert.ErrInvalidBundle)
}
