package jwks_test

import (
	"bytes"
	"crypto"
	"crypto/ecdh"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
)

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func pkixPEM(t testing.TB, pub crypto.PublicKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	require.NoError(t, err)
	return pemBlock("PUBLIC KEY", der)
}

func pkcs8PEM(t testing.TB, priv any) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	require.NoError(t, err)
	return pemBlock("PRIVATE KEY", der)
}

// selfSignedPEM makes a self-signed certificate for key.
func selfSignedPEM(t testing.TB, key crypto.Signer) []byte {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "jwks test"},
		NotBefore:    time.Unix(0, 0),
		NotAfter:     time.Unix(1<<32, 0),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	require.NoError(t, err)
	return pemBlock("CERTIFICATE", der)
}

// brokenBase64PEM is a block pem.Decode cannot decode, and would skip.
const brokenBase64PEM = "-----BEGIN PUBLIC KEY-----\nMIIB!!!!notbase64\n-----END PUBLIC KEY-----\n"

// ecParamsPEM is the block openssl ecparam -genkey writes before the key.
const ecParamsPEM = "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n"

func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestParsePublicKeysPEM(t *testing.T) {
	k8sRSA := testkeys.K8sRSA().Public()
	k8sEC := testkeys.K8sEC().Public()
	p384 := testkeys.Generated("p384")
	ed := testkeys.Generated("ed25519")
	rsa3072 := testkeys.Generated("rsa3072")

	tests := []struct {
		name string
		data func(t *testing.T) []byte
		want []crypto.PublicKey
	}{
		{name: "Kubernetes RSA public key", data: func(*testing.T) []byte { return testkeys.PEM("k8s-rsa.pub.pem") }, want: []crypto.PublicKey{k8sRSA}},
		{name: "Kubernetes RSA private key", data: func(*testing.T) []byte { return testkeys.PEM("k8s-rsa.key.pem") }, want: []crypto.PublicKey{k8sRSA}},
		{name: "Kubernetes EC public key", data: func(*testing.T) []byte { return testkeys.PEM("k8s-ec.pub.pem") }, want: []crypto.PublicKey{k8sEC}},
		{name: "Kubernetes EC private key", data: func(*testing.T) []byte { return testkeys.PEM("k8s-ec.key.pem") }, want: []crypto.PublicKey{k8sEC}},
		{name: "several blocks in order", data: func(*testing.T) []byte {
			return concat(testkeys.PEM("k8s-ec.pub.pem"), testkeys.PEM("k8s-rsa.key.pem"), testkeys.PEM("k8s-other-rsa.pub.pem"))
		}, want: []crypto.PublicKey{k8sEC, k8sRSA, testkeys.K8sOtherRSAPublic()}},
		{name: "EC PARAMETERS skipped", data: func(*testing.T) []byte {
			return concat([]byte(ecParamsPEM), testkeys.PEM("k8s-ec.key.pem"))
		}, want: []crypto.PublicKey{k8sEC}},
		{name: "other block types skipped", data: func(*testing.T) []byte {
			return concat(pemBlock("CERTIFICATE REQUEST", []byte("junk")), pemBlock("X509 CRL", []byte("junk")), testkeys.PEM("k8s-rsa.pub.pem"))
		}, want: []crypto.PublicKey{k8sRSA}},
		{name: "text around blocks", data: func(*testing.T) []byte {
			return concat([]byte("Bag Attributes\n  friendlyName: key\n"), testkeys.PEM("k8s-rsa.pub.pem"), []byte("trailing text\n"))
		}, want: []crypto.PublicKey{k8sRSA}},
		{name: "self-signed certificate", data: func(t *testing.T) []byte { return selfSignedPEM(t, p384) }, want: []crypto.PublicKey{p384.Public()}},
		{name: "RSA certificate and key", data: func(t *testing.T) []byte {
			return concat(selfSignedPEM(t, testkeys.K8sRSA()), testkeys.PEM("k8s-ec.pub.pem"))
		}, want: []crypto.PublicKey{k8sRSA, k8sEC}},
		{name: "PKCS#8 RSA private key", data: func(t *testing.T) []byte { return pkcs8PEM(t, rsa3072) }, want: []crypto.PublicKey{rsa3072.Public()}},
		{name: "PKCS#8 EC private key", data: func(t *testing.T) []byte { return pkcs8PEM(t, p384) }, want: []crypto.PublicKey{p384.Public()}},
		{name: "PKCS#8 Ed25519 private key", data: func(t *testing.T) []byte { return pkcs8PEM(t, ed) }, want: []crypto.PublicKey{ed.Public()}},
		{name: "PKIX Ed25519 public key", data: func(t *testing.T) []byte { return pkixPEM(t, ed.Public()) }, want: []crypto.PublicKey{ed.Public()}},
		{name: "PKCS#1 RSA public key", data: func(*testing.T) []byte {
			return pemBlock("RSA PUBLIC KEY", x509.MarshalPKCS1PublicKey(k8sRSA.(*rsa.PublicKey)))
		}, want: []crypto.PublicKey{k8sRSA}},
		{name: "CRLF line ends", data: func(*testing.T) []byte {
			crlf := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) }
			return concat(crlf(testkeys.PEM("k8s-ec.key.pem")), crlf(testkeys.PEM("k8s-rsa.pub.pem")))
		}, want: []crypto.PublicKey{k8sEC, k8sRSA}},
		{name: "BEGIN inside text is not a block", data: func(*testing.T) []byte {
			return concat([]byte("see the -----BEGIN PUBLIC KEY----- block below\n"), testkeys.PEM("k8s-rsa.pub.pem"))
		}, want: []crypto.PublicKey{k8sRSA}},
		{name: "duplicates kept", data: func(*testing.T) []byte {
			return concat(testkeys.PEM("k8s-rsa.pub.pem"), testkeys.PEM("k8s-rsa.key.pem"))
		}, want: []crypto.PublicKey{k8sRSA, k8sRSA}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jwks.ParsePublicKeysPEM(tt.data(t))
			require.NoError(t, err)
			require.Len(t, got, len(tt.want))
			for i, w := range tt.want {
				assert.IsType(t, w, got[i])
				assert.True(t, w.(interface{ Equal(crypto.PublicKey) bool }).Equal(got[i]), "key #%d", i)
				require.NoError(t, jwks.CheckPublicKey(got[i]), "public keys only")
			}
		})
	}
}

