package extsigner_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/extsigner/signertest"
	"github.com/ksa-go/ksa/jwks"
)

func TestSign(t *testing.T) {
	for _, tt := range []struct{ key, alg string }{
		{"p256", jwks.ES256}, {"p384", jwks.ES384}, {"p521", jwks.ES512}, {"rsa2048", jwks.RS256}, {"rsa3072", jwks.RS256},
	} {
		t.Run(tt.key, func(t *testing.T) {
			clk := newClock()
			ring := newRing(t, clk, key(tt.key))
			kid := ring.Primary().KeyID
			claims := encodeClaims(testClaims(clk.Now(), time.Hour))
			signed, err := ring.Sign(t.Context(), claims)
			require.NoError(t, err)
			assert.Equal(t, kid, signed.KeyID)

			header, err := base64.RawURLEncoding.DecodeString(signed.Header)
			require.NoError(t, err)
			assert.Equal(t, `{"alg":"`+tt.alg+`","kid":"`+kid+`","typ":"JWT"}`, string(header), "exactly alg, kid and typ")
			h, err := signertest.CheckHeader(signed.Header)
			require.NoError(t, err)
			assert.Equal(t, signertest.Header{Algorithm: tt.alg, KeyID: kid, Type: "JWT"}, h)

			res, err := validate(t, ring.KeySet(), signed.Header+"."+claims+"."+signed.Signature, clk.Now())
			require.NoError(t, err)
			assert.Equal(t, "system:serviceaccount:billing:api", res.UserInfo().Username)
		})
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// TestSignRefusesBadClaims: claims that are not a strict base64url JSON
// object with an exp within the lifetime are refused as ErrInvalidClaims,
// never signed.
func TestSignRefusesBadClaims(t *testing.T) {
	clk := newClock()
	ring := newRing(t, clk, key("p256"))
	exp := clk.Now().Add(time.Hour).Unix()
	good := b64(fmt.Sprintf(`{"exp":%d }`, exp))
	require.Len(t, good, 26, "four trailing bits in the last character")
	latest := clk.Now().Add(ring.MaxTokenLifetime() + extsigner.MaxClockSkew).Unix()
	tests := []struct {
		name, claims, reason string
	}{
		{name: "empty", claims: "", reason: "empty"},
		{name: "padded", claims: b64(`{"exp":1}`) + "==", reason: "base64url"},
		{name: "standard alphabet", claims: base64.RawStdEncoding.EncodeToString([]byte(`{"exp":1,"x":"??>>"}`)), reason: "base64url"},
		{name: "line feed", claims: good[:10] + "\n" + good[10:], reason: "base64url"},
		{name: "carriage return", claims: good[:10] + "\r" + good[10:], reason: "base64url"},
		{name: "non-zero trailing bits", claims: good[:25] + string(good[25]+1), reason: "base64url"},
		{name: "length of 4n+1", claims: good + "AAA", reason: "base64url"},
		{name: "not JSON", claims: b64("not json"), reason: "malformed token claims"},
		{name: "an array", claims: b64(`[{"exp":1}]`), reason: "malformed token claims"},
		{name: "a string", claims: b64(`"exp"`), reason: "malformed token claims"},
		{name: "null", claims: b64(`null`), reason: "malformed token claims"},
		{name: "two objects", claims: b64(fmt.Sprintf(`{"exp":%d} {}`, exp)), reason: "malformed token claims"},
		{name: "a claim twice", claims: b64(fmt.Sprintf(`{"exp":%d,"exp":%d}`, exp, exp)), reason: "malformed token claims"},
		{name: "a claim spelled in another case", claims: b64(fmt.Sprintf(`{"exp":%d,"EXP":%d}`, exp, exp)), reason: "malformed token claims"},
		{name: "exp a string", claims: b64(`{"exp":"tomorrow"}`), reason: "malformed token claims"},
		{name: "invalid UTF-8", claims: b64(fmt.Sprintf("{\"exp\":%d,\"x\":\"\xff\"}", exp)), reason: "malformed token claims"},
		{name: "nested too deep", claims: b64(fmt.Sprintf(`{"exp":%d,"x":%s%s}`, exp, strings.Repeat("[", 64), strings.Repeat("]", 64))), reason: "malformed token claims"},
		{name: "no exp", claims: b64(`{"iss":"x"}`), reason: "no exp"},
		{name: "exp a second too late", claims: b64(fmt.Sprintf(`{"exp":%d}`, latest+1)), reason: "maximum token lifetime"},
		{name: "over the size limit", claims: strings.Repeat("A", extsigner.MaxTokenBytes+1), reason: "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			signed, err := ring.Sign(t.Context(), tt.claims)
			require.ErrorIs(t, err, extsigner.ErrInvalidClaims)
			assert.Contains(t, err.Error(), tt.reason)
			assert.Equal(t, 1, strings.Count(err.Error(), "extsigner: "), err.Error())
			assert.Equal(t, extsigner.Signed{}, signed)
		})
	}

	// The latest exp accepted, exactly.
	_, err := ring.Sign(t.Context(), b64(fmt.Sprintf(`{"exp":%d}`, latest)))
	require.NoError(t, err)
}

// TestSignTokenSizeLimit: claims are accepted up to the length that makes a
// token of exactly MaxTokenBytes.
func TestSignTokenSizeLimit(t *testing.T) {
	for _, name := range []string{"p256", "rsa3072"} {
		t.Run(name, func(t *testing.T) {
			clk := newClock()
			ring := newRing(t, clk, key(name))
			probe, err := ring.Sign(t.Context(), b64(fmt.Sprintf(`{"exp":%d}`, clk.Now().Unix())))
			require.NoError(t, err)
			room := extsigner.MaxTokenBytes - len(probe.Header) - len(probe.Signature) - 2
			claimsOf := func(n int) string {
				// base64url of {"exp":N,"x":"..."} padded to n characters
				// (n mod 4 != 1 for unpadded base64url).
				head := fmt.Sprintf(`{"exp":%d,"x":"`, clk.Now().Unix())
				for fill := 0; ; fill++ {
					c := b64(head + strings.Repeat("a", fill) + `"}`)
					if len(c) >= n {
						return c
					}
				}
			}
			at := claimsOf(room)
			if len(at) != room { // room mod 4 == 1 cannot be reached
				at = claimsOf(room - 1)
			}
			signed, err := ring.Sign(t.Context(), at)
			require.NoError(t, err)
			assert.LessOrEqual(t, len(signed.Header)+len(at)+len(signed.Signature)+2, extsigner.MaxTokenBytes)
			assert.GreaterOrEqual(t, len(signed.Header)+len(at)+len(signed.Signature)+2, extsigner.MaxTokenBytes-1)

			over := claimsOf(room + 1)
			_, err = ring.Sign(t.Context(), over)
			require.ErrorIs(t, err, extsigner.ErrInvalidClaims)
			assert.Contains(t, err.Error(), "make a token of")
		})
	}
}

// failingSigner returns err from every call.
func failingSigner(pub crypto.PublicKey, err error) extsigner.ContextSigner {
	return extsigner.SignerFunc(pub, func(context.Context, []byte, crypto.SignerOpts) ([]byte, error) { return nil, err })
}

// TestSignKeyFailures: a signer that fails, or that signs with another key
// or returns a corrupt signature, never yields an answer.
func TestSignKeyFailures(t *testing.T) {
	p256 := key("p256").(*ecdsa.PrivateKey)
	rsaKey := key("rsa2048").(*rsa.PrivateKey)
	kmsDown := errors.New("kms: connection refused")
	tests := []struct {
		name     string
		signer   crypto.Signer
		ctx      func() context.Context
		wantKind error
		wantErr  error
	}{
		{name: "KMS down", signer: failingSigner(p256.Public(), kmsDown), wantKind: extsigner.ErrSignerFailed, wantErr: kmsDown},
		{
			name: "request context ended", wantKind: extsigner.ErrSignerFailed, wantErr: context.Canceled,
			signer: extsigner.SignerFunc(p256.Public(), func(ctx context.Context, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			}),
			ctx: func() context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx
			},
		},
		{
			name: "another key", wantKind: extsigner.ErrSelfCheck,
			signer: extsigner.SignerFunc(p256.Public(), func(_ context.Context, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
				return key("p256-other").Sign(rand.Reader, digest, opts)
			}),
		},
		{
			name: "corrupt RSA signature", wantKind: extsigner.ErrSelfCheck,
			signer: extsigner.SignerFunc(rsaKey.Public(), func(_ context.Context, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
				sig, err := rsaKey.Sign(rand.Reader, digest, opts)
				sig[10] ^= 1
				return sig, err
			}),
		},
		{
			name: "malformed ECDSA signature", wantKind: extsigner.ErrSignerFailed,
			signer: extsigner.SignerFunc(p256.Public(), func(context.Context, []byte, crypto.SignerOpts) ([]byte, error) {
				return []byte{0x30, 0x00}, nil
			}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newClock()
			ring := newRing(t, clk, tt.signer)
			ctx := t.Context()
			if tt.ctx != nil {
				ctx = tt.ctx()
			}
			signed, err := ring.Sign(ctx, encodeClaims(testClaims(clk.Now(), time.Hour)))
			var serr *extsigner.SignError
			require.ErrorAs(t, err, &serr)
			assert.ErrorIs(t, err, tt.wantKind)
			assert.Equal(t, ring.Primary().KeyID, serr.KeyID)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr, "the cause is kept")
				assert.Contains(t, err.Error(), tt.wantErr.Error())
			}
			assert.Equal(t, extsigner.Signed{}, signed)
		})
	}
}

