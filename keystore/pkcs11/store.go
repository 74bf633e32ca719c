package pkcs11

import (
	"context"
	"crypto"

	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/internal/stepkms"
)

// Config configures a [Store]. Its zero value reads PINs as
// [keystore.Ref.ReadPIN] does.
type Config struct {
	// ReadPIN returns the PIN of a reference. Nil means
	// keystore.Ref.ReadPIN: the file pin-source names, or the environment
	// variable of pin-source=env:NAME. A program keeping PINs elsewhere
	// (a Kubernetes Secret it reads) answers here, by the reference's
	// pin-source; its errors are wrapped in a keystore.StoreError.
	ReadPIN func(keystore.Ref) (string, error)
}

// Store opens and creates keys on PKCS #11 tokens: a [keystore.Opener],
// a [keystore.Creator] and an io.Closer. It logs in to each token once,
// with the PIN of the first reference to it, and refuses a later
// reference to the token with another PIN: a token the process is logged
// in to accepts any PIN, so the Store compares it with the first (a hash
// of it is kept, never the PIN). A token is named the same way (token=,
// serial= or slot-id=) in every reference to its module, so that it
// cannot be logged in to under two names.
//
// That check holds within one Store: a process MUST open every key of a
// module through one Store, shared by everything that needs keys (in a
// [keystore.Openers]); a second Store logs in again, and the token accepts
// whatever PIN it gives. Close logs out and unloads the module once no
// other Store uses it; keys opened through the Store stop signing.
//
// The zero value is a Store of Config{}; it is safe for concurrent use,
// and must not be copied once used.
type Store struct {
	cfg    Config
	tokens tokens
}

// NewStore returns a Store of cfg. It loads no module and asks no token
// until a key is opened.
func NewStore(cfg Config) (*Store, error) {
	return &Store{cfg: cfg}, nil
}

// Open opens the key ref names on its token, logging in the first time,
// and checks it: jwks' key rules, and a probe signature verified with its
// public key, which is read now and never again. Its signer signs in the
// caller's goroutine (a token answers in microseconds), and its
// SignContext refuses a context that has ended. The errors are a
// *keystore.RefError or a *keystore.StoreError: a PIN refused matches
// keystore.ErrLoginRefused, a reference of another scheme
// keystore.ErrUnsupportedStore.
func (s *Store) Open(ctx context.Context, ref string) (crypto.Signer, error) {
	return stepkms.Open(ctx, ref, keystore.SchemePKCS11, s.open)
}

// Create makes a key of spec on the token ref names, with its id and
// object (both required), and returns ref as given. It never replaces a
// key: a key with the same id or the same object is refused.
func (s *Store) Create(ctx context.Context, ref string, spec keystore.KeySpec) (keystore.Created, error) {
	return stepkms.Create(ctx, ref, keystore.SchemePKCS11, spec, s.create)
}

// Close logs out of every token the Store opened; later opens fail.
func (s *Store) Close() error { return s.tokens.close() }
