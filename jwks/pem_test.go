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
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strings"
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

func (tt pemErrorCase) check(t *testing.T, err error, source string) {
	t.Helper()
	require.ErrorIs(t, err, tt.wantErr)
	var pe *jwks.PEMError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, tt.wantErr, pe.Kind)
	assert.Equal(t, tt.wantBlock, pe.Block)
	assert.Equal(t, tt.wantType, pe.Type)
	assert.Equal(t, source, pe.Source)
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
			tt.check(t, err, "")
		})
	}
}

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
			signer, err := jwks.ParseSigningKeyPEM(tt.data(t))
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
			signer, err := jwks.ParseSigningKeyPEM(tt.data(t))
			assert.Nil(t, signer)
			tt.check(t, err, "")
		})
	}
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

// padTo appends newlines to data up to size bytes.
func padTo(data []byte, size int) []byte {
	return append(bytes.Clone(data), bytes.Repeat([]byte("\n"), size-len(data))...)
}

func TestLoadPublicKeysFile(t *testing.T) {
	path := writeFile(t, "sa.pub", concat(testkeys.PEM("k8s-rsa.pub.pem"), testkeys.PEM("k8s-ec.key.pem")))
	keys, err := jwks.LoadPublicKeysFile(path)
	require.NoError(t, err)
	require.Len(t, keys, 2)
	ks, err := newKeys(keys[0], keys[1])
	require.NoError(t, err)
	assert.Equal(t, testkeys.K8sRSAKeyID, ks[0].KeyID)
	assert.Equal(t, testkeys.K8sECKeyID, ks[1].KeyID)

	t.Run("exactly MaxPEMFileBytes", func(t *testing.T) {
		path := writeFile(t, "big.pem", padTo(testkeys.PEM("k8s-rsa.pub.pem"), jwks.MaxPEMFileBytes))
		keys, err := jwks.LoadPublicKeysFile(path)
		require.NoError(t, err)
		assert.Len(t, keys, 1)
	})
	t.Run("MaxPEMFileBytes+1", func(t *testing.T) {
		path := writeFile(t, "big.pem", padTo(testkeys.PEM("k8s-rsa.pub.pem"), jwks.MaxPEMFileBytes+1))
		_, err := jwks.LoadPublicKeysFile(path)
		tt := pemErrorCase{wantErr: jwks.ErrMalformedPEM, wantBlock: -1}
		tt.check(t, err, path)
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := jwks.LoadPublicKeysFile(filepath.Join(t.TempDir(), "missing.pem"))
		require.ErrorIs(t, err, fs.ErrNotExist)
	})
	t.Run("directory", func(t *testing.T) {
		_, err := jwks.LoadPublicKeysFile(t.TempDir())
		require.Error(t, err)
	})
	t.Run("no keys names the file", func(t *testing.T) {
		path := writeFile(t, "empty.pem", []byte(ecParamsPEM))
		_, err := jwks.LoadPublicKeysFile(path)
		tt := pemErrorCase{wantErr: jwks.ErrNoKeys, wantBlock: -1}
		tt.check(t, err, path)
	})
	t.Run("corrupt block names the file", func(t *testing.T) {
		path := writeFile(t, "bad.pem", pemBlock("PUBLIC KEY", []byte("garbage")))
		_, err := jwks.LoadPublicKeysFile(path)
		tt := pemErrorCase{wantErr: jwks.ErrMalformedPEM, wantBlock: 0, wantType: "PUBLIC KEY"}
		tt.check(t, err, path)
	})
}

func TestLoadSigningKeyFile(t *testing.T) {
	path := writeFile(t, "sa.key", testkeys.PEM("k8s-rsa.key.pem"))
	signer, err := jwks.LoadSigningKeyFile(path)
	require.NoError(t, err)
	kid, err := jwks.KeyID(signer)
	require.NoError(t, err)
	assert.Equal(t, testkeys.K8sRSAKeyID, kid)

	t.Run("exactly MaxPEMFileBytes", func(t *testing.T) {
		path := writeFile(t, "big.key", padTo(testkeys.PEM("k8s-ec.key.pem"), jwks.MaxPEMFileBytes))
		signer, err := jwks.LoadSigningKeyFile(path)
		require.NoError(t, err)
		assert.True(t, testkeys.K8sEC().PublicKey.Equal(signer.Public()))
	})
	t.Run("MaxPEMFileBytes+1", func(t *testing.T) {
		path := writeFile(t, "big.key", padTo(testkeys.PEM("k8s-ec.key.pem"), jwks.MaxPEMFileBytes+1))
		_, err := jwks.LoadSigningKeyFile(path)
		tt := pemErrorCase{wantErr: jwks.ErrMalformedPEM, wantBlock: -1}
		tt.check(t, err, path)
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := jwks.LoadSigningKeyFile(filepath.Join(t.TempDir(), "missing.key"))
		require.ErrorIs(t, err, fs.ErrNotExist)
	})
	t.Run("public key file", func(t *testing.T) {
		path := writeFile(t, "sa.pub", testkeys.PEM("k8s-rsa.pub.pem"))
		_, err := jwks.LoadSigningKeyFile(path)
		tt := pemErrorCase{wantErr: jwks.ErrNoKeys, wantBlock: -1}
		tt.check(t, err, path)
	})
}

// TestLoadKeyFileUnreadable: a file that cannot be opened is a typed error
// matching ErrKeyFile and the cause.
func TestLoadKeyFileUnreadable(t *testing.T) {
	_, err := jwks.LoadPublicKeysFile(filepath.Join(t.TempDir(), "missing.pem"))
	require.ErrorIs(t, err, jwks.ErrKeyFile)
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = jwks.LoadSigningKeyFile(filepath.Join(t.TempDir(), "missing.pem"))
	require.ErrorIs(t, err, jwks.ErrKeyFile)
}
