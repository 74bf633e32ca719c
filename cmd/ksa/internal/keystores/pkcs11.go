//go:build cgo && !ksa_nopkcs11

package keystores

import (
	"context"
	"crypto"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"go.step.sm/crypto/kms/apiv1"
	"go.step.sm/crypto/kms/pkcs11"

	"github.com/ksa-go/ksa/keystore"
)

// pkcs11Missing is empty: this build has PKCS #11.
const pkcs11Missing = ""

// tokenSet holds the PKCS #11 tokens a Stores opened.
type tokenSet struct {
	// byKey are the tokens, by module and token.
	byKey map[string]*token
	// selectors say how each module's tokens are named (token, serial or
	// slot-id).
	selectors map[string]string
}

// close closes every token.
func (ts *tokenSet) close() error {
	var errs []error
	for k, t := range ts.byKey {
		errs = append(errs, t.close())
		delete(ts.byKey, k)
	}
	return errors.Join(errs...)
}

// token is a PKCS #11 token the process is logged in to.
type token struct {
	km *pkcs11.PKCS11
	// pin is the SHA-256 of the PIN the token was opened with.
	pin [sha256.Size]byte
}

func (t *token) close() error { return t.km.Close() }

// selector returns how r names its token: "token", "serial" or
// "slot-id", and the value.
func selector(r keystore.Ref) (string, string) {
	for _, n := range []string{"token", "serial", "slot-id"} {
		if v := r.Attr(n); v != "" {
			return n, v
		}
	}
	return "", ""
}

// moduleName names r's module in messages.
func moduleName(r keystore.Ref) string {
	if m := r.Attr("module-path"); m != "" {
		return m
	}
	return "p11-kit-proxy.so (the default; module-path= names another)"
}

// tokenOf returns the token r names, logged in to with r's PIN the first
// time; later, r's PIN must be the one the token was opened with.
func (s *Stores) tokenOf(r keystore.Ref) (*token, error) {
	pin, err := r.ReadPIN()
	if err != nil {
		return nil, &Error{Ref: r.String(), What: "its PIN cannot be read", Detail: detail(err),
			Fix: "check pin-source: a file ksa's user can read, or env:NAME with NAME set", Kind: keystore.ErrKeyStore, Err: err}
	}
	sum := sha256.Sum256([]byte(pin))
	module := r.Attr("module-path")
	kind, value := selector(r)
	key := module + "\x00" + kind + "=" + value

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, storeError(r, "cannot be opened", "open keys before closing the key stores", errClosed)
	}
	if prev, ok := s.tokens.selectors[module]; ok && prev != kind {
		return nil, storeError(r, fmt.Sprintf("names its token by %s, another key of this process a token of the same module by %s", kind, prev),
			"name the token the same way (token=, serial= or slot-id=) in every reference to "+moduleName(r)+", so that one token cannot be logged in to under two names", nil)
	}
	if t, ok := s.tokens.byKey[key]; ok {
		if subtle.ConstantTimeCompare(t.pin[:], sum[:]) != 1 {
			return nil, storeError(r, "its PIN differs from the one the token was opened with in this process",
				"give every reference to the token the same PIN: a token the process is logged in to accepts any PIN, so ksa checks it against the first", nil)
		}
		return t, nil
	}
	km, err := pkcs11.New(context.Background(), apiv1.Options{Type: apiv1.PKCS11, URI: managerURI(r), Pin: pin})
	if err != nil {
		return nil, pkcs11OpenError(r, err)
	}
	t := &token{km: km, pin: sum}
	if s.tokens.byKey == nil {
		s.tokens.byKey, s.tokens.selectors = map[string]*token{}, map[string]string{}
	}
	s.tokens.byKey[key] = t
	s.tokens.selectors[module] = kind
	return t, nil
}

