package keystoretest

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
)

// DefaultGoroutines is how many goroutines sign with each key at once
// when Config.Goroutines is 0.
const DefaultGoroutines = 8

// Config says what [Run] checks a key store's opener against.
type Config struct {
	// Opener is the opener under test (required), typically a key store
	// package's *Store. When it is also a keystore.Creator and NewKey is
	// set, creation is checked; when it is an io.Closer, Run closes it
	// last and checks that it opens nothing after.
	Opener keystore.Opener
	// Keys are keys the store holds, each opened and signed with. Run
	// needs one of Keys, Missing or NewKey: the first gives the
	// reference of the store's scheme the refusals and the closed check
	// use.
	Keys []Key
	// NewKey returns a reference, new at each call, at which Create makes
	// a key of spec (a new id and object, a new name); nil leaves creation
	// unchecked.
	NewKey func(spec keystore.KeySpec) string
	// Specs are the keys Create makes, each then opened and signed with;
	// nil means ECDSA P-256 and RSA 2048, empty none (the refusal of a
	// spec outside jwks' rules is still checked).
	Specs []keystore.KeySpec
	// Missing is a well-formed reference to a key the store does not
	// hold; "" leaves that refusal unchecked.
	Missing string
	// Unsupported are references the opener must refuse with
	// keystore.ErrUnsupportedStore; nil means a PEM file path and a
	// reference of each key-store scheme other than the store's.
	Unsupported []string
	// Secrets are strings no error may show (a PIN, a credential).
	Secrets []string
	// Goroutines is how many goroutines sign with each key at once; 0
	// means DefaultGoroutines. Above the store's bound on calls in
	// flight, the extra signatures must wait for a slot, not fail.
	Goroutines int
}

// Key is a key the store holds.
type Key struct {
	// Ref is its reference.
	Ref string
	// Public is its public key, compared with the opened signer's; nil
	// leaves it uncompared.
	Public crypto.PublicKey
}

// Run checks a key store's opener, each check a subtest of t, in this
// order:
//
//   - create: Create makes each of Specs where NewKey says and returns a
//     reference that parses and a public key of the spec (the keys it
//     made are checked below with Keys); it refuses a key outside jwks'
//     rules (RSA 1024) with jwks.ErrUnsupportedKey;
//   - open: each key opens, with the public key given;
//   - sign: each key signs with the JWT algorithm of its public key
//     (RS256; ES256, ES384 or ES512 by the curve), with Sign and with
//     SignContext, and the signatures verify;
//   - concurrent: Goroutines goroutines sign with each key at once, and
//     every signature verifies;
//   - canceled: Open, and a signer's SignContext, given a context already
//     canceled fail with an error wrapping the context's cause;
//   - refused: malformed references and references carrying a secret fail
//     with keystore.ErrInvalidRef without showing it; Unsupported ones
//     with keystore.ErrUnsupportedStore; Missing with
//     keystore.ErrKeyStore, as a *keystore.StoreError naming a fix;
//   - closed: once closed, the opener opens nothing (keystore.ErrKeyStore).
//
// Every error is one line and shows none of Secrets. Keys' signers must
// implement SignContext(ctx, rand, digest, opts), as the key stores' do.
// A store with no stand-in (Azure Key Vault here) runs the checks that
// need no key: no Keys, a NewKey, empty Specs.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	s := suite{cfg: cfg}
	switch {
	case len(cfg.Keys) > 0:
		s.ref = cfg.Keys[0].Ref
	case cfg.Missing != "":
		s.ref = cfg.Missing
	case cfg.NewKey != nil:
		s.ref = cfg.NewKey(keystore.KeySpec{})
	}
	if cfg.Opener == nil || s.ref == "" {
		t.Fatal("keystoretest.Run: Config.Opener is required, and one of Keys, Missing or NewKey")
	}
	if s.cfg.Goroutines == 0 {
		s.cfg.Goroutines = DefaultGoroutines
	}
	if s.cfg.Specs == nil {
		s.cfg.Specs = []keystore.KeySpec{{Curve: elliptic.P256()}, {RSA: true, Bits: 2048}}
	}
	t.Run("create", s.create)
	keys := append(slices.Clip(s.cfg.Keys), s.created...)
	t.Run("open", func(t *testing.T) { s.each(t, keys, s.open) })
	t.Run("sign", func(t *testing.T) { s.each(t, keys, s.sign) })
	t.Run("concurrent", func(t *testing.T) { s.each(t, keys, s.concurrent) })
	t.Run("canceled", func(t *testing.T) { s.each(t, keys, s.canceled) })
	t.Run("refused", s.refused)
	t.Run("closed", s.closed)
}

// suite is a run of the checks.
type suite struct {
	cfg Config
	// ref is a reference of the store's scheme: the first key's, Missing
	// or a key to create.
	ref     string
	created []Key
}

