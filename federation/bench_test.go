package federation_test

import (
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/ksa-go/ksa/federation"
)

// BenchmarkGetTokenCached measures GetToken when azidentity holds a valid
// access token: the pre-flight (file source fast path and claim checks)
// plus azidentity's cache lookup.
func BenchmarkGetTokenCached(b *testing.B) {
	e := newEnv(b)
	e.project(b, federation.DefaultAudience, 24*time.Hour)
	cred := e.credential(b)
	ctx := b.Context()
	opts := policy.TokenRequestOptions{Scopes: []string{scope}}
	if _, err := cred.GetToken(ctx, opts); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cred.GetToken(ctx, opts); err != nil {
			b.Fatal(err)
		}
	}
}
