package extsigner

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"fmt"
	"io"
	"time"

	"github.com/ksa-go/ksa/internal/jws"
)

// ContextSigner is a crypto.Signer whose signing call takes the context of
// the Sign request, as a KMS client's does: a request kube-apiserver gives
// up on is abandoned rather than left waiting on the KMS. The ring uses
// SignContext when a key's Signer has it.
type ContextSigner interface {
	crypto.Signer
	SignContext(ctx context.Context, rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error)
}

// SignerFunc adapts a function, such as a KMS client's asymmetric-sign
// call, to a [ContextSigner] for public key pub. The function gets the
// digest and the hash (or *rsa.PSSOptions) as crypto.Signer does; for ECDSA
// it returns an ASN.1 signature, for RSA the PKCS #1 v1.5 signature.
func SignerFunc(pub crypto.PublicKey, sign func(ctx context.Context, digest []byte, opts crypto.SignerOpts) ([]byte, error)) ContextSigner {
	return &funcSigner{pub: pub, sign: sign}
}

type funcSigner struct {
	pub  crypto.PublicKey
	sign func(ctx context.Context, digest []byte, opts crypto.SignerOpts) ([]byte, error)
}

func (s *funcSigner) Public() crypto.PublicKey { return s.pub }

func (s *funcSigner) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	return s.sign(context.Background(), digest, opts)
}

func (s *funcSigner) SignContext(ctx context.Context, _ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	return s.sign(ctx, digest, opts)
}

// boundSigner gives a ContextSigner the context of one request.
type boundSigner struct {
	ContextSigner
	ctx context.Context
}

func (s boundSigner) Sign(rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	return s.SignContext(s.ctx, rand, digest, opts)
}

// Signed is the answer to a Sign request: the token is
// Header + "." + claims + "." + Signature.
type Signed struct {
	// Header is the base64url of {"alg":...,"kid":...,"typ":"JWT"}.
	Header string
	// Signature is the base64url signature of Header.claims.
	Signature string
	// KeyID is the key that signed, the header's kid.
	KeyID string
}

// Sign signs claims, the base64url payload of a token exactly as the
// token will carry it, with the primary key, as the Sign RPC does. The
// claims must pass [CheckClaims], carry an exp no later than the ring's
// clock plus MaxTokenLifetime and MaxClockSkew (so that a key retired after
// that wait verified every token it signed), and make a token of at most
// MaxTokenBytes. The signature is verified with the published key before
// it is returned, so a KMS that signs with another key, or returns a
// corrupt signature, never yields a token that fails later; the key that
// signs is always one FetchKeys publishes.
//
// Errors match [ErrInvalidClaims] (claims refused), or are a *SignError
// (ErrSignerFailed, wrapping the signer's error; ErrSelfCheck).
func (r *Ring) Sign(ctx context.Context, claims string) (Signed, error) {
	c, err := CheckClaims(claims)
	if err != nil {
		return Signed{}, err
	}
	if c.Expiry.IsZero() {
		return Signed{}, claimsError("carry no exp", nil)
	}
	if latest := r.now().Add(r.maxLifetime + MaxClockSkew); c.Expiry.After(latest) {
		return Signed{}, claimsError(fmt.Sprintf("expire at %s, later than the maximum token lifetime (%v) allows", c.Expiry.UTC().Format(time.RFC3339), r.maxLifetime), nil)
	}
	p := r.state.Load().primary
	n := len(p.header) + 1 + len(claims)
	if total := n + 1 + b64.EncodedLen(signatureSize(p.public)); total > MaxTokenBytes {
		return Signed{}, claimsError(fmt.Sprintf("make a token of %d bytes, more than %d", total, MaxTokenBytes), nil)
	}
	input := make([]byte, 0, n)
	input = append(input, p.header...)
	input = append(input, '.')
	input = append(input, claims...)

	signer := p.signer
	if cs, ok := signer.(ContextSigner); ok {
		signer = boundSigner{ContextSigner: cs, ctx: ctx}
	}
	sig, err := jws.Sign(p.alg, signer, input)
	if err != nil {
		return Signed{}, &SignError{KeyID: p.kid, Kind: ErrSignerFailed, Err: err}
	}
	// jws.Verify reads the input as a string without copying it.
	if err := jws.Verify(p.alg, p.public, string(input), sig); err != nil {
		return Signed{}, &SignError{KeyID: p.kid, Kind: ErrSelfCheck, Err: err}
	}
	return Signed{Header: p.header, Signature: b64.EncodeToString(sig), KeyID: p.kid}, nil
}

// signatureSize is the length of a signature by pub: the modulus size for
// RSA, twice the coordinate size for ECDSA (the ring holds no other keys).
func signatureSize(pub crypto.PublicKey) int {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return k.Size()
	case *ecdsa.PublicKey:
		return 2 * ((k.Curve.Params().BitSize + 7) / 8)
	}
	return 0
}