// TestSignDuringRotation: signing while keys are staged and promoted
// always names a key the ring publishes, and verifies with it.
func TestSignDuringRotation(t *testing.T) {
	clk := newClock()
	ring := newRing(t, clk, key("p256"))
	claims := encodeClaims(testClaims(clk.Now(), time.Hour))
	names := []string{"p384", "p521", "rsa2048", "p256-b", "p256-c"}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				signed, err := ring.Sign(context.Background(), claims)
				if !assert.NoError(t, err) {
					return
				}
				set := ring.KeySet() // keys are only added here
				var k jwks.Key
				if i := slices.IndexFunc(set.Keys, func(k jwks.Key) bool { return k.KeyID == signed.KeyID }); i >= 0 {
					k = set.Keys[i]
				}
				h, _ := signertest.CheckHeader(signed.Header)
				assert.Equal(t, signed.KeyID, k.KeyID, "the kid is published")
				assert.NoError(t, verifies(h.Algorithm, k.Public, signed.Header, claims, signed.Signature))
			}
		})
	}
	for _, name := range names {
		k, err := ring.Stage(key(name), "")
		require.NoError(t, err)
		clk.Advance(ring.MinStaging())
		require.NoError(t, ring.Promote(k.KeyID))
	}
	close(stop)
	wg.Wait()
	assert.Len(t, ring.KeySet().Keys, len(names)+1)
}

// TestSignerFunc: the adapter is a crypto.Signer too; called without a
// context, the function gets context.Background().
func TestSignerFunc(t *testing.T) {
	k := key("p256")
	var got context.Context
	s := extsigner.SignerFunc(k.Public(), func(ctx context.Context, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
		got = ctx
		return k.Sign(rand.Reader, digest, opts)
	})
	assert.Equal(t, k.Public(), s.Public())
	digest := make([]byte, 32)
	sig, err := s.Sign(rand.Reader, digest, crypto.SHA256)
	require.NoError(t, err)
	assert.True(t, ecdsa.VerifyASN1(k.Public().(*ecdsa.PublicKey), digest, sig))
	assert.Equal(t, context.Background(), got)
}