// managerURI is the token's URI for go.step.sm: module, token and
// sessions; never the PIN.
func managerURI(r keystore.Ref) string {
	var attrs []string
	for _, n := range []string{"module-path", "token", "serial", "slot-id", "max-sessions"} {
		if v := r.Attr(n); v != "" {
			attrs = append(attrs, n+"="+url.QueryEscape(v))
		}
	}
	return "pkcs11:" + strings.Join(attrs, ";")
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

// pkcs11OpenError explains why a token cannot be opened.
func pkcs11OpenError(r keystore.Ref, err error) *Error {
	msg := err.Error()
	kind, value := selector(r)
	e := storeError(r, "the token cannot be opened", "check the reference, and that the token is present", err)
	switch {
	case strings.Contains(msg, "CKR_PIN_INCORRECT"):
		e.What, e.Detail, e.Fix, e.Kind = "the token refused the PIN", "CKR_PIN_INCORRECT", "check the PIN pin-source gives", ErrLoginRefused
	case strings.Contains(msg, "CKR_PIN_LOCKED"):
		e.What, e.Detail, e.Fix, e.Kind = "the token's PIN is locked", "CKR_PIN_LOCKED", "unlock it with the security officer's PIN (softhsm2-util or pkcs11-tool --init-pin)", ErrLoginRefused
	case strings.Contains(msg, "CKR_PIN_"):
		e.What, e.Fix, e.Kind = "the token refused the PIN", "check the PIN pin-source gives", ErrLoginRefused
	case strings.Contains(msg, "could not find PKCS#11 token"):
		e.What, e.Detail = fmt.Sprintf("module %s has no token with %s %s", moduleName(r), kind, value), ""
		e.Fix = "check " + kind + "= (softhsm2-util --show-slots, or pkcs11-tool --module MODULE --list-slots, lists the tokens)"
	case strings.Contains(msg, "failed to create module context"), strings.Contains(msg, "failed to open module"):
		e.What, e.Detail = "the PKCS #11 module "+moduleName(r)+" cannot be loaded", ""
		e.Fix = "give module-path=, the path of the HSM's PKCS #11 library (SoftHSM2's is /usr/lib/softhsm/libsofthsm2.so)"
	}
	return e
}

func (s *Stores) openPKCS11(_ context.Context, r keystore.Ref) (crypto.Signer, error) {
	t, err := s.tokenOf(r)
	if err != nil {
		return nil, err
	}
	signer, err := t.km.CreateSigner(&apiv1.CreateSignerRequest{SigningKey: keyURI(r)})
	if err != nil {
		return nil, pkcs11KeyError(r, err)
	}
	return &localSigner{ref: r, pub: signer.Public(), inner: signer, fix: "check the token (softhsm2-util --show-slots, pkcs11-tool --list-objects)"}, nil
}

// pkcs11KeyError explains why a key cannot be found or made.
func pkcs11KeyError(r keystore.Ref, err error) *Error {
	_, token := selector(r)
	switch {
	case errors.Is(err, apiv1.NotFoundError{}) || strings.Contains(err.Error(), "was not found"):
		e := storeError(r, fmt.Sprintf("token %s holds no key pair with %s", token, keyWords(r)),
			"check id= and object= (pkcs11-tool --list-objects --type privkey lists the keys), or create the key with ksa issuer keygen --out REFERENCE", err)
		e.Detail = ""
		return e
	case errors.Is(err, apiv1.AlreadyExistsError{}):
		e := storeError(r, fmt.Sprintf("token %s holds a key with %s already", token, keyWords(r)),
			"choose another id and object (keys are never replaced)", err)
		e.Detail = ""
		return e
	}
	return storeError(r, "the key cannot be used", "check the token's objects (pkcs11-tool --list-objects)", err)
}

func (s *Stores) createPKCS11(_ context.Context, r keystore.Ref, spec KeySpec) (Created, error) {
	alg, bits := algorithm(spec)
	t, err := s.tokenOf(r)
	if err != nil {
		return Created{}, err
	}
	// go.step.sm looks for a key with both the id and the object; a key
	// with either one would make the reference ambiguous.
	id, object := r.With("object", ""), r.With("id", "")
	for _, only := range []keystore.Ref{id, object} {
		if _, err := t.km.GetPublicKey(&apiv1.GetPublicKeyRequest{Name: keyURI(only)}); err == nil {
			return Created{}, pkcs11KeyError(r, apiv1.AlreadyExistsError{})
		}
	}
	resp, err := t.km.CreateKey(&apiv1.CreateKeyRequest{Name: keyURI(r), SignatureAlgorithm: alg, Bits: bits})
	if err != nil {
		return Created{}, pkcs11KeyError(r, err)
	}
	return Created{Ref: r.String(), Public: resp.PublicKey}, nil
}

// localSigner is a key on a PKCS #11 token: its public key read once, the
// token's signatures made in the caller's goroutine.
type localSigner struct {
	ref   keystore.Ref
	pub   crypto.PublicKey
	inner crypto.Signer
	fix   string
}

func (s *localSigner) Public() crypto.PublicKey { return s.pub }

func (s *localSigner) Sign(rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	sig, err := s.inner.Sign(rand, digest, opts)
	if err != nil {
		return nil, storeError(s.ref, "signing failed", s.fix, err)
	}
	return sig, nil
}

// SignContext signs unless ctx has ended already: a token answers in
// microseconds, and its calls cannot be abandoned halfway.
func (s *localSigner) SignContext(ctx context.Context, rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if ctx.Err() != nil {
		return nil, storeError(s.ref, "signing failed", "retry: the caller gave up before the token was asked", ctxError(ctx))
	}
	return s.Sign(rand, digest, opts)
}
