package tokens

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
)

func BenchmarkSmokeValidate(b *testing.B) {
	now := time.Now()
	m, _ := NewMinter(MinterConfig{Issuer: "https://k", Signer: testkeys.K8sRSA(), Now: func() time.Time { return now }})
	tok, _ := m.Mint(context.Background(), Request{ServiceAccount: ksa.ServiceAccount{Namespace: "myns", Name: "mysvcacct", UID: "sa-uid"}, BoundObject: &BoundObject{Kind: BoundPod, Name: "mypod", UID: "pod-uid"}, Node: &ksa.ObjectRef{Name: "mynode", UID: "node-uid"}})
	src, _ := jwks.NewStaticSource(testkeys.K8sRSA())
	v, _ := NewValidator(ValidatorConfig{Issuers: []string{"https://k"}, Keys: src, Audiences: []string{"https://k"}, SkipObjectCheck: true, Now: func() time.Time { return now }})
	ctx := context.Background()
	b.Run("ours", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := v.Validate(ctx, tok.Raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bare", func(b *testing.B) {
		i := strings.LastIndexByte(tok.Raw, '.')
		sig, _ := b64.DecodeString(tok.Raw[i+1:])
		pub := &testkeys.K8sRSA().PublicKey
		b.ReportAllocs()
		for b.Loop() {
			h := sha256.Sum256([]byte(tok.Raw[:i]))
			if rsa.VerifyPKCS1v15(pub, crypto.SHA256, h[:], sig) != nil {
				b.Fatal()
			}
		}
	})
}
