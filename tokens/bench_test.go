package tokens_test

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

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/tokens"
)

// benchKeys are the two algorithms Kubernetes signs with in practice.
var benchKeys = []struct {
	name string
	key  func() crypto.Signer
}{
	{"RS256", func() crypto.Signer { return testkeys.K8sRSA() }},
	{"ES256", func() crypto.Signer { return testkeys.K8sEC() }},
}

func benchRequest() tokens.Request {
	return tokens.Request{
		ServiceAccount: ksa.ServiceAccount{Namespace: "myns", Name: "mysvcacct", UID: "0c4b5f3e-9a7d-4f3c-8a59-6f1d2c3b4a5e"},
		BoundObject:    &tokens.BoundObject{Kind: tokens.BoundPod, Name: "mypod-7d4f8b9c6-x2x4z", UID: "7f2b3c4d-5e6f-4a1b-9c8d-7e6f5a4b3c2d"},
		Node:           &ksa.ObjectRef{Name: "node-1", UID: "1a2b3c4d-5e6f-4a1b-9c8d-7e6f5a4b3c2d"},
	}
}

// BenchmarkValidate compares validation with a static key against the bare
// signature check on the same token (hash + verify, signature already
// decoded): the overhead of parsing and every check.
func BenchmarkValidate(b *testing.B) {
	for _, bk := range benchKeys {
		key := bk.key()
		m := mustMinter(b, key)
		tok, err := m.Mint(b.Context(), benchRequest())
		if err != nil {
			b.Fatal(err)
		}
		v := mustValidator(b, mustSource(b, key.Public()))
		b.Run(bk.name+"/ksa", func(b *testing.B) {
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.Validate(ctx, tok.Raw); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bk.name+"/bare", func(b *testing.B) {
			i := strings.LastIndexByte(tok.Raw, '.')
			input := tok.Raw[:i]
			sig, _ := base64.RawURLEncoding.DecodeString(tok.Raw[i+1:])
			b.ReportAllocs()
			for b.Loop() {
				if !bareVerify(key.Public(), input, sig) {
					b.Fatal("bare verify failed")
				}
			}
		})
	}
}

func bareVerify(pub crypto.PublicKey, input string, sig []byte) bool {
	h := sha256.Sum256([]byte(input))
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return rsa.VerifyPKCS1v15(k, crypto.SHA256, h[:], sig) == nil
	case *ecdsa.PublicKey:
		return ecdsa.Verify(k, h[:], bigInt(sig[:32]), bigInt(sig[32:]))
	}
	return false
}

// BenchmarkMint compares minting a pod-bound token with the bare signature
// over a payload of the same size.
func BenchmarkMint(b *testing.B) {
	for _, bk := range benchKeys {
		key := bk.key()
		m := mustMinter(b, key)
		req := benchRequest()
		tok, err := m.Mint(b.Context(), req)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bk.name+"/ksa", func(b *testing.B) {
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Mint(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bk.name+"/bare", func(b *testing.B) {
			input := []byte(tok.Raw[:strings.LastIndexByte(tok.Raw, '.')])
			b.ReportAllocs()
			for b.Loop() {
				h := sha256.Sum256(input)
				if _, err := key.Sign(rand.Reader, h[:], crypto.SHA256); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func bigInt(b []byte) *big.Int { return new(big.Int).SetBytes(b) }
