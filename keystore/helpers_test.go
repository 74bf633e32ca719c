package keystore_test

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/jwks"
)

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
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
		Subject:      pkix.Name{CommonName: "keystore test"},
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
