package golangjwt_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/base64"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/golangjwt"
	"github.com/ksa-go/ksa/tokens"
)

// ecdsaVerify checks a JWS (r||s) ES256 signature.
func ecdsaVerify(pub *ecdsa.PublicKey, digest, sig []byte) bool {
	r := new(big.Int).SetBytes(sig[:32])
	s := new(big.Int).SetBytes(sig[32:])
	return ecdsa.Verify(pub, digest, r, s)
}

var (
	now = time.Unix(1700000000, 0)
	sa  = ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "sa-uid"}
	req = tokens.Request{ServiceAccount: sa, Audiences: []string{"vault"},
		BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "billing-0", UID: "pod-uid"},
		Node:        &ksa.ObjectRef{Name: "node-1", UID: "node-uid"}}
)

func clock() time.Time { return now }

// parse is what a golang-jwt user writes: the parser options, issuer,
// audience and clock, and the key function.
func parse(keys *golangjwt.Keys, issuer, token string, opts ...jwt.ParserOption) (*golangjwt.Claims, error) {
	var claims golangjwt.Claims
	opts = append(append(golangjwt.ParserOptions(), jwt.WithIssuer(issuer), jwt.WithAudience("vault"), jwt.WithTimeFunc(clock)), opts...)
	_, err := jwt.ParseWithClaims(token, &claims, keys.KeyfuncContext(context.Background()), opts...)
	return &claims, err
}

// forger signs arbitrary headers and claims with golang-jwt.
func sign(t *testing.T, method jwt.SigningMethod, key any, header map[string]any, claims jwt.Claims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	for k, v := range header {
		tok.Header[k] = v
	}
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

// tamper binds the token to another pod, keeping its header and
// signature.
func tamper(t *testing.T, token string) string {
	t.Helper()
	parts := strings.Split(token, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	require.NoError(t, err)
	payload = bytes.Replace(payload, []byte("billing-0"), []byte("billing-1"), 1)
	parts[1] = base64.RawURLEncoding.EncodeToString(payload)
	return strings.Join(parts, ".")
}
