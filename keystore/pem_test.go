package keystore_test

import (
	"crypto"
	"crypto/ecdh"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
)

func TestParseSigningKeyPEM(t *testing.T) {
	p384 := testkeys.Generated("p384")
	ed := testkeys.Generated("ed25519")
	rsa3072 := testkeys.Generated("rsa3072")
	tests := []struct {
		name string
		data func(t *testing.T) []byte
		want crypto.PublicKey
	}{
		{name: "Kubernetes RSA key", data: func(*testing.T) []byte { return testkeys.PEM("k8s-rsa.key.pem") }, want: testkeys.K8sRSA().Public()},
		{name: "Kubernetes EC key", data: func(*testing.T) []byte { return testkeys.PEM("k8s-ec.key.pem") }, want: testkeys.K8sEC().Public()},
		{name: "EC key after EC PARAMETERS", data: func(*testing.T) []byte {
			return concat([]byte(ecParamsPEM), testkeys.PEM("k8s-ec.key.pem"))
		}, want: testkeys.K8sEC().Public()},
		{name: "PKCS#8 RSA", data: func(t *testing.T) []byte { return pkcs8PEM(t, rsa3072) }, want: rsa3072.Public()},
		{name: "PKCS#8 EC", data: func(t *testing.T) []byte { return pkcs8PEM(t, p384) }, want: p384.Public()},
		{name: "PKCS#8 Ed25519", data: func(t *testing.T) []byte { return pkcs8PEM(t, ed) }, want: ed.Public()},
		{name: "public keys and certificates skipped", data: func(t *testing.T) []byte {
			return concat(testkeys.PEM("k8s-rsa.pub.pem"), selfSignedPEM(t, p384), testkeys.PEM("k8s-ec.key.pem"))
		}, want: testkeys.K8sEC().Public()},
		{name: "first private key wins", data: func(*testing.T) []byte {
			return concat(testkeys.PEM("k8s-ec.key.pem"), testkeys.PEM("k8s-rsa.key.pem"))
		}, want: testkeys.K8sEC().Public()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			signer, err := keystore.ParseSigningKeyPEM(tt.data(t))
			require.NoError(t, err)
			assert.True(t, tt.want.(interface{ Equal(crypto.PublicKey) bool }).Equal(signer.Public()))
		})
	}
}

func TestParseSigningKeyPEMErrors(t *testing.T) {
	rsa1024 := testkeys.Generated("rsa1024")
	tests := []pemErrorCase{
		{name: "empty", data: func(*testing.T) []byte { return nil }, wantErr: jwks.ErrNoKeys, wantBlock: -1},
		{name: "public key only", data: func(*testing.T) []byte { return testkeys.PEM("k8s-rsa.pub.pem") }, wantErr: jwks.ErrNoKeys, wantBlock: -1},
		{name: "certificate only", data: func(t *testing.T) []byte { return selfSignedPEM(t, testkeys.K8sEC()) }, wantErr: jwks.ErrNoKeys, wantBlock: -1},
		{name: "corrupt RSA key", data: func(*testing.T) []byte {
			return concat(testkeys.PEM("k8s-rsa.pub.pem"), pemBlock("RSA PRIVATE KEY", []byte("garbage")))
		}, wantErr: jwks.ErrMalformedPEM, wantBlock: 1, wantType: "RSA PRIVATE KEY"},
		{name: "corrupt PKCS#8 key", data: func(*testing.T) []byte { return pemBlock("PRIVATE KEY", []byte("garbage")) },
			wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "PRIVATE KEY"},
		{name: "encrypted", data: func(*testing.T) []byte { return encryptedPEM("RSA PRIVATE KEY") },
			wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "RSA PRIVATE KEY"},
		{name: "broken block before the key", data: func(*testing.T) []byte {
			return concat([]byte(strings.ReplaceAll(brokenBase64PEM, "PUBLIC", "EC PRIVATE")), testkeys.PEM("k8s-rsa.key.pem"))
		}, wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "EC PRIVATE KEY"},
		{name: "truncated key", data: func(*testing.T) []byte {
			b := testkeys.PEM("k8s-rsa.key.pem")
			return b[:len(b)-30]
		}, wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "RSA PRIVATE KEY"},
		{name: "RSA 1024", data: func(*testing.T) []byte {
			return pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsa1024.(*rsa.PrivateKey)))
		}, wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "RSA PRIVATE KEY", alsoUnsupported: true},
		{name: "P-224", data: func(t *testing.T) []byte { return pkcs8PEM(t, testkeys.Generated("p224")) },
			wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "PRIVATE KEY", alsoUnsupported: true},
		{name: "X25519", data: func(t *testing.T) []byte {
			k, err := ecdh.X25519().GenerateKey(rand.Reader)
			require.NoError(t, err)
			return pkcs8PEM(t, k)
		}, wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "PRIVATE KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			signer, err := keystore.ParseSigningKeyPEM(tt.data(t))
			assert.Nil(t, signer)
			tt.check(t, err)
		})
	}
}

// FuzzParseSigningKeyPEM: ParseSigningKeyPEM never panics, returns only
// keys ksa accepts, and refuses with exactly one of its two sentinels;
// the key it returns is one jwks.ParsePublicKeysPEM reads from the same
// data, when that reads it.
func FuzzParseSigningKeyPEM(f *testing.F) {
	for _, seed := range [][]byte{
		testkeys.PEM("k8s-rsa.key.pem"), testkeys.PEM("k8s-ec.key.pem"), testkeys.PEM("k8s-rsa.pub.pem"),
		concat([]byte(ecParamsPEM), testkeys.PEM("k8s-ec.key.pem")),
		concat([]byte(strings.ReplaceAll(brokenBase64PEM, "PUBLIC", "EC PRIVATE")), testkeys.PEM("k8s-rsa.key.pem")),
		encryptedPEM("EC PRIVATE KEY"), pemBlock("PRIVATE KEY", []byte("garbage")), nil,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		signer, err := keystore.ParseSigningKeyPEM(data)
		if err != nil {
			require.Nil(t, signer)
			require.NotEqual(t, errors.Is(err, jwks.ErrNoKeys), errors.Is(err, jwks.ErrMalformedPEM), "one sentinel: %v", err)
			return
		}
		require.NoError(t, jwks.CheckPublicKey(signer.Public()))
		if pubs, err := jwks.ParsePublicKeysPEM(data); err == nil {
			found := false
			for _, p := range pubs {
				found = found || p.(interface{ Equal(crypto.PublicKey) bool }).Equal(signer.Public())
			}
			require.True(t, found, "the signing key is one of the file's public keys")
		}
	})
}
