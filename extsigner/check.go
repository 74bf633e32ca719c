package extsigner

import (
	"encoding/base64"
	"fmt"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/jws"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// MaxTokenBytes is the longest token the signer helps make: Sign refuses
// claims that, with its header and signature, would make a longer token,
// because ksa's validator refuses those (tokens.DefaultMaxTokenBytes).
// Kubernetes' claims are about a kilobyte.
const MaxTokenBytes = tokens.DefaultMaxTokenBytes

var b64 = base64.RawURLEncoding

// AllowedAlgorithm reports whether kube-apiserver accepts alg in an
// external signer's header: RS256, ES256, ES384 or ES512.
func AllowedAlgorithm(alg string) bool {
	switch alg {
	case jwks.RS256, jwks.ES256, jwks.ES384, jwks.ES512:
		return true
	}
	return false
}

// CheckClaims checks the claims of a Sign request (base64url, as the second
// part of the token): not empty, strict unpadded base64url, a strict JSON
// object whose registered claims have their types (tokens.ParseClaims).
// Kubernetes' claims always pass. Errors match [ErrInvalidClaims].
func CheckClaims(claims string) (*tokens.Claims, error) {
	if claims == "" {
		return nil, claimsError("empty", nil)
	}
	if len(claims) > MaxTokenBytes {
		return nil, claimsError(fmt.Sprintf("of %d bytes, more than a %d-byte token holds", len(claims), MaxTokenBytes), nil)
	}
	// Kubernetes' claims decode to under a kilobyte: decoded on the
	// stack (ParseClaims keeps a copy of what it needs).
	var buf [1024]byte
	data, err := jws.Decode(claims, buf[:0])
	if err != nil {
		return nil, claimsError("", err)
	}
	c, err := tokens.ParseClaims(data)
	if err != nil {
		return nil, claimsError("", err)
	}
	return c, nil
}

// claimsError is a refusal of claims: "claims <reason>", or "claims
// refused" and the cause.
func claimsError(reason string, cause error) error {
	if reason == "" {
		reason = "refused"
	}
	return errs.Wrap(prefix, ErrInvalidClaims, "claims "+reason, cause)
}
