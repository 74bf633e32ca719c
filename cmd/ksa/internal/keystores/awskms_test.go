//go:build !ksa_noawskms

package keystores

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/keystoretest"
)

// TestAWSKMS creates EC P-256 and RSA 2048 keys in local-kms, an
// independent implementation of the AWS KMS API, opens them by the
// reference Create returns and signs with them.
func TestAWSKMS(t *testing.T) {
	kms := keystoretest.StartLocalKMS(t)
	s := &Stores{}
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()

	for _, tt := range []struct {
		name string
		spec KeySpec
	}{
		{"ECDSA P-256", KeySpec{Curve: elliptic.P256()}},
		{"RSA 2048", KeySpec{RSA: true, Bits: 2048}},
		{"ECDSA P-384", KeySpec{Curve: elliptic.P384()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := s.Create(ctx, "awskms:name=ksa-test;region="+keystoretest.LocalKMSRegion, tt.spec)
			require.NoError(t, err)
			ref, err := keystore.ParseRef(c.Ref)
			require.NoError(t, err, "the reference Create returns opens the key")
			assert.True(t, strings.HasPrefix(c.Ref, "awskms:region="+keystoretest.LocalKMSRegion+";key-id="), c.Ref)
			switch k := c.Public.(type) {
			case *rsa.PublicKey:
				assert.Equal(t, 2048, k.N.BitLen(), "the size asked, not go.step.sm's 3072")
			case *ecdsa.PublicKey:
				assert.Equal(t, tt.spec.Curve, k.Curve)
			}
			signer, err := s.Open(ctx, ref.String())
			require.NoError(t, err)
			assert.True(t, c.Public.(interface{ Equal(crypto.PublicKey) bool }).Equal(signer.Public()))
			verify(t, signer)
			arn, err := s.Open(ctx, "awskms:key-id=arn:aws:kms:"+keystoretest.LocalKMSRegion+":111122223333:key/"+ref.Attr("key-id"))
			require.NoError(t, err)
			verify(t, arn)
		})
	}
	t.Run("8 goroutines sign at once", func(t *testing.T) {
		c, err := s.Create(ctx, "awskms:name=ksa-concurrent", KeySpec{Curve: elliptic.P256()})
		require.NoError(t, err)
		signer, err := s.Open(ctx, c.Ref)
		require.NoError(t, err)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 10 {
					verify(t, signer)
				}
			})
		}
		wg.Wait()
	})
	t.Run("missing key", func(t *testing.T) {
		_, err := s.Open(ctx, "awskms:key-id=00000000-0000-4000-8000-000000000000")
		storeErr(t, err, keystore.ErrKeyStore, "AWS KMS has no key 00000000-0000-4000-8000-000000000000")
	})
	t.Run("size AWS KMS does not make", func(t *testing.T) {
		_, err := s.Create(ctx, "awskms:name=ksa-test", KeySpec{RSA: true, Bits: 2560})
		storeErr(t, err, keystore.ErrKeyStore, "AWS KMS does not make RSA 2560 keys")
	})
	_ = kms
}

// TestAWSKMSUnanswered: an AWS KMS endpoint that accepts connections and
// never answers holds Open only until the caller's context ends, not for
// the SDK's own 15 s and its retries.
func TestAWSKMSUnanswered(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	errUnanswered := errors.New("the endpoint took the connection and said nothing")
	ctx, cancel := context.WithCancelCause(t.Context())
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			cancel(errUnanswered)
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	t.Setenv("AWS_ENDPOINT_URL_KMS", "http://"+l.Addr().String())
	t.Setenv("AWS_REGION", "eu-west-2")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAKSATEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "ksa-test-secret")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")

	s := &Stores{}
	defer s.Close()
	_, err = s.Open(ctx, "awskms:key-id=1234abcd-12ab-34cd-56ef-1234567890ab")
	e := storeErr(t, err, keystore.ErrKeyStore, "AWS KMS at http://"+l.Addr().String()+" did not answer", "ksa-test-secret")
	require.ErrorIs(t, e, errUnanswered, "the caller's context ended the wait")
}