// each runs check on every key, a subtest per key named by its index in
// Keys (created keys after them).
func (s *suite) each(t *testing.T, keys []Key, check func(*testing.T, Key)) {
	for i, k := range keys {
		t.Run(strconv.Itoa(i), func(t *testing.T) { check(t, k) })
	}
}

// contextSigner is a signer whose signature ends with its caller's
// context.
type contextSigner interface {
	crypto.Signer
	SignContext(ctx context.Context, rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error)
}

// openKey opens k, failing the test on an error or another public key.
func (s *suite) openKey(t *testing.T, k Key) contextSigner {
	t.Helper()
	signer, err := s.cfg.Opener.Open(t.Context(), k.Ref)
	if err != nil {
		t.Fatalf("Open(%q): %v", k.Ref, err)
	}
	if k.Public != nil {
		if pub, ok := k.Public.(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(signer.Public()) {
			t.Fatalf("Open(%q): the signer's public key is not the key's", k.Ref)
		}
	}
	cs, ok := signer.(contextSigner)
	if !ok {
		t.Fatalf("Open(%q): a %T has no SignContext: a key store's signature must end with its caller's context", k.Ref, signer)
	}
	return cs
}

func (s *suite) open(t *testing.T, k Key) { s.openKey(t, k) }

func (s *suite) sign(t *testing.T, k Key) {
	signer := s.openKey(t, k)
	if err := signVerify(t.Context(), signer, false); err != nil {
		t.Errorf("%s: Sign: %v", k.Ref, err)
	}
	if err := signVerify(t.Context(), signer, true); err != nil {
		t.Errorf("%s: SignContext: %v", k.Ref, err)
	}
}

func (s *suite) concurrent(t *testing.T, k Key) {
	signer := s.openKey(t, k)
	var wg sync.WaitGroup
	errs := make(chan error, s.cfg.Goroutines)
	for range s.cfg.Goroutines {
		wg.Go(func() {
			if err := signVerify(t.Context(), signer, true); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("%s: %d goroutines at once: %v", k.Ref, s.cfg.Goroutines, err)
	}
}

// errGone is the cause of the contexts canceled checks cancel.
var errGone = errors.New("keystoretest: the caller gave up")

func (s *suite) canceled(t *testing.T, k Key) {
	signer := s.openKey(t, k)
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(errGone)
	_, err := s.cfg.Opener.Open(ctx, k.Ref)
	s.wants(t, k.Ref+": Open with a canceled context", err, errGone)
	_, err = signer.SignContext(ctx, rand.Reader, make([]byte, 64)[:digestSize(signer.Public())], hashOf(signer.Public()))
	s.wants(t, k.Ref+": SignContext with a canceled context", err, errGone)
}

func (s *suite) refused(t *testing.T) {
	ctx := t.Context()
	for _, ref := range []string{
		"pkcs12:token=ksa",
		"pkcs11:token=ksa;id=01?pin-value=4321",
		"azurekms:name=sa;vault=my-vault;client-secret=hunter2",
		"awskms:key-id=alias/sa",
	} {
		_, err := s.cfg.Opener.Open(ctx, ref)
		s.wants(t, "Open("+ref+")", err, keystore.ErrInvalidRef)
		for _, secret := range []string{"4321", "hunter2"} {
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("Open(%q): the error shows the secret: %v", ref, err)
			}
		}
	}
	unsupported := s.cfg.Unsupported
	if unsupported == nil {
		unsupported = others(s.ref)
	}
	for _, ref := range unsupported {
		_, err := s.cfg.Opener.Open(ctx, ref)
		s.wants(t, "Open("+ref+")", err, keystore.ErrUnsupportedStore)
	}
	if s.cfg.Missing != "" {
		_, err := s.cfg.Opener.Open(ctx, s.cfg.Missing)
		s.wants(t, "Open(missing key)", err, keystore.ErrKeyStore)
		var e *keystore.StoreError
		if !errors.As(err, &e) {
			t.Errorf("Open(missing key): a %T, not a *keystore.StoreError: %v", err, err)
		} else if e.Fix == "" || e.What == "" {
			t.Errorf("Open(missing key): the error says no fix: %v", err)
		}
	}
}

func (s *suite) create(t *testing.T) {
	creator, ok := s.cfg.Opener.(keystore.Creator)
	if !ok || s.cfg.NewKey == nil {
		t.Skip("the opener is not a keystore.Creator, or Config.NewKey is nil")
	}
	ctx := t.Context()
	for _, spec := range s.cfg.Specs {
		c, err := creator.Create(ctx, s.cfg.NewKey(spec), spec)
		if err != nil {
			t.Errorf("Create(%s): %v", spec, err)
			s.clean(t, "Create", err)
			continue
		}
		if !matches(c.Public, spec) {
			t.Errorf("Create(%s): made a %T key of another size or curve", spec, c.Public)
		}
		if _, err := keystore.ParseRef(c.Ref); err != nil {
			t.Errorf("Create(%s): the reference %q does not parse: %v", spec, c.Ref, err)
			continue
		}
		s.created = append(s.created, Key{Ref: c.Ref, Public: c.Public})
	}
	_, err := creator.Create(ctx, s.cfg.NewKey(keystore.KeySpec{RSA: true, Bits: 1024}), keystore.KeySpec{RSA: true, Bits: 1024})
	s.wants(t, "Create(RSA 1024)", err, jwks.ErrUnsupportedKey)
}

func (s *suite) closed(t *testing.T) {
	c, ok := s.cfg.Opener.(io.Closer)
	if !ok {
		t.Skip("the opener is not an io.Closer")
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	_, err := s.cfg.Opener.Open(t.Context(), s.ref)
	s.wants(t, "Open after Close", err, keystore.ErrKeyStore)
}

// wants fails the test unless err matches target, is one line and shows
// no secret.
func (s *suite) wants(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: got %v, want an error matching %v", what, err, target)
	}
	s.clean(t, what, err)
}

// clean fails the test if err's message has a line break or a secret.
func (s *suite) clean(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("%s: the error is not one line: %q", what, msg)
	}
	for _, secret := range s.cfg.Secrets {
		if secret != "" && strings.Contains(msg, secret) {
			t.Errorf("%s: the error shows a secret: %s", what, msg)
		}
	}
}

// others are references the opener of ref's scheme refuses as another
// store's: a PEM file, and a key of each other key-store scheme.
func others(ref string) []string {
	r, err := keystore.ParseRef(ref)
	if err != nil {
		return nil
	}
	out := []string{"/nonexistent/sa.key"}
	for scheme, other := range map[keystore.Scheme]string{
		keystore.SchemePKCS11:   "pkcs11:token=ksa;id=01?pin-source=/nonexistent/pin",
		keystore.SchemeAWSKMS:   "awskms:key-id=1234abcd-12ab-34cd-56ef-1234567890ab",
		keystore.SchemeCloudKMS: "cloudkms:projects/p/locations/l/keyRings/r/cryptoKeys/k/cryptoKeyVersions/1",
		keystore.SchemeAzureKMS: "azurekms:name=sa;vault=my-vault",
	} {
		if scheme != r.Scheme() {
			out = append(out, other)
		}
	}
	return out
}

// matches reports whether pub is a key of spec.
func matches(pub crypto.PublicKey, spec keystore.KeySpec) bool {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return spec.RSA && k.N.BitLen() == spec.Bits
	case *ecdsa.PublicKey:
		curve := spec.Curve
		if curve == nil {
			curve = elliptic.P256()
		}
		return !spec.RSA && k.Curve == curve
	}
	return false
}

