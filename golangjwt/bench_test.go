package golangjwt_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/ksa-go/ksa/golangjwt"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// BenchmarkVerify compares, in one run, golang-jwt with the key function,
// ksa's validator and the bare ECDSA verification of the same ES256 token.
func BenchmarkVerify(b *testing.B) {
	const issuer = "https://issuer.example"
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	minter, _ := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: key, Now: clock})
	tok, err := minter.Mint(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	pub, _ := jwks.NewKey(key.Public())
	src, _ := jwks.NewStaticSource(pub)
	keys, _ := golangjwt.NewKeys(golangjwt.Config{Keys: src})
	validator, _ := tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{issuer}, Keys: src,
		Audiences: []string{"vault"}, SkipObjectCheck: true, Now: clock})
	opts := append(golangjwt.ParserOptions(), jwt.WithIssuer(issuer), jwt.WithAudience("vault"), jwt.WithTimeFunc(clock))
	parser := jwt.NewParser(opts...)
	cut := strings.LastIndexByte(tok.Raw, '.')
	sig, _ := base64.RawURLEncoding.DecodeString(tok.Raw[cut+1:])
	ctx := context.Background()

	b.Run("golang-jwt+keyfunc", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c golangjwt.Claims
			if _, err := parser.ParseWithClaims(tok.Raw, &c, keys.Keyfunc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ksa-validator", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := validator.Validate(ctx, tok.Raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bare-ecdsa", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h := sha256.Sum256([]byte(tok.Raw[:cut]))
			if !ecdsaVerify(&key.PublicKey, h[:], sig) {
				b.Fatal("bad signature")
			}
		}
	})
}
