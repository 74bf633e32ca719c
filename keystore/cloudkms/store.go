package cloudkms

import (
	"context"
	"crypto"
	"crypto/elliptic"
	"crypto/x509"
	"slices"

	kmsapi "cloud.google.com/go/kms/apiv1"
	"go.step.sm/crypto/kms/apiv1"
	stepcloudkms "go.step.sm/crypto/kms/cloudkms"
	"google.golang.org/api/option"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/internal/stepkms"
)

// Config configures a [Store]. Its zero value is ready.
type Config struct {
	// ClientOptions are given to every Cloud KMS client the Store makes,
	// before the reference's credentials-file: another endpoint, a
	// transport, credentials of the program's own. Nil means Google's
	// defaults (the application default credentials).
	ClientOptions []option.ClientOption
	// MaxCalls bounds the signing calls to one key in flight at once; 0
	// means keystore.MaxRemoteCalls (64). Negative is refused.
	MaxCalls int
}

// Store opens and creates key versions in Google Cloud KMS: a
// [keystore.Opener], a [keystore.Creator] and an io.Closer. It makes one
// Cloud KMS client per credentials file of the references it opens (the
// application default credentials for those without), and keeps it until
// Close.
//
// The zero value is a Store of Config{}; it is safe for concurrent use,
// and must not be copied once used.
type Store struct {
	cfg     Config
	clients stepkms.Clients[*stepcloudkms.CloudKMS]
}

// NewStore returns a Store of cfg. It makes no client until a key is
// opened. A negative MaxCalls is a *ksa.ConfigError.
func NewStore(cfg Config) (*Store, error) {
	if cfg.MaxCalls < 0 {
		return nil, &ksa.ConfigError{Field: "cloudkms.Config.MaxCalls", Reason: "is negative"}
	}
	cfg.ClientOptions = slices.Clone(cfg.ClientOptions)
	return &Store{cfg: cfg}, nil
}

// Open opens the key version ref names and checks it: a version that signs
// RS256, ES256 or ES384 (RSA-PSS and SHA-512 versions are refused), jwks'
// key rules, and a probe signature verified with its public key, which is
// read now and never again. Open and the signer's SignContext return when
// the caller's context ends, the call going on aside; at most
// Config.MaxCalls signatures per key are in flight. The errors are a
// *keystore.RefError or a *keystore.StoreError.
func (s *Store) Open(ctx context.Context, ref string) (crypto.Signer, error) {
	return stepkms.Open(ctx, ref, keystore.SchemeCloudKMS, s.open)
}

// Create makes the cryptoKey ref names (its key ring must exist) with a
// first version of spec (RSA 2048, 3072 or 4096; ECDSA P-256 or P-384),
// software-protected, and returns that version's reference.
func (s *Store) Create(ctx context.Context, ref string, spec keystore.KeySpec) (keystore.Created, error) {
	return stepkms.Create(ctx, ref, keystore.SchemeCloudKMS, spec, s.create)
}

// Close closes the Store's clients; later opens fail.
func (s *Store) Close() error { return s.clients.Close() }

// client returns the Cloud KMS client of r's credentials file, or of the
// application default credentials.
func (s *Store) client(ctx context.Context, r keystore.Ref) (*stepcloudkms.CloudKMS, error) {
	file := r.Attr("credentials-file")
	km, err := s.clients.Get(file, func() (*stepcloudkms.CloudKMS, error) {
		return stepkms.Aside(ctx, func() (*stepcloudkms.CloudKMS, error) {
			opts := slices.Clone(s.cfg.ClientOptions)
			if file != "" {
				opts = append(opts, option.WithAuthCredentialsFile(option.ServiceAccount, file))
			}
			client, err := kmsapi.NewKeyManagementClient(context.WithoutCancel(ctx), opts...)
			if err != nil {
				return nil, err
			}
			return stepcloudkms.NewCloudKMS(client), nil
		})
	})
	if err != nil {
		if s.clients.Closed() {
			return nil, stepkms.Closed(r)
		}
		e := classify(r, "the Google Cloud KMS client cannot be made", err)
		e.Fix = "give ksa Google credentials: GOOGLE_APPLICATION_CREDENTIALS, credentials-file= in the reference, or a service account of the machine or pod"
		return nil, e
	}
	return km, nil
}

// algorithms are the algorithms of the key versions ksa signs with: RS256
// and ES256/ES384 (Cloud KMS has no P-521).
var algorithms = []x509.SignatureAlgorithm{x509.SHA256WithRSA, x509.ECDSAWithSHA256, x509.ECDSAWithSHA384}

func (s *Store) open(ctx context.Context, r keystore.Ref) (crypto.Signer, error) {
	km, err := s.client(ctx, r)
	if err != nil {
		return nil, err
	}
	signer, err := stepkms.Aside(ctx, func() (crypto.Signer, error) {
		return km.CreateSigner(&apiv1.CreateSignerRequest{SigningKey: "cloudkms:" + r.Attr("resource")})
	})
	if err != nil {
		return nil, classify(r, "cannot be opened", err)
	}
	if a, ok := signer.(interface {
		SignatureAlgorithm() x509.SignatureAlgorithm
	}); ok && !slices.Contains(algorithms, a.SignatureAlgorithm()) {
		return nil, stepkms.StoreError(r, "the key version signs with "+a.SignatureAlgorithm().String()+", which no JWT algorithm kube-apiserver accepts uses",
			"use a version of algorithm RSA_SIGN_PKCS1_2048_SHA256 (3072, 4096), EC_SIGN_P256_SHA256 or EC_SIGN_P384_SHA384", nil)
	}
	return stepkms.NewRemoteSigner(r, signer, classify, s.cfg.MaxCalls), nil
}

func (s *Store) create(ctx context.Context, r keystore.Ref, spec keystore.KeySpec) (keystore.Created, error) {
	if err := stepkms.Supports(r, "Google Cloud KMS", spec, []int{2048, 3072, 4096}, elliptic.P256(), elliptic.P384()); err != nil {
		return keystore.Created{}, err
	}
	km, err := s.client(ctx, r)
	if err != nil {
		return keystore.Created{}, err
	}
	alg, bits := stepkms.Algorithm(spec)
	resp, err := stepkms.Aside(ctx, func() (*apiv1.CreateKeyResponse, error) {
		return km.CreateKey(&apiv1.CreateKeyRequest{Name: r.Attr("resource"), SignatureAlgorithm: alg, Bits: bits, ProtectionLevel: apiv1.Software})
	})
	if err != nil {
		return keystore.Created{}, classify(r, "the key cannot be created", err)
	}
	created, err := keystore.ParseRef(resp.Name)
	if err != nil {
		return keystore.Created{}, stepkms.StoreError(r, "Cloud KMS named the new key version in a way ksa cannot read", stepkms.BugFix, err)
	}
	return keystore.Created{Ref: r.With("resource", created.Attr("resource")).String(), Public: resp.PublicKey}, nil
}