// hashOf is the hash of pub's JWT algorithm: SHA-256 for RSA (RS256),
// the curve's for ECDSA; none for Ed25519.
func hashOf(pub crypto.PublicKey) crypto.Hash {
	k, err := jwks.NewKey(pub)
	if err != nil {
		return crypto.SHA256
	}
	switch k.Algorithm {
	case "ES384":
		return crypto.SHA384
	case "ES512":
		return crypto.SHA512
	case "EdDSA":
		return 0
	}
	return crypto.SHA256
}

// digestSize is the size of the digest pub's algorithm signs.
func digestSize(pub crypto.PublicKey) int {
	if h := hashOf(pub); h != 0 {
		return h.Size()
	}
	return 64
}

// signVerify signs with signer as its key's JWT algorithm does, with
// SignContext(ctx) when withContext is set, and verifies the signature
// with its public key.
func signVerify(ctx context.Context, signer contextSigner, withContext bool) error {
	msg := []byte("keystoretest header.claims")
	h := hashOf(signer.Public())
	digest := msg
	if h != 0 {
		hh := h.New()
		hh.Write(msg)
		digest = hh.Sum(nil)
	}
	var sig []byte
	var err error
	if withContext {
		sig, err = signer.SignContext(ctx, rand.Reader, digest, h)
	} else {
		sig, err = signer.Sign(rand.Reader, digest, h)
	}
	if err != nil {
		return err
	}
	ok := false
	switch k := signer.Public().(type) {
	case *rsa.PublicKey:
		ok = rsa.VerifyPKCS1v15(k, h, digest, sig) == nil
	case *ecdsa.PublicKey:
		ok = ecdsa.VerifyASN1(k, digest, sig)
	case ed25519.PublicKey:
		ok = ed25519.Verify(k, msg, sig)
	}
	if !ok {
		return errors.New("the signature does not verify with the key's public key")
	}
	return nil
}
