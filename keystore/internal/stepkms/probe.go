package stepkms

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"io"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
)

// probe is what the probe signature of Open signs.
var probe = []byte("ksa key store probe")

// ContextSigner is a signer whose signatures end with their caller's
// context, as the key stores' signers are.
type ContextSigner interface {
	crypto.Signer
	SignContext(ctx context.Context, rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error)
}

// CheckKey refuses a key jwks' rules refuse, and one whose probe signature
// (RS256, or ES256/ES384/ES512 by its curve) does not verify with its
// public key.
func CheckKey(ctx context.Context, r keystore.Ref, signer crypto.Signer) error {
	pub := signer.Public()
	if err := jwks.CheckPublicKey(pub); err != nil {
		return &keystore.StoreError{Ref: r.String(), What: "holds a key ksa cannot use", Detail: Detail(err),
			Fix: "use an RSA key of 2048 to 8192 bits or an ECDSA key on P-256, P-384 or P-521", Kind: jwks.ErrUnsupportedKey, Err: err}
	}
	var (
		opts   crypto.SignerOpts
		digest []byte
	)
	switch k := pub.(type) {
	case *rsa.PublicKey:
		d := sha256.Sum256(probe)
		opts, digest = crypto.SHA256, d[:]
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			d := sha256.Sum256(probe)
			opts, digest = crypto.SHA256, d[:]
		case elliptic.P384():
			d := sha512.Sum384(probe)
			opts, digest = crypto.SHA384, d[:]
		default:
			d := sha512.Sum512(probe)
			opts, digest = crypto.SHA512, d[:]
		}
	default:
		return &keystore.StoreError{Ref: r.String(), What: fmt.Sprintf("holds a %T key, which no JWT algorithm kube-apiserver accepts uses", pub),
			Fix: "use an RSA or ECDSA key", Kind: jwks.ErrUnsupportedKey}
	}
	var sig []byte
	var err error
	if cs, ok := signer.(ContextSigner); ok {
		sig, err = cs.SignContext(ctx, rand.Reader, digest, opts)
	} else {
		sig, err = signer.Sign(rand.Reader, digest, opts)
	}
	if err != nil {
		var e *keystore.StoreError
		if errors.As(err, &e) {
			return &keystore.StoreError{Ref: e.Ref, What: "the probe signature failed", Detail: e.Detail, Fix: e.Fix, Kind: e.Kind, Err: e.Err}
		}
		return StoreError(r, "the probe signature failed", "check that ksa's identity may sign with the key", err)
	}
	ok := false
	switch k := pub.(type) {
	case *rsa.PublicKey:
		ok = rsa.VerifyPKCS1v15(k, crypto.SHA256, digest, sig) == nil
	case *ecdsa.PublicKey:
		ok = ecdsa.VerifyASN1(k, digest, sig)
	}
	if !ok {
		return StoreError(r, "the key store's probe signature does not verify with the key's public key (an RSA key must sign PKCS #1 v1.5, as RS256 does)",
			"use a key that signs RS256 or ES256/ES384/ES512", nil)
	}
	return nil
}
