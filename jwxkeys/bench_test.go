package jwxkeys_test

import (
	"context"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jws"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/jwxkeys"
	"github.com/ksa-go/ksa/tokens"
)

// BenchmarkVerify compares, in one run, jws.Verify with ksa's key
// provider, jws.Verify with the set ToSet made, and ksa's validator, on
// the same ES256 token.
func BenchmarkVerify(b *testing.B) {
	f := newFixture(b)
	src, _ := jwks.NewStaticSource(f.keys...)
	provider, _ := jwxkeys.NewKeyProvider(jwxkeys.Config{Keys: src})
	set, _ := jwxkeys.ToSet(f.keys)
	validator, _ := tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{"https://issuer.example"}, Keys: src,
		Audiences: []string{"vault"}, SkipObjectCheck: true, Now: func() time.Time { return now }})
	raw := []byte(f.token)
	ctx := context.Background()
	b.Run("jwx+provider", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jws.Verify(raw, jws.WithKeyProvider(provider)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jwx+ToSet", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jws.Verify(raw, jws.WithKeySet(set)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ksa-validator", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := validator.Validate(ctx, f.token); err != nil {
				b.Fatal(err)
			}
		}
	})
}
