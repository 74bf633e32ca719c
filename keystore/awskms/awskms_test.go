package awskms_test

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

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/awskms"
	"github.com/ksa-go/ksa/keystore/internal/storetest"
	"github.com/ksa-go/ksa/keystore/keystoretest"
)

// TestConformance runs the key stores' shared checks on local-kms, an
// independent implementation of the AWS KMS API: keys the Store creates,
// 16 goroutines signing through 4 calls in flight.
func TestConformance(t *testing.T) {
	keystoretest.StartLocalKMS(t)
	store, err := awskms.NewStore(awskms.Config{MaxCalls: 4})
	require.NoError(t, err)
	keystoretest.Run(t, keystoretest.Config{
		Opener:     store,
		NewKey:     func(keystore.KeySpec) string { return "awskms:name=ksa-conformance" },
		Missing:    "awskms:key-id=00000000-0000-4000-8000-000000000000",
		Secrets:    []string{"ksa-test-secret"},
		Goroutines: 16,
	})
}

func TestNewStore(t *testing.T) {
	_, err := awskms.NewStore(awskms.Config{MaxCalls: -1})
	var ce *ksa.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "awskms.Config.MaxCalls", ce.Field)
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
}

// TestAWSKMS creates EC P-256 and RSA 2048 keys in local-kms, opens them
// by the reference Create returns and by their ARN, and signs with them.
func TestAWSKMS(t *testing.T) {
	keystoretest.StartLocalKMS(t)
	s := &awskms.Store{}
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()

	for _, tt := range []struct {
		name string
		spec keystore.KeySpec
	}{
		{"ECDSA P-256", keystore.KeySpec{Curve: elliptic.P256()}},
		{"RSA 2048", keystore.KeySpec{RSA: true, Bits: 2048}},
		{"ECDSA P-384", keystore.KeySpec{Curve: elliptic.P384()}},
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
			storetest.Verify(t, signer)
			arn, err := s.Open(ctx, "awskms:key-id=arn:aws:kms:"+keystoretest.LocalKMSRegion+":111122223333:key/"+ref.Attr("key-id"))
			require.NoError(t, err)
			storetest.Verify(t, arn)
		})
	}
	t.Run("missing key", func(t *testing.T) {
		_, err := s.Open(ctx, "awskms:key-id=00000000-0000-4000-8000-000000000000")
		storetest.StoreErr(t, err, keystore.ErrKeyStore, "AWS KMS has no key 00000000-0000-4000-8000-000000000000")
	})
	t.Run("size AWS KMS does not make", func(t *testing.T) {
		_, err := s.Create(ctx, "awskms:name=ksa-test", keystore.KeySpec{RSA: true, Bits: 2560})
		storetest.StoreErr(t, err, keystore.ErrKeyStore, "AWS KMS does not make RSA 2560 keys")
	})
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

	s := &awskms.Store{}
	defer s.Close()
	_, err = s.Open(ctx, "awskms:key-id=1234abcd-12ab-34cd-56ef-1234567890ab")
	e := storetest.StoreErr(t, err, keystore.ErrKeyStore, "AWS KMS at http://"+l.Addr().String()+" did not answer", "ksa-test-secret")
	require.ErrorIs(t, e, errUnanswered, "the caller's context ended the wait")
}
