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
	return s.cloud().Open(ctx, ref, &s.clients)
}

// Create makes a key of spec (RSA 2048, 3072 or 4096; ECDSA P-256, P-384
// or P-521) under the reference's name, in an HSM with hsm=true, and
// returns its reference with the version Key Vault gave it.
func (s *Store) Create(ctx context.Context, ref string, spec keystore.KeySpec) (keystore.Created, error) {
	return s.cloud().Create(ctx, ref, spec, &s.clients)
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

// cloud is Azure Key Vault for stepkms: a client per cloud and identity,
// keys by vault, name and version, in an HSM with hsm=true.
func (s *Store) cloud() stepkms.Cloud[*stepazurekms.KeyVault] {
	return stepkms.Cloud[*stepazurekms.KeyVault]{
		Scheme: keystore.SchemeAzureKMS, Name: "Azure Key Vault",
		Bits: []int{2048, 3072, 4096}, Curves: []elliptic.Curve{elliptic.P256(), elliptic.P384(), elliptic.P521()},
		ClientKey: clientURI,
		NewClient: func(ctx context.Context, uri string) (*stepazurekms.KeyVault, error) {
			return stepazurekms.New(ctx, apiv1.Options{Type: apiv1.AzureKMS, URI: uri})
		},
		ClientFailed: "the Azure Key Vault client cannot be made",
		SigningKey:   keyURI,
		CreateRequest: func(r keystore.Ref, alg apiv1.SignatureAlgorithm, bits int) *apiv1.CreateKeyRequest {
			req := &apiv1.CreateKeyRequest{Name: keyURI(r), SignatureAlgorithm: alg, Bits: bits}
			if r.Attr("hsm") == "true" {
				req.ProtectionLevel = apiv1.HSM
			}
			return req
		},
		Created:  func(r, name keystore.Ref) string { return r.With("version", name.Attr("version")).String() },
		Classify: classify, MaxCalls: s.cfg.MaxCalls,
	}
}
