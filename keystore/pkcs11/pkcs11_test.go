//go:build cgo

package pkcs11_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/internal/storetest"
	"github.com/ksa-go/ksa/keystore/keystoretest"
	"github.com/ksa-go/ksa/keystore/pkcs11"
)

// TestConformance runs the key stores' shared checks on a SoftHSM2 token:
// imported keys, keys the Store creates.
func TestConformance(t *testing.T) {
	hsm := keystoretest.StartSoftHSM(t)
	ec, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)
	require.NoError(t, hsm.Import(ec, "0a0b", "sa-ec"))
	rs, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	require.NoError(t, hsm.Import(rs, "0c0d", "sa-rsa"))
	store, err := pkcs11.NewStore(pkcs11.Config{})
	require.NoError(t, err)
	n := 0
	keystoretest.Run(t, keystoretest.Config{
		Opener: store,
		Keys:   []keystoretest.Key{{Ref: hsm.Ref("0a0b", ""), Public: ec.Public()}, {Ref: hsm.Ref("", "sa-rsa"), Public: rs.Public()}},
		NewKey: func(keystore.KeySpec) string {
			n++
			return hsm.Ref(fmt.Sprintf("10%02x", n), fmt.Sprintf("new-%d", n))
		},
		Missing: hsm.Ref("ffff", "nope"),
		Secrets: []string{hsm.PIN},
	})
}

// TestPKCS11 creates, imports, opens and signs with keys on a SoftHSM2
// token, as ksa issuer keygen and the signers do.
func TestPKCS11(t *testing.T) {
	hsm := keystoretest.StartSoftHSM(t)
	imported, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	require.NoError(t, hsm.Import(imported, "0c0d", "sa-imported"))
	weak, err := rsa.GenerateKey(rand.Reader, 1024)
	require.NoError(t, err)
	require.NoError(t, hsm.Import(weak, "0e0f", "weak"))

	s := &pkcs11.Store{}
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()

	ec, err := s.Create(ctx, hsm.Ref("0a0b", "sa-ec"), keystore.KeySpec{})
	require.NoError(t, err)
	assert.Equal(t, hsm.Ref("0a0b", "sa-ec"), ec.Ref, "the reference as given")
	assert.Equal(t, elliptic.P256(), ec.Public.(*ecdsa.PublicKey).Curve, "the zero KeySpec is ECDSA P-256")
	rs, err := s.Create(ctx, hsm.Ref("1001", "sa-rsa"), keystore.KeySpec{RSA: true, Bits: 2048})
	require.NoError(t, err)
	assert.Equal(t, 2048, rs.Public.(*rsa.PublicKey).N.BitLen(), "the size asked, not go.step.sm's 3072")
	p384, err := s.Create(ctx, hsm.Ref("2002", "sa-p384"), keystore.KeySpec{Curve: elliptic.P384()})
	require.NoError(t, err)

	t.Run("open by id, object or both", func(t *testing.T) {
		for _, tt := range []struct {
			ref  string
			want crypto.PublicKey
		}{
			{hsm.Ref("0a0b", ""), ec.Public}, {hsm.Ref("", "sa-ec"), ec.Public}, {hsm.Ref("0a0b", "sa-ec"), ec.Public},
			{strings.Replace(hsm.Ref("0a0b", ""), "id=0a0b", "id=%0a%0b", 1), ec.Public},
			{hsm.Ref("1001", ""), rs.Public}, {hsm.Ref("", "sa-p384"), p384.Public},
			{hsm.Ref("0c0d", "sa-imported"), imported.Public()},
		} {
			signer, err := s.Open(ctx, tt.ref)
			require.NoError(t, err, tt.ref)
			assert.True(t, tt.want.(interface{ Equal(crypto.PublicKey) bool }).Equal(signer.Public()), tt.ref)
			storetest.Verify(t, signer)
		}
	})
	t.Run("PIN from the environment", func(t *testing.T) {
		t.Setenv("KSA_TEST_HSM_PIN", hsm.PIN)
		ref := strings.Replace(hsm.Ref("0a0b", ""), "pin-source="+hsm.PINFile, "pin-source=env:KSA_TEST_HSM_PIN", 1)
		signer, err := s.Open(ctx, ref)
		require.NoError(t, err)
		storetest.Verify(t, signer)
	})
	wrongPIN := filepath.Join(t.TempDir(), "wrong-pin")
	require.NoError(t, os.WriteFile(wrongPIN, []byte("00000000\n"), 0o600))
	t.Run("wrong PIN after the token was opened", func(t *testing.T) {
		// The token accepts any PIN once the process is logged in; the
		// Store refuses a PIN that differs from the first.
		ref := strings.Replace(hsm.Ref("0a0b", ""), hsm.PINFile, wrongPIN, 1)
		_, err := s.Open(ctx, ref)
		storetest.StoreErr(t, err, keystore.ErrKeyStore, "its PIN differs", hsm.PIN, "00000000")
	})
	t.Run("token named another way", func(t *testing.T) {
		ref := strings.Replace(hsm.Ref("0a0b", ""), "token="+hsm.Token, "slot-id=0", 1)
		_, err := s.Open(ctx, ref)
		storetest.StoreErr(t, err, keystore.ErrKeyStore, "names its token by slot-id, another key of this process a token of the same module by token")
	})
	t.Run("missing key", func(t *testing.T) {
		_, err := s.Open(ctx, hsm.Ref("ffff", "nope"))
		storetest.StoreErr(t, err, keystore.ErrKeyStore, `token ksa holds no key pair with id ffff and object "nope"`)
	})
	t.Run("key too weak", func(t *testing.T) {
		_, err := s.Open(ctx, hsm.Ref("0e0f", ""))
		storetest.StoreErr(t, err, jwks.ErrUnsupportedKey, "holds a key ksa cannot use")
	})
	t.Run("existing id or object", func(t *testing.T) {
		for _, ref := range []string{hsm.Ref("0a0b", "other"), hsm.Ref("3003", "sa-ec"), hsm.Ref("0a0b", "sa-ec")} {
			_, err := s.Create(ctx, ref, keystore.KeySpec{Curve: elliptic.P256()})
			storetest.StoreErr(t, err, keystore.ErrKeyStore, "holds a key with", hsm.PIN)
		}
	})
	t.Run("PIN file missing", func(t *testing.T) {
		ref := strings.Replace(hsm.Ref("0a0b", ""), hsm.PINFile, filepath.Join(t.TempDir(), "nope"), 1)
		_, err := s.Open(ctx, ref)
		e := storetest.StoreErr(t, err, keystore.ErrKeyStore, "its PIN cannot be read")
		require.ErrorIs(t, e, os.ErrNotExist)
	})
}

