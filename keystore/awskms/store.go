package awskms

import (
	"context"
	"crypto"
	"crypto/elliptic"
	"net/url"
	"strings"

	"go.step.sm/crypto/kms/apiv1"
	stepawskms "go.step.sm/crypto/kms/awskms"

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

// Store opens and creates keys in AWS KMS: a [keystore.Opener], a
// [keystore.Creator] and an io.Closer. It makes one AWS KMS client per
// region, profile and credentials file of the references it opens, with
// the AWS SDK's usual configuration (AWS_* variables, shared files, roles;
// AWS_ENDPOINT_URL_KMS names another endpoint), and keeps it until Close.
//
// The zero value is a Store of Config{}; it is safe for concurrent use,
// and must not be copied once used.
type Store struct {
	cfg     Config
	clients stepkms.Clients[*stepawskms.KMS]
}

// NewStore returns a Store of cfg. It asks AWS nothing until a key is
// opened. A negative MaxCalls is a *ksa.ConfigError.
func NewStore(cfg Config) (*Store, error) {
	if cfg.MaxCalls < 0 {
		return nil, &ksa.ConfigError{Field: "awskms.Config.MaxCalls", Reason: "is negative"}
	}
	return &Store{cfg: cfg}, nil
}

// Open opens the key ref names (its key ID or key ARN) and checks it:
// jwks' key rules, and a probe signature verified with its public key,
// which is read now and never again. Open and the signer's SignContext
// return when the caller's context ends, the call going on aside; at most
// Config.MaxCalls signatures per key are in flight. The errors are a
// *keystore.RefError or a *keystore.StoreError.
func (s *Store) Open(ctx context.Context, ref string) (crypto.Signer, error) {
	return s.cloud().Open(ctx, ref, &s.clients)
}

// Create makes a key of spec (RSA 2048, 3072 or 4096; ECDSA P-256, P-384
// or P-521) with the reference's name as its description and alias
// prefix, and returns its reference by key ID.
func (s *Store) Create(ctx context.Context, ref string, spec keystore.KeySpec) (keystore.Created, error) {
	return s.cloud().Create(ctx, ref, spec, &s.clients)
}

// Close closes the Store's clients; later opens fail.
func (s *Store) Close() error { return s.clients.Close() }

// cloud is AWS KMS for stepkms: a client per region, profile and
// credentials file, keys by key ID, created under an alias of their name.
func (s *Store) cloud() stepkms.Cloud[*stepawskms.KMS] {
	return stepkms.Cloud[*stepawskms.KMS]{
		Scheme: keystore.SchemeAWSKMS, Name: "AWS KMS",
		Bits: []int{2048, 3072, 4096}, Curves: []elliptic.Curve{elliptic.P256(), elliptic.P384(), elliptic.P521()},
		ClientKey: func(r keystore.Ref) string {
			var attrs []string
			for _, n := range []string{"region", "profile", "credentials-file"} {
				if v := r.Attr(n); v != "" {
					attrs = append(attrs, n+"="+url.QueryEscape(v))
				}
			}
			if len(attrs) == 0 {
				return ""
			}
			return "awskms:" + strings.Join(attrs, ";")
		},
		NewClient: func(ctx context.Context, uri string) (*stepawskms.KMS, error) {
			return stepawskms.New(ctx, apiv1.Options{Type: apiv1.AmazonKMS, URI: uri})
		},
		ClientFailed: "the AWS configuration cannot be loaded",
		SigningKey:   func(r keystore.Ref) string { return "awskms:key-id=" + url.QueryEscape(r.Attr("key-id")) },
		CreateRequest: func(r keystore.Ref, alg apiv1.SignatureAlgorithm, bits int) *apiv1.CreateKeyRequest {
			return &apiv1.CreateKeyRequest{Name: "awskms:name=" + url.QueryEscape(r.Attr("name")), SignatureAlgorithm: alg, Bits: bits}
		},
		Created: func(r, name keystore.Ref) string {
			if name.Attr("key-id") == "" {
				return ""
			}
			return r.With("name", "").With("key-id", name.Attr("key-id")).String()
		},
		Classify: classify, MaxCalls: s.cfg.MaxCalls,
	}
}
