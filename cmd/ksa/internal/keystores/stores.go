package keystores

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
	"sync"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
)

// Stores opens keys by reference (a keystore.Opener) and creates keys in
// key stores. It holds the managers of the key stores it opened keys in,
// one per PKCS #11 token and per remote configuration, until Close. Its
// zero value is ready; it is safe for concurrent use.
type Stores struct {
	mu sync.Mutex
	// tokens are the PKCS #11 tokens opened.
	tokens tokenSet
	// remotes are the managers of remote key stores, by configuration.
	remotes map[string]io.Closer
	closed  bool
}

// KeySpec says what key Create makes.
type KeySpec struct {
	// RSA makes an RSA key of Bits bits; otherwise an ECDSA key on Curve.
	RSA   bool
	Bits  int
	Curve elliptic.Curve
}

// String names the key: "RSA 2048", "ECDSA P-256".
func (s KeySpec) String() string {
	if s.RSA {
		return fmt.Sprintf("RSA %d", s.Bits)
	}
	if s.Curve == nil {
		return "ECDSA"
	}
	return "ECDSA " + s.Curve.Params().Name
}

// Created is a key Create made: its complete reference and public key.
type Created struct {
	// Ref names the key for every other command: for AWS KMS with the key
	// ID it was given, for Cloud KMS and Key Vault with its version.
	Ref    string
	Public crypto.PublicKey
}

// errClosed is the cause of an open after Close.
var errClosed = errors.New("the key stores are closed")

// Open opens the key ref names: a PEM file with keystore.LoadSigningKeyFile,
// a key in a key store through the store's client. A key-store key is
// checked with jwks' key rules and with a probe signature before it is
// returned. The errors are a *keystore.RefError, the file errors of
// keystore, or an *Error.
func (s *Stores) Open(ctx context.Context, ref string) (crypto.Signer, error) {
	r, err := keystore.ParseRef(ref)
	if err != nil {
		return nil, err
	}
	if r.Scheme() == keystore.SchemeFile {
		return keystore.LoadSigningKeyFile(r.Path())
	}
	if err := s.check(r); err != nil {
		return nil, err
	}
	var signer crypto.Signer
	switch r.Scheme() {
	case keystore.SchemePKCS11:
		signer, err = s.openPKCS11(ctx, r)
	case keystore.SchemeAWSKMS:
		signer, err = s.openAWSKMS(ctx, r)
	case keystore.SchemeCloudKMS:
		signer, err = s.openCloudKMS(ctx, r)
	case keystore.SchemeAzureKMS:
		signer, err = s.openAzureKMS(ctx, r)
	}
	if err != nil {
		return nil, err
	}
	if err := checkKey(ctx, r, signer); err != nil {
		return nil, err
	}
	return signer, nil
}

// Create makes a key in the key store ref names (keystore.ParseNewKeyRef):
// on a PKCS #11 token with the reference's id and object, never replacing
// a key; in AWS KMS with the reference's name as its description and alias
// prefix; in Cloud KMS as the cryptoKey's first or next version; in Key
// Vault under the reference's name. A file reference is refused: ksa
// issuer keygen writes files itself.
func (s *Stores) Create(ctx context.Context, ref string, spec KeySpec) (Created, error) {
	r, err := keystore.ParseNewKeyRef(ref)
	if err != nil {
		return Created{}, err
	}
	if r.Scheme() == keystore.SchemeFile {
		return Created{}, &Error{Ref: ref, What: "is a file", Fix: "write the key file yourself", Kind: keystore.ErrUnsupportedStore}
	}
	if err := s.check(r); err != nil {
		return Created{}, err
	}
	var c Created
	switch r.Scheme() {
	case keystore.SchemePKCS11:
		c, err = s.createPKCS11(ctx, r, spec)
	case keystore.SchemeAWSKMS:
		c, err = s.createAWSKMS(ctx, r, spec)
	case keystore.SchemeCloudKMS:
		c, err = s.createCloudKMS(ctx, r, spec)
	case keystore.SchemeAzureKMS:
		c, err = s.createAzureKMS(ctx, r, spec)
	}
	if err != nil {
		return Created{}, err
	}
	if _, err := keystore.ParseRef(c.Ref); err != nil {
		return Created{}, storeError(r, "the key store named the new key in a way ksa cannot read ("+c.Ref+")", bugFix, err)
	}
	if err := jwks.CheckPublicKey(c.Public); err != nil {
		return Created{}, &Error{Ref: c.Ref, What: "the key store made a key ksa cannot use", Detail: detail(err), Fix: bugFix, Kind: jwks.ErrUnsupportedKey, Err: err}
	}
	return c, nil
}

