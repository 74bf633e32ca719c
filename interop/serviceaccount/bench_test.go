package serviceaccount_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"math/big"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authentication/authenticator"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/tokens"
)

// BenchmarkValidate measures, side by side on the same pod-bound token:
// ksa's validator with a static key and live-object checks, Kubernetes'
// JWTTokenAuthenticator with its bound-token validator over the same
// objects, and the bare signature verification (hash + verify).
func BenchmarkValidate(b *testing.B) {
	sc := scenario{audiences: []string{audience}, exp: 3600, pod: true, node: true}
	for _, k := range []struct {
		name string
		key  crypto.Signer
	}{{"RS256", testkeys.K8sRSA()}, {"ES256", testkeys.K8sEC()}} {
		s := liveStore()
		t := &testing.T{}
		raw := kubeMint(t, k.key, sc)
		v := ksaValidator(t, s, sc.audiences, k.key.Public())
		kube := kubeAuthenticator(t, s, k.key.Public())

		b.Run(k.name+"/ksa", func(b *testing.B) {
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Validate(ctx, raw); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(k.name+"/kubernetes", func(b *testing.B) {
			ctx := authenticator.WithAudiences(b.Context(), sc.audiences)
			b.ReportAllocs()
			for b.Loop() {
				if _, ok, err := kube.AuthenticateToken(ctx, raw); !ok || err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(k.name+"/bare", func(b *testing.B) {
			i := strings.LastIndexByte(raw, '.')
			input := raw[:i]
			sig, _ := base64.RawURLEncoding.DecodeString(raw[i+1:])
			pub := k.key.Public()
			b.ReportAllocs()
			for b.Loop() {
				h := sha256.Sum256([]byte(input))
				var ok bool
				switch pk := pub.(type) {
				case *rsa.PublicKey:
					ok = rsa.VerifyPKCS1v15(pk, crypto.SHA256, h[:], sig) == nil
				case *ecdsa.PublicKey:
					ok = ecdsa.Verify(pk, h[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
				}
				if !ok {
					b.Fatal("bare verify failed")
				}
			}
		})
	}
}

// BenchmarkMint compares ksa's minter with Kubernetes' Claims() +
// JWTTokenGenerator and with the bare signature, for a pod-bound token.
func BenchmarkMint(b *testing.B) {
	sc := scenario{audiences: []string{audience}, exp: 3600, pod: true, node: true}
	for _, k := range []struct {
		name string
		key  crypto.Signer
	}{{"RS256", testkeys.K8sRSA()}, {"ES256", testkeys.K8sEC()}} {
		m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: k.key, APIAudiences: []string{audience}})
		if err != nil {
			b.Fatal(err)
		}
		req := ksaRequest(sc)
		b.Run(k.name+"/ksa", func(b *testing.B) {
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Mint(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(k.name+"/kubernetes", func(b *testing.B) {
			t := &testing.T{}
			b.ReportAllocs()
			for b.Loop() {
				kubeMint(t, k.key, sc)
			}
		})
		b.Run(k.name+"/bare", func(b *testing.B) {
			t := &testing.T{}
			raw := kubeMint(t, k.key, sc)
			input := []byte(raw[:strings.LastIndexByte(raw, '.')])
			b.ReportAllocs()
			for b.Loop() {
				h := sha256.Sum256(input)
				if _, err := k.key.Sign(rand.Reader, h[:], crypto.SHA256); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
