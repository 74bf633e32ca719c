package oidc_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/oidc/oidctest"
	"github.com/ksa-go/ksa/tokens"
)

// benchRequest is the pod-bound token of tokens' BenchmarkValidate, with
// the relying party's audience.
func benchRequest() tokens.Request {
	return tokens.Request{
		ServiceAccount: ksa.ServiceAccount{Namespace: "myns", Name: "mysvcacct", UID: "0c4b5f3e-9a7d-4f3c-8a59-6f1d2c3b4a5e"},
		Audiences:      []string{"vault"},
		BoundObject:    &tokens.BoundObject{Kind: tokens.BoundPod, Name: "mypod-7d4f8b9c6-x2x4z", UID: "7f2b3c4d-5e6f-4a1b-9c8d-7e6f5a4b3c2d"},
		Node:           &ksa.ObjectRef{Name: "node-1", UID: "1a2b3c4d-5e6f-4a1b-9c8d-7e6f5a4b3c2d"},
	}
}

// BenchmarkVerify compares, on one token per algorithm, the relying
// party's path (a Verifier whose remote key set is already fetched), the
// validator with a static key (tokens' BenchmarkValidate), and the bare
// signature check (hash and verify, the signature already decoded): what
// the issuer's key set and the per-issuer keys add to validation.
func BenchmarkVerify(b *testing.B) {
	now := time.Unix(1700000000, 0)
	clock := func() time.Time { return now }
	for _, bk := range []struct {
		name string
		key  crypto.Signer
	}{
		{"RS256", testkeys.K8sRSA()},
		{"ES256", testkeys.K8sEC()},
	} {
		srv := oidctest.Start(b, oidctest.Config{Signer: bk.key, Now: clock})
		raw := mint(b, srv, benchRequest())

		verifier, err := oidc.NewVerifier(b.Context(), oidc.VerifierConfig{
			Issuers: []string{srv.Issuer()}, Audiences: []string{"vault"}, Client: srv.Client(), Now: clock,
		})
		require.NoError(b, err)
		_, err = verifier.Verify(b.Context(), raw) // fetches the key set
		require.NoError(b, err)

		pub, err := jwks.NewKey(bk.key.Public())
		require.NoError(b, err)
		static, err := jwks.NewStaticSource(pub)
		require.NoError(b, err)
		validator, err := tokens.NewValidator(tokens.ValidatorConfig{
			Issuers: []string{srv.Issuer()}, Keys: static, Audiences: []string{"vault"}, SkipObjectCheck: true, Now: clock,
		})
		require.NoError(b, err)

		b.Run(bk.name+"/verifier", func(b *testing.B) {
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := verifier.Verify(ctx, raw); err != nil {
					b.Fatal(err)
				}
			}
			if _, fetches := srv.Requests(); fetches != 1 {
				b.Fatalf("%d key set fetches, want 1", fetches)
			}
		})
		b.Run(bk.name+"/validator", func(b *testing.B) {
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := validator.Validate(ctx, raw); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bk.name+"/bare", func(b *testing.B) {
			i := strings.LastIndexByte(raw, '.')
			input := raw[:i]
			sig, err := base64.RawURLEncoding.DecodeString(raw[i+1:])
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				if !bareVerify(bk.key.Public(), input, sig) {
					b.Fatal("bare verify failed")
				}
			}
		})
	}
}

// bareVerify is the signature check alone.
func bareVerify(pub crypto.PublicKey, input string, sig []byte) bool {
	h := sha256.Sum256([]byte(input))
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return rsa.VerifyPKCS1v15(k, crypto.SHA256, h[:], sig) == nil
	case *ecdsa.PublicKey:
		return ecdsa.Verify(k, h[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
	}
	return false
}
