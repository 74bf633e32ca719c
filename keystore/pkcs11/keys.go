//go:build cgo

package pkcs11

import (
	"context"
	"crypto"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"go.step.sm/crypto/kms/apiv1"

	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/internal/stepkms"
)

// token returns the token r names, logged in to with r's PIN.
func (s *Store) token(r keystore.Ref) (*token, error) {
	read := s.cfg.ReadPIN
	if read == nil {
		read = keystore.Ref.ReadPIN
	}
	pin, err := read(r)
	if err == nil && pin == "" {
		err = errors.New("the PIN is empty")
	}
	if err != nil {
		return nil, &keystore.StoreError{Ref: r.String(), What: "its PIN cannot be read", Detail: stepkms.Detail(err),
			Fix: "check pin-source: a file ksa's user can read, or env:NAME with NAME set", Kind: keystore.ErrKeyStore, Err: err}
	}
	return s.tokens.get(r, pin)
}

func (s *Store) open(_ context.Context, r keystore.Ref) (crypto.Signer, error) {
	t, err := s.token(r)
	if err != nil {
		return nil, err
	}
	signer, err := t.km.CreateSigner(&apiv1.CreateSignerRequest{SigningKey: keyURI(r)})
	if err != nil {
		return nil, keyError(r, err)
	}
	return &signerOnToken{ref: r, pub: signer.Public(), inner: signer}, nil
}

func (s *Store) create(_ context.Context, r keystore.Ref, spec keystore.KeySpec) (keystore.Created, error) {
	alg, bits := stepkms.Algorithm(spec)
	t, err := s.token(r)
	if err != nil {
		return keystore.Created{}, err
	}
	// go.step.sm looks for a key with both the id and the object; a key
	// with either one would make the reference ambiguous.
	id, object := r.With("object", ""), r.With("id", "")
	for _, only := range []keystore.Ref{id, object} {
		if _, err := t.km.GetPublicKey(&apiv1.GetPublicKeyRequest{Name: keyURI(only)}); err == nil {
			return keystore.Created{}, keyError(r, apiv1.AlreadyExistsError{})
		}
	}
	resp, err := t.km.CreateKey(&apiv1.CreateKeyRequest{Name: keyURI(r), SignatureAlgorithm: alg, Bits: bits})
	if err != nil {
		return keystore.Created{}, keyError(r, err)
	}
	return keystore.Created{Ref: r.String(), Public: resp.PublicKey}, nil
}

// keyURI is the key's URI for go.step.sm: its id in hex (which go.step.sm
// reads as hex), its object; nothing else.
func keyURI(r keystore.Ref) string {
	var attrs []string
	if id := r.ObjectID(); len(id) > 0 {
		attrs = append(attrs, "id="+hex.EncodeToString(id))
	}
	if o := r.Attr("object"); o != "" {
		attrs = append(attrs, "object="+url.QueryEscape(o))
	}
	return "pkcs11:" + strings.Join(attrs, ";")
}

// keyWords names r's key in messages: "id 0a0b and object sa".
func keyWords(r keystore.Ref) string {
	var w []string
	if id := r.ObjectID(); len(id) > 0 {
		w = append(w, "id "+hex.EncodeToString(id))
	}
	if o := r.Attr("object"); o != "" {
		w = append(w, "object "+fmt.Sprintf("%q", o))
	}
	return strings.Join(w, " and ")
}

// signerOnToken is a key on a PKCS #11 token: its public key read once,
// the token's signatures made in the caller's goroutine.
type signerOnToken struct {
	ref   keystore.Ref
	pub   crypto.PublicKey
	inner crypto.Signer
}

// signFix is the advice for a signature the token refused.
const signFix = "check the token (softhsm2-util --show-slots, pkcs11-tool --list-objects)"

func (s *signerOnToken) Public() crypto.PublicKey { return s.pub }

func (s *signerOnToken) Sign(rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	sig, err := s.inner.Sign(rand, digest, opts)
	if err != nil {
		return nil, stepkms.StoreError(s.ref, "signing failed", signFix, err)
	}
	return sig, nil
}

// SignContext signs unless ctx has ended already: a token answers in
// microseconds, and its calls cannot be abandoned halfway.
func (s *signerOnToken) SignContext(ctx context.Context, rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if ctx.Err() != nil {
		return nil, stepkms.StoreError(s.ref, "signing failed", "retry: the caller gave up before the token was asked", stepkms.CtxError(ctx))
	}
	return s.Sign(rand, digest, opts)
}
