package stepkms

import (
	"context"
	"crypto"
	"crypto/elliptic"

	"go.step.sm/crypto/kms/apiv1"

	"github.com/ksa-go/ksa/keystore"
)

// KeyManager is what Cloud asks of a go.step.sm cloud key manager.
type KeyManager interface {
	CreateSigner(*apiv1.CreateSignerRequest) (crypto.Signer, error)
	CreateKey(*apiv1.CreateKeyRequest) (*apiv1.CreateKeyResponse, error)
	Close() error
}

// Cloud is a cloud key store over go.step.sm: what differs between AWS
// KMS, Google Cloud KMS and Azure Key Vault, the rest (one client per
// configuration, the calls made aside, the checks) being the same. Its
// Open and Create take the store's clients.
type Cloud[K KeyManager] struct {
	// Scheme is the references' scheme; Name the store's name in messages.
	Scheme keystore.Scheme
	Name   string
	// Bits and Curves are the keys the store makes.
	Bits   []int
	Curves []elliptic.Curve
	// ClientKey is the configuration of r's client: the key of Clients
	// (no key name, no secret); NewClient makes the client of that key,
	// ClientFailed says what failed when it cannot and ClientFix, if set,
	// the fix.
	ClientKey    func(r keystore.Ref) string
	NewClient    func(ctx context.Context, key string) (K, error)
	ClientFailed string
	ClientFix    string
	// SigningKey is go.step.sm's name of r's key.
	SigningKey func(r keystore.Ref) string
	// CheckSigner, if set, refuses a signer the store opened.
	CheckSigner func(r keystore.Ref, s crypto.Signer) error
	// CreateRequest is the request that makes r's key of go.step.sm's
	// algorithm alg (and bits for RSA); Created, the reference of the key
	// it made from the name the store gave it, "" when that name lacks
	// what the reference needs.
	CreateRequest func(r keystore.Ref, alg apiv1.SignatureAlgorithm, bits int) *apiv1.CreateKeyRequest
	Created       func(r, name keystore.Ref) string
	// Classify explains the store's errors; MaxCalls bounds the
	// signatures in flight per key.
	Classify Classify
	MaxCalls int
}

// Open opens and checks the key ref names (see the package Open).
func (c Cloud[K]) Open(ctx context.Context, ref string, clients *Clients[K]) (crypto.Signer, error) {
	return Open(ctx, ref, c.Scheme, func(ctx context.Context, r keystore.Ref) (crypto.Signer, error) {
		km, err := c.Client(ctx, r, clients)
		if err != nil {
			return nil, err
		}
		signer, err := Aside(ctx, func() (crypto.Signer, error) {
			return km.CreateSigner(&apiv1.CreateSignerRequest{SigningKey: c.SigningKey(r)})
		})
		if err != nil {
			return nil, c.Classify(r, "cannot be opened", err)
		}
		if c.CheckSigner != nil {
			if err := c.CheckSigner(r, signer); err != nil {
				return nil, err
			}
		}
		return NewRemoteSigner(r, signer, c.Classify, c.MaxCalls), nil
	})
}

// Create makes and checks the key ref names (see the package Create).
func (c Cloud[K]) Create(ctx context.Context, ref string, spec keystore.KeySpec, clients *Clients[K]) (keystore.Created, error) {
	return Create(ctx, ref, c.Scheme, spec, func(ctx context.Context, r keystore.Ref, spec keystore.KeySpec) (keystore.Created, error) {
		if err := Supports(r, c.Name, spec, c.Bits, c.Curves...); err != nil {
			return keystore.Created{}, err
		}
		km, err := c.Client(ctx, r, clients)
		if err != nil {
			return keystore.Created{}, err
		}
		alg, bits := Algorithm(spec)
		req := c.CreateRequest(r, alg, bits)
		resp, err := Aside(ctx, func() (*apiv1.CreateKeyResponse, error) { return km.CreateKey(req) })
		if err != nil {
			return keystore.Created{}, c.Classify(r, "the key cannot be created", err)
		}
		name, err := keystore.ParseRef(resp.Name)
		created := ""
		if err == nil {
			created = c.Created(r, name)
		}
		if created == "" {
			return keystore.Created{}, StoreError(r, c.Name+" named the new key in a way ksa cannot read", BugFix, err)
		}
		return keystore.Created{Ref: created, Public: resp.PublicKey}, nil
	})
}

// Client returns the client of r's configuration, made on first use.
func (c Cloud[K]) Client(ctx context.Context, r keystore.Ref, clients *Clients[K]) (K, error) {
	key := c.ClientKey(r)
	km, err := clients.Get(key, func() (K, error) {
		return Aside(ctx, func() (K, error) { return c.NewClient(context.WithoutCancel(ctx), key) })
	})
	if err != nil {
		var zero K
		if clients.Closed() {
			return zero, Closed(r)
		}
		e := c.Classify(r, c.ClientFailed, err)
		if c.ClientFix != "" {
			e.Fix = c.ClientFix
		}
		return zero, e
	}
	return km, nil
}
