package azurekms

import (
	"context"
	"crypto"
	"crypto/elliptic"
	"net/url"
	"strings"

	"go.step.sm/crypto/kms/apiv1"
	stepazurekms "go.step.sm/crypto/kms/azurekms"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/internal/stepkms"
)

// Config configures a [Store]. Its zero value is ready.
type Config struct {
	// MaxCalls bounds the signing calls to one key in flight at once; 0
	// means keystore.MaxRemoteCalls (64). Negative is refused.
	MaxCalls int
}

// Store opens and creates keys in Azure Key Vault: a [keystore.Opener], a
// [keystore.Creator] and an io.Closer. It makes one Key Vault client per
// cloud and identity of the references it opens (environment, client-id,
// tenant-id, aad-endpoint; the identity from azidentity's chain:
// environment, workload identity, managed identity), and keeps it until
// Close.
//
// The zero value is a Store of Config{}; it is safe for concurrent use,
// and must not be copied once used.
type Store struct {
	cfg     Config
	clients stepkms.Clients[*stepazurekms.KeyVault]
}

// NewStore returns a Store of cfg. It makes no client until a key is
// opened. A negative MaxCalls is a *ksa.ConfigError.
func NewStore(cfg Config) (*Store, error) {
	if cfg.MaxCalls < 0 {
		return nil, &ksa.ConfigError{Field: "azurekms.Config.MaxCalls", Reason: "is negative"}
	}
	return &Store{cfg: cfg}, nil
}

// Open opens the key ref names (its latest version, or version=) and
// checks it: jwks' key rules, and a probe signature verified with its
// public key, which is read now and never again. Open and the signer's
// SignContext return when the caller's context ends, the call going on
// aside; at most Config.MaxCalls signatures per key are in flight. The
// errors are a *keystore.RefError or a *keystore.StoreError.
func (s *Store) Open(ctx context.Context, ref string) (crypto.Signer, error) {
	return stepkms.Open(ctx, ref, keystore.SchemeAzureKMS, s.open)
}

// Create makes a key of spec (RSA 2048, 3072 or 4096; ECDSA P-256, P-384
// or P-521) under the reference's name, in an HSM with hsm=true, and
// returns its reference with the version Key Vault gave it.
func (s *Store) Create(ctx context.Context, ref string, spec keystore.KeySpec) (keystore.Created, error) {
	return stepkms.Create(ctx, ref, keystore.SchemeAzureKMS, spec, s.create)
}

// Close closes the Store's clients; later opens fail.
func (s *Store) Close() error { return s.clients.Close() }

// clientURI is the URI of the Key Vault client of r's cloud and identity:
// no key, no secret.
func clientURI(r keystore.Ref) string {
	var attrs []string
	for _, n := range []string{"environment", "client-id", "tenant-id", "aad-endpoint"} {
		if v := r.Attr(n); v != "" {
			attrs = append(attrs, n+"="+url.QueryEscape(v))
		}
	}
	if len(attrs) == 0 {
		return ""
	}
	return "azurekms:" + strings.Join(attrs, ";")
}

// keyURI is the URI of r's key for go.step.sm.
func keyURI(r keystore.Ref) string {
	uri := "azurekms:name=" + url.QueryEscape(r.Attr("name")) + ";vault=" + url.QueryEscape(r.Attr("vault"))
	if v := r.Attr("version"); v != "" {
		uri += "?version=" + url.QueryEscape(v)
	}
	return uri
}

// client returns the Key Vault client of r's cloud and identity.
func (s *Store) client(ctx context.Context, r keystore.Ref) (*stepazurekms.KeyVault, error) {
	uri := clientURI(r)
	km, err := s.clients.Get(uri, func() (*stepazurekms.KeyVault, error) {
		return stepkms.Aside(ctx, func() (*stepazurekms.KeyVault, error) {
			return stepazurekms.New(context.WithoutCancel(ctx), apiv1.Options{Type: apiv1.AzureKMS, URI: uri})
		})
	})
	if err != nil {
		if s.clients.Closed() {
			return nil, stepkms.Closed(r)
		}
		return nil, classify(r, "the Azure Key Vault client cannot be made", err)
	}
	return km, nil
}

func (s *Store) open(ctx context.Context, r keystore.Ref) (crypto.Signer, error) {
	km, err := s.client(ctx, r)
	if err != nil {
		return nil, err
	}
	signer, err := stepkms.Aside(ctx, func() (crypto.Signer, error) {
		return km.CreateSigner(&apiv1.CreateSignerRequest{SigningKey: keyURI(r)})
	})
	if err != nil {
		return nil, classify(r, "cannot be opened", err)
	}
	return stepkms.NewRemoteSigner(r, signer, classify, s.cfg.MaxCalls), nil
}

func (s *Store) create(ctx context.Context, r keystore.Ref, spec keystore.KeySpec) (keystore.Created, error) {
	if err := stepkms.Supports(r, "Azure Key Vault", spec, []int{2048, 3072, 4096}, elliptic.P256(), elliptic.P384(), elliptic.P521()); err != nil {
		return keystore.Created{}, err
	}
	km, err := s.client(ctx, r)
	if err != nil {
		return keystore.Created{}, err
	}
	alg, bits := stepkms.Algorithm(spec)
	req := &apiv1.CreateKeyRequest{Name: keyURI(r), SignatureAlgorithm: alg, Bits: bits}
	if r.Attr("hsm") == "true" {
		req.ProtectionLevel = apiv1.HSM
	}
	resp, err := stepkms.Aside(ctx, func() (*apiv1.CreateKeyResponse, error) { return km.CreateKey(req) })
	if err != nil {
		return keystore.Created{}, classify(r, "the key cannot be created", err)
	}
	created, err := keystore.ParseRef(resp.Name)
	if err != nil {
		return keystore.Created{}, stepkms.StoreError(r, "Key Vault named the new key in a way ksa cannot read", stepkms.BugFix, err)
	}
	return keystore.Created{Ref: r.With("version", created.Attr("version")).String(), Public: resp.PublicKey}, nil
}
