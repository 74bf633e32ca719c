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
	return stepkms.Open(ctx, ref, keystore.SchemeAWSKMS, s.open)
}

// Create makes a key of spec (RSA 2048, 3072 or 4096; ECDSA P-256, P-384
// or P-521) with the reference's name as its description and alias
// prefix, and returns its reference by key ID.
func (s *Store) Create(ctx context.Context, ref string, spec keystore.KeySpec) (keystore.Created, error) {
	return stepkms.Create(ctx, ref, keystore.SchemeAWSKMS, spec, s.create)
}

// Close closes the Store's clients; later opens fail.
func (s *Store) Close() error { return s.clients.Close() }

// client returns the AWS KMS client of r's region, profile and
// credentials file.
func (s *Store) client(ctx context.Context, r keystore.Ref) (*stepawskms.KMS, error) {
	var attrs []string
	for _, n := range []string{"region", "profile", "credentials-file"} {
		if v := r.Attr(n); v != "" {
			attrs = append(attrs, n+"="+url.QueryEscape(v))
		}
	}
	uri := ""
	if len(attrs) > 0 {
		uri = "awskms:" + strings.Join(attrs, ";")
	}
	km, err := s.clients.Get(uri, func() (*stepawskms.KMS, error) {
		return stepkms.Aside(ctx, func() (*stepawskms.KMS, error) {
			return stepawskms.New(context.WithoutCancel(ctx), apiv1.Options{Type: apiv1.AmazonKMS, URI: uri})
		})
	})
	if err != nil {
		if s.clients.Closed() {
			return nil, stepkms.Closed(r)
		}
		return nil, classify(r, "the AWS configuration cannot be loaded", err)
	}
	return km, nil
}

func (s *Store) open(ctx context.Context, r keystore.Ref) (crypto.Signer, error) {
	km, err := s.client(ctx, r)
	if err != nil {
		return nil, err
	}
	signer, err := stepkms.Aside(ctx, func() (crypto.Signer, error) {
		return km.CreateSigner(&apiv1.CreateSignerRequest{SigningKey: "awskms:key-id=" + url.QueryEscape(r.Attr("key-id"))})
	})
	if err != nil {
		return nil, classify(r, "cannot be opened", err)
	}
	return stepkms.NewRemoteSigner(r, signer, classify, s.cfg.MaxCalls), nil
}

func (s *Store) create(ctx context.Context, r keystore.Ref, spec keystore.KeySpec) (keystore.Created, error) {
	if err := stepkms.Supports(r, "AWS KMS", spec, []int{2048, 3072, 4096}, elliptic.P256(), elliptic.P384(), elliptic.P521()); err != nil {
		return keystore.Created{}, err
	}
	km, err := s.client(ctx, r)
	if err != nil {
		return keystore.Created{}, err
	}
	alg, bits := stepkms.Algorithm(spec)
	resp, err := stepkms.Aside(ctx, func() (*apiv1.CreateKeyResponse, error) {
		return km.CreateKey(&apiv1.CreateKeyRequest{Name: "awskms:name=" + url.QueryEscape(r.Attr("name")), SignatureAlgorithm: alg, Bits: bits})
	})
	if err != nil {
		return keystore.Created{}, classify(r, "the key cannot be created", err)
	}
	created, err := keystore.ParseRef(resp.Name)
	if err != nil || created.Attr("key-id") == "" {
		return keystore.Created{}, stepkms.StoreError(r, "AWS KMS named the new key in a way ksa cannot read", stepkms.BugFix, err)
	}
	return keystore.Created{Ref: r.With("name", "").With("key-id", created.Attr("key-id")).String(), Public: resp.PublicKey}, nil
}
