package stepkms

import (
	"context"
	"crypto"
	"crypto/elliptic"
	"fmt"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
)

// BugFix is the advice for a key store answering what it should not.
const BugFix = "report it, with the key store and its version, at https://github.com/ksa-go/ksa/issues"

// Open parses ref, refuses one of another scheme than scheme, opens the key
// with open and checks it (CheckKey).
func Open(ctx context.Context, ref string, scheme keystore.Scheme, open func(context.Context, keystore.Ref) (crypto.Signer, error)) (crypto.Signer, error) {
	r, err := keystore.ParseRef(ref)
	if err != nil {
		return nil, err
	}
	if err := checkScheme(r, scheme); err != nil {
		return nil, err
	}
	signer, err := open(ctx, r)
	if err != nil {
		return nil, err
	}
	if err := CheckKey(ctx, r, signer); err != nil {
		return nil, err
	}
	return signer, nil
}

// Create parses ref as a key to create, refuses one of another scheme
// than scheme and a spec outside jwks' key rules, makes the key with
// create, and checks what the store answered: a reference that opens the
// key, a public key jwks' rules accept.
func Create(ctx context.Context, ref string, scheme keystore.Scheme, spec keystore.KeySpec,
	create func(context.Context, keystore.Ref, keystore.KeySpec) (keystore.Created, error)) (keystore.Created, error) {
	r, err := keystore.ParseNewKeyRef(ref)
	if err != nil {
		return keystore.Created{}, err
	}
	if err := checkScheme(r, scheme); err != nil {
		return keystore.Created{}, err
	}
	if spec.Curve == nil && !spec.RSA {
		spec.Curve = elliptic.P256()
	}
	if err := checkSpec(r, spec); err != nil {
		return keystore.Created{}, err
	}
	c, err := create(ctx, r, spec)
	if err != nil {
		return keystore.Created{}, err
	}
	if _, err := keystore.ParseRef(c.Ref); err != nil {
		return keystore.Created{}, StoreError(r, "the key store named the new key in a way ksa cannot read ("+c.Ref+")", BugFix, err)
	}
	if err := jwks.CheckPublicKey(c.Public); err != nil {
		return keystore.Created{}, &keystore.StoreError{Ref: c.Ref, What: "the key store made a key ksa cannot use", Detail: Detail(err), Fix: BugFix, Kind: jwks.ErrUnsupportedKey, Err: err}
	}
	return c, nil
}

// checkScheme refuses a reference of another scheme than the store's.
func checkScheme(r keystore.Ref, scheme keystore.Scheme) error {
	if r.Scheme() == scheme {
		return nil
	}
	what := "names a key in " + string(r.Scheme()) + ", and this is the " + string(scheme) + " store"
	if r.Scheme() == keystore.SchemeFile {
		what = "is a PEM key file, and this is the " + string(scheme) + " store"
	}
	return &keystore.StoreError{Ref: r.String(), What: what,
		Fix: "open keys through a keystore.Openers, which gives each reference to the store of its scheme", Kind: keystore.ErrUnsupportedStore}
}

// checkSpec refuses a key jwks' rules refuse: RSA below 2048 or above
// 8192 bits, a curve other than P-256, P-384 and P-521.
func checkSpec(r keystore.Ref, spec keystore.KeySpec) error {
	ok := false
	if spec.RSA {
		ok = spec.Bits >= jwks.MinRSABits && spec.Bits <= jwks.MaxRSABits
	} else {
		switch spec.Curve {
		case elliptic.P256(), elliptic.P384(), elliptic.P521():
			ok = true
		}
	}
	if ok {
		return nil
	}
	return &keystore.StoreError{Ref: r.String(), What: "cannot be created as " + spec.String() + ", a key kube-apiserver does not accept",
		Fix: fmt.Sprintf("make an RSA key of %d to %d bits or an ECDSA key on P-256, P-384 or P-521", jwks.MinRSABits, jwks.MaxRSABits), Kind: jwks.ErrUnsupportedKey}
}