// TestReadPIN: Config.ReadPIN answers the PIN of each reference, and its
// failure is the Store's, the cause wrapped.
func TestReadPIN(t *testing.T) {
	hsm := keystoretest.StartSoftHSM(t)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	require.NoError(t, hsm.Import(key, "0a0b", "sa"))
	errNoSecret := errors.New("no Secret for this pin-source")
	var asked []string
	s, err := pkcs11.NewStore(pkcs11.Config{ReadPIN: func(r keystore.Ref) (string, error) {
		asked = append(asked, r.Attr("pin-source"))
		if r.Attr("pin-source") == "env:KSA_FROM_SECRET" {
			return hsm.PIN, nil
		}
		return "", errNoSecret
	}})
	require.NoError(t, err)
	defer s.Close()
	ref := strings.Replace(hsm.Ref("0a0b", ""), "pin-source="+hsm.PINFile, "pin-source=env:KSA_FROM_SECRET", 1)
	signer, err := s.Open(t.Context(), ref)
	require.NoError(t, err, "the PIN from ReadPIN, not from the (unset) environment variable")
	storetest.Verify(t, signer)
	_, err = s.Open(t.Context(), hsm.Ref("0a0b", ""))
	e := storetest.StoreErr(t, err, keystore.ErrKeyStore, "its PIN cannot be read: no Secret for this pin-source")
	require.ErrorIs(t, e, errNoSecret)
	assert.Equal(t, []string{"env:KSA_FROM_SECRET", hsm.PINFile}, asked)
}

// TestPKCS11Refusals: a fresh Store meets a wrong PIN, a missing token, a
// missing module; none of the messages shows the PIN.
func TestPKCS11Refusals(t *testing.T) {
	hsm := keystoretest.StartSoftHSM(t)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	require.NoError(t, hsm.Import(key, "0a0b", "sa"))
	wrongPIN := filepath.Join(t.TempDir(), "wrong-pin")
	require.NoError(t, os.WriteFile(wrongPIN, []byte("00000000\n"), 0o600))
	tests := []struct {
		name, ref, want string
	}{
		{name: "wrong PIN", ref: strings.Replace(hsm.Ref("0a0b", ""), hsm.PINFile, wrongPIN, 1), want: "the token refused the PIN: CKR_PIN_INCORRECT"},
		{name: "missing token", ref: strings.Replace(hsm.Ref("0a0b", ""), "token=ksa", "token=nope", 1), want: "has no token with token nope"},
		{name: "missing module", ref: strings.Replace(hsm.Ref("0a0b", ""), hsm.Module, "/nonexistent/libnope.so", 1), want: "the PKCS #11 module /nonexistent/libnope.so cannot be loaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &pkcs11.Store{}
			defer s.Close()
			_, err := s.Open(t.Context(), tt.ref)
			storetest.StoreErr(t, err, keystore.ErrKeyStore, tt.want, hsm.PIN, "00000000")
			assert.Equal(t, tt.name == "wrong PIN", errors.Is(err, keystore.ErrLoginRefused), "only the PIN refused is a login refused")
		})
	}
	t.Run("the public key is read once", func(t *testing.T) {
		s := &pkcs11.Store{}
		signer, err := s.Open(t.Context(), hsm.Ref("0a0b", ""))
		require.NoError(t, err)
		require.NoError(t, s.Close())
		assert.True(t, key.PublicKey.Equal(signer.Public()), "Public answers with the token closed")
		_, err = signer.Sign(rand.Reader, make([]byte, 32), crypto.SHA256)
		storetest.StoreErr(t, err, keystore.ErrKeyStore, "signing failed")
	})
	t.Run("a caller that gave up", func(t *testing.T) {
		s := &pkcs11.Store{}
		defer s.Close()
		signer, err := s.Open(t.Context(), hsm.Ref("0a0b", ""))
		require.NoError(t, err)
		errGone := errors.New("kube-apiserver gave up")
		ctx, cancel := context.WithCancelCause(t.Context())
		cancel(errGone)
		_, err = signer.(interface {
			SignContext(context.Context, io.Reader, []byte, crypto.SignerOpts) ([]byte, error)
		}).SignContext(ctx, rand.Reader, make([]byte, 32), crypto.SHA256)
		e := storetest.StoreErr(t, err, keystore.ErrKeyStore, "signing failed")
		require.ErrorIs(t, e, errGone)
	})
}