func TestParsePublicKeysPEMKubernetesKeyIDs(t *testing.T) {
	keys, err := jwks.ParsePublicKeysPEM(concat(testkeys.PEM("k8s-rsa.pub.pem"), testkeys.PEM("k8s-ec.key.pem")))
	require.NoError(t, err)
	ks, err := newKeys(keys[0], keys[1])
	require.NoError(t, err)
	assert.Equal(t, testkeys.K8sRSAKeyID, ks[0].KeyID)
	assert.Equal(t, testkeys.K8sECKeyID, ks[1].KeyID)
}

// encryptedPEM is a legacy encrypted PEM block (RFC 1421 headers).
func encryptedPEM(typ string) []byte {
	return pem.EncodeToMemory(&pem.Block{
		Type:    typ,
		Headers: map[string]string{"Proc-Type": "4,ENCRYPTED", "DEK-Info": "AES-128-CBC,00112233445566778899AABBCCDDEEFF"},
		Bytes:   bytes.Repeat([]byte{0x5a}, 64),
	})
}

type pemErrorCase struct {
	name      string
	data      func(t *testing.T) []byte
	wantErr   error
	wantBlock int
	wantType  string
	// alsoUnsupported: the cause is a key ksa does not accept.
	alsoUnsupported bool
}

// check holds err to the case: its sentinel and no other, the block it
// names by position and type (none for the data as a whole).
func (tt pemErrorCase) check(t *testing.T, err error) {
	t.Helper()
	require.ErrorIs(t, err, tt.wantErr)
	for _, other := range []error{jwks.ErrNoKeys, jwks.ErrMalformedPEM} {
		if other != tt.wantErr {
			require.NotErrorIs(t, err, other)
		}
	}
	if tt.wantBlock >= 0 {
		assert.Contains(t, err.Error(), fmt.Sprintf("PEM block #%d (%s): ", tt.wantBlock, tt.wantType))
	} else {
		assert.NotContains(t, err.Error(), "PEM block #")
	}
	if tt.alsoUnsupported {
		require.ErrorIs(t, err, jwks.ErrUnsupportedKey)
	} else {
		require.NotErrorIs(t, err, jwks.ErrUnsupportedKey)
	}
}