// bugFix is the advice for a key store answering what it should not.
const bugFix = "report it, with the key store and its version, at https://github.com/ksa-go/ksa/issues"

// check refuses a reference once the stores are closed, and one whose
// backend this build leaves out.
func (s *Stores) check(r keystore.Ref) error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return storeError(r, "cannot be opened", "open keys before closing the key stores", errClosed)
	}
	if tag, ok := builtWithout(r.Scheme()); ok {
		what := "this ksa was built without " + string(r.Scheme()) + " support"
		if tag == "cgo" {
			what = "this ksa was built without cgo, which PKCS #11 needs"
			return &Error{Ref: r.String(), What: what, Fix: "rebuild ksa with CGO_ENABLED=1 and a C compiler", Kind: keystore.ErrUnsupportedStore}
		}
		return &Error{Ref: r.String(), What: what, Fix: "rebuild it without -tags " + tag, Kind: keystore.ErrUnsupportedStore}
	}
	return nil
}

// builtWithout reports the build tag (or "cgo") that left scheme's
// backend out of this build.
func builtWithout(scheme keystore.Scheme) (string, bool) {
	switch scheme {
	case keystore.SchemePKCS11:
		return pkcs11Missing, pkcs11Missing != ""
	case keystore.SchemeAWSKMS:
		return awskmsMissing, awskmsMissing != ""
	case keystore.SchemeCloudKMS:
		return cloudkmsMissing, cloudkmsMissing != ""
	case keystore.SchemeAzureKMS:
		return azurekmsMissing, azurekmsMissing != ""
	}
	return "", false
}

// Close closes every manager the stores opened; keys opened through them
// stop signing. Later opens fail.
func (s *Stores) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var errs []error
	errs = append(errs, s.tokens.close())
	for k, c := range s.remotes {
		errs = append(errs, c.Close())
		delete(s.remotes, k)
	}
	return errors.Join(errs...)
}

// probe is what the probe signature of Open signs.
var probe = []byte("ksa key store probe")

// checkKey refuses a key jwks' rules refuse, and one whose probe signature
// does not verify with its public key.
func checkKey(ctx context.Context, r keystore.Ref, signer crypto.Signer) error {
	pub := signer.Public()
	if err := jwks.CheckPublicKey(pub); err != nil {
		return &Error{Ref: r.String(), What: "holds a key ksa cannot use", Detail: detail(err),
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
		return &Error{Ref: r.String(), What: fmt.Sprintf("holds a %T key, which no JWT algorithm kube-apiserver accepts uses", pub),
			Fix: "use an RSA or ECDSA key", Kind: jwks.ErrUnsupportedKey}
	}
	var sig []byte
	var err error
	if cs, ok := signer.(interface {
		SignContext(context.Context, io.Reader, []byte, crypto.SignerOpts) ([]byte, error)
	}); ok {
		sig, err = cs.SignContext(ctx, rand.Reader, digest, opts)
	} else {
		sig, err = signer.Sign(rand.Reader, digest, opts)
	}
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return &Error{Ref: e.Ref, What: "the probe signature failed", Detail: e.Detail, Fix: e.Fix, Kind: e.Kind, Err: e.Err}
		}
		return storeError(r, "the probe signature failed", "check that ksa's identity may sign with the key", err)
	}
	ok := false
	switch k := pub.(type) {
	case *rsa.PublicKey:
		ok = rsa.VerifyPKCS1v15(k, crypto.SHA256, digest, sig) == nil
	case *ecdsa.PublicKey:
		ok = ecdsa.VerifyASN1(k, digest, sig)
	}
	if !ok {
		return storeError(r, "the key store's probe signature does not verify with the key's public key (an RSA key must sign PKCS #1 v1.5, as RS256 does)",
			"use a key that signs RS256 or ES256/ES384/ES512", nil)
	}
	return nil
}
