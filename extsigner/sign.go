package extsigner

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"fmt"
	"io"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/jsonx"
	"github.com/ksa-go/ksa/internal/jws"
	"github.com/ksa-go/ksa/jwks"
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
	// Subject and TokenID are the claims' sub and jti (empty when absent),
	// for a log line that ties the signature to the token and to
	// kube-apiserver's audit log (which records the jti as the credential
	// ID).
	Subject, TokenID string
}

// Sign signs claims, the base64url payload of a token exactly as the
// token will carry it, with the primary key, as the Sign RPC does. The
// claims must pass [CheckClaims], carry an exp no later than the ring's
// clock plus MaxTokenLifetime and MaxClockSkew (so that a key retired after
// that wait verified every token it signed), and make a token of at most
// MaxTokenBytes. The key that signs is always one FetchKeys publishes, and
// no signature it has not proven is handed out: a key of crypto/ecdsa or
// crypto/rsa is the ring's own copy, checked once when the ring took it
// (its public half derived again from its private half, a probe signature
// verified with the published key), so its signatures verify by
// construction; the signature of any other signer (a KMS, an HSM) is
// verified with the published key before it is returned, so that one
// signing with another key, or returning a corrupt signature, never
// yields a token that fails later.
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
	now := r.now()
	if latest := now.Add(r.maxLifetime + MaxClockSkew); c.Expiry.After(latest) {
		return Signed{}, claimsError(fmt.Sprintf("expire at %s, later than the maximum token lifetime (%v) allows", c.Expiry.UTC().Format(time.RFC3339), r.maxLifetime), nil)
	}
	p := r.current(now).primary
	n := len(p.header) + 1 + len(claims)
	if total := n + 1 + b64.EncodedLen(signatureSize(p.public)); total > MaxTokenBytes {
		return Signed{}, claimsError(fmt.Sprintf("make a token of %d bytes, more than %d", total, MaxTokenBytes), nil)
	}
	input := make([]byte, 0, n)
	input = append(input, p.header...)
	input = append(input, '.')
	input = append(input, claims...)
	sig, err := p.sign(ctx, input, p.verify)
	if err != nil {
		return Signed{}, err
	}
	return Signed{Header: p.header, Signature: b64.EncodeToString(sig), KeyID: p.kid, Subject: c.Subject, TokenID: c.ID}, nil
}

// probeInput is what [Ring.Probe] signs: not a token (no dots), so that a
// probe signature can never be taken for one.
var probeInput = []byte("ksa extsigner probe: the key store answers")

// Probe signs a fixed input with the primary key and verifies the
// signature with the published key, whatever the key: whether the key
// store answers now, for a health check. Errors are a *SignError
// ([ErrSignerFailed], with the key store's error; [ErrSelfCheck]).
func (r *Ring) Probe(ctx context.Context) error {
	p := r.current(r.now()).primary
	_, err := p.sign(ctx, probeInput, true)
	return err
}

// signingKey is a key prepared for signing.
type signingKey struct {
	kid, alg string
	// signer is the ring's own copy of a standard-library key, or the
	// signer as given.
	signer crypto.Signer
	public crypto.PublicKey
	// header is the base64url of {"alg":...,"kid":...,"typ":"JWT"}.
	header string
	// verify: the signer is not the ring's own copy of a standard-library
	// key, so every signature is verified before it is returned.
	verify bool
}

// newSigningKey prepares the signer of the checked key k: own, the ring's
// own copy of a standard-library key (known), whose probe signature must
// verify with the published key, or any other signer, verified on every
// signature.
func newSigningKey(k jwks.Key, own crypto.Signer, known bool) (*signingKey, error) {
	h := append([]byte(nil), `{"alg":`...)
	h = jsonx.AppendString(h, k.Algorithm)
	h = append(h, `,"kid":`...)
	h = jsonx.AppendString(h, k.KeyID)
	h = append(h, `,"typ":"JWT"}`...)
	sk := &signingKey{kid: k.KeyID, alg: k.Algorithm, signer: own, public: k.Public, header: b64.EncodeToString(h), verify: !known}
	if known {
		if _, err := sk.sign(context.Background(), probeInput, true); err != nil {
			return nil, keyError(ksa.ErrInvalidConfig, k.KeyID, "probe signature refused", err)
		}
	}
	return sk, nil
}

// sign signs input, and verifies the signature with the published key when
// verify is set.
func (sk *signingKey) sign(ctx context.Context, input []byte, verify bool) ([]byte, error) {
	signer := sk.signer
	if cs, ok := signer.(ContextSigner); ok {
		signer = boundSigner{ContextSigner: cs, ctx: ctx}
	}
	sig, err := jws.Sign(sk.alg, signer, input)
	if err != nil {
		return nil, &SignError{KeyID: sk.kid, Kind: ErrSignerFailed, Err: err}
	}
	if verify {
		if err := jws.Verify(sk.alg, sk.public, string(input), sig); err != nil {
			return nil, &SignError{KeyID: sk.kid, Kind: ErrSelfCheck, Err: err}
		}
	}
	return sig, nil
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

// checkedSigner is a signing key [RingFile.Open] checked as the ring
// checks it: the key published and its signer prepared (a
// standard-library key copied and probed). NewRing and Update take it as
// it is while the ScheduledKey's Key is the one checked, so that a ring
// file's key is checked once; with any other Key, the key opened is
// checked again. Outside a ring it signs as the key opened.
type checkedSigner struct {
	opened crypto.Signer
	key    jwks.Key
	sk     *signingKey
}

// newCheckedSigner marks the key opened, checked as key and prepared as
// sk; it returns the signer and the public key to hand out with it: the
// key opened's own for a standard-library key, so that nothing done to
// the value handed out reaches the ring's copy.
func newCheckedSigner(opened crypto.Signer, key jwks.Key, sk *signingKey) (*checkedSigner, crypto.PublicKey) {
	pub := key.Public
	if !sk.verify {
		pub = opened.Public()
	}
	return &checkedSigner{opened: opened, key: key, sk: sk}, pub
}

// checked reports whether key is the key the signer was checked as.
func (c *checkedSigner) checked(key jwks.Key) bool {
	return key.KeyID == c.key.KeyID && key.Algorithm == c.key.Algorithm && key.ExcludeFromDiscovery == c.key.ExcludeFromDiscovery &&
		key.Public != nil && equalKeys(key.Public, c.key.Public)
}

func (c *checkedSigner) Public() crypto.PublicKey { return c.opened.Public() }

func (c *checkedSigner) Sign(rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	return c.opened.Sign(rand, digest, opts)
}

// SignContext signs with the key opened, with ctx when it takes one.
func (c *checkedSigner) SignContext(ctx context.Context, rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if cs, ok := c.opened.(ContextSigner); ok {
		return cs.SignContext(ctx, rand, digest, opts)
	}
	return c.opened.Sign(rand, digest, opts)
}