func TestParsePublicKeysPEMErrors(t *testing.T) {
	rsa1024 := testkeys.Generated("rsa1024")
	tests := []pemErrorCase{
		{name: "empty", data: func(*testing.T) []byte { return nil }, wantErr: jwks.ErrNoKeys, wantBlock: -1},
		{name: "not PEM", data: func(*testing.T) []byte { return []byte("not a key\n") }, wantErr: jwks.ErrNoKeys, wantBlock: -1},
		{name: "only EC PARAMETERS", data: func(*testing.T) []byte { return []byte(ecParamsPEM) }, wantErr: jwks.ErrNoKeys, wantBlock: -1},
		{name: "truncated block", data: func(*testing.T) []byte {
			b := testkeys.PEM("k8s-rsa.pub.pem")
			return b[:len(b)/2]
		}, wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "PUBLIC KEY"},
		{name: "truncated block after a good one", data: func(*testing.T) []byte {
			b := testkeys.PEM("k8s-rsa.key.pem")
			return concat(testkeys.PEM("k8s-ec.pub.pem"), b[:len(b)-30])
		}, wantErr: jwks.ErrMalformedPEM, wantBlock: 1, wantType: "RSA PRIVATE KEY"},
		{name: "broken base64 before a good block", data: func(*testing.T) []byte {
			return concat([]byte(brokenBase64PEM), testkeys.PEM("k8s-ec.pub.pem"))
		}, wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "PUBLIC KEY"},
		{name: "broken BEGIN line", data: func(*testing.T) []byte {
			return concat([]byte("-----BEGIN PUBLIC KEY\nAAAA\n-----END PUBLIC KEY-----\n"), testkeys.PEM("k8s-ec.pub.pem"))
		}, wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "?"},
		{name: "corrupt public key", data: func(*testing.T) []byte { return pemBlock("PUBLIC KEY", []byte("garbage")) },
			wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "PUBLIC KEY"},
		{name: "corrupt key after a good one", data: func(*testing.T) []byte {
			return concat(testkeys.PEM("k8s-rsa.pub.pem"), []byte(ecParamsPEM), pemBlock("EC PRIVATE KEY", []byte("garbage")))
		}, wantErr: jwks.ErrMalformedPEM, wantBlock: 2, wantType: "EC PRIVATE KEY"},
		{name: "corrupt certificate", data: func(*testing.T) []byte { return pemBlock("CERTIFICATE", []byte{0x30, 0x03, 0x02, 0x01, 0x01}) },
			wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "CERTIFICATE"},
		{name: "RSA public key in a PKCS#8 block", data: func(*testing.T) []byte {
			return pemBlock("PRIVATE KEY", x509.MarshalPKCS1PublicKey(testkeys.K8sOtherRSAPublic()))
		}, wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "PRIVATE KEY"},
		{name: "encrypted RSA private key", data: func(*testing.T) []byte { return encryptedPEM("RSA PRIVATE KEY") },
			wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "RSA PRIVATE KEY"},
		{name: "encrypted EC private key", data: func(*testing.T) []byte { return encryptedPEM("EC PRIVATE KEY") },
			wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "EC PRIVATE KEY"},
		{name: "RSA 1024 public key", data: func(t *testing.T) []byte { return pkixPEM(t, rsa1024.Public()) },
			wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "PUBLIC KEY", alsoUnsupported: true},
		{name: "RSA 1024 private key", data: func(*testing.T) []byte {
			return pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsa1024.(*rsa.PrivateKey)))
		}, wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "RSA PRIVATE KEY", alsoUnsupported: true},
		{name: "RSA 1024 certificate", data: func(t *testing.T) []byte { return selfSignedPEM(t, rsa1024) },
			wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "CERTIFICATE", alsoUnsupported: true},
		{name: "P-224 public key", data: func(t *testing.T) []byte { return pkixPEM(t, testkeys.Generated("p224").Public()) },
			wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "PUBLIC KEY", alsoUnsupported: true},
		{name: "X25519 public key", data: func(t *testing.T) []byte {
			k, err := ecdh.X25519().GenerateKey(rand.Reader)
			require.NoError(t, err)
			return pkixPEM(t, k.PublicKey())
		}, wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "PUBLIC KEY", alsoUnsupported: true},
		{name: "X25519 PKCS#8 private key", data: func(t *testing.T) []byte {
			k, err := ecdh.X25519().GenerateKey(rand.Reader)
			require.NoError(t, err)
			return pkcs8PEM(t, k)
		}, wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "PRIVATE KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, err := jwks.ParsePublicKeysPEM(tt.data(t))
			assert.Nil(t, keys)
			tt.check(t, err)
		})
	}
}

// FuzzParsePublicKeysPEM: ParsePublicKeysPEM never panics, returns only
// keys ksa accepts, and refuses with exactly one of its two sentinels.
func FuzzParsePublicKeysPEM(f *testing.F) {
	for _, seed := range [][]byte{
		testkeys.PEM("k8s-rsa.pub.pem"), testkeys.PEM("k8s-ec.key.pem"), testkeys.PEM("k8s-rsa.key.pem"),
		concat([]byte(ecParamsPEM), testkeys.PEM("k8s-ec.key.pem")),
		concat([]byte(brokenBase64PEM), testkeys.PEM("k8s-ec.pub.pem")),
		encryptedPEM("RSA PRIVATE KEY"), pemBlock("CERTIFICATE", []byte{0x30, 0x03, 0x02, 0x01, 0x01}),
		[]byte("-----BEGIN PUBLIC KEY\nAAAA\n-----END PUBLIC KEY-----\n"), nil,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, err := jwks.ParsePublicKeysPEM(data)
		if err != nil {
			require.Nil(t, keys)
			require.NotEqual(t, errors.Is(err, jwks.ErrNoKeys), errors.Is(err, jwks.ErrMalformedPEM), "one sentinel: %v", err)
			return
		}
		require.NotEmpty(t, keys)
		for _, k := range keys {
			require.NoError(t, jwks.CheckPublicKey(k))
		}
	})
}
