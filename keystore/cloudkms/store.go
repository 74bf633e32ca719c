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
	return s.cloud().Open(ctx, ref, &s.clients)
}

// Create makes the cryptoKey ref names (its key ring must exist) with a
// first version of spec (RSA 2048, 3072 or 4096; ECDSA P-256 or P-384),
// software-protected, and returns that version's reference.
func (s *Store) Create(ctx context.Context, ref string, spec keystore.KeySpec) (keystore.Created, error) {
	return s.cloud().Create(ctx, ref, spec, &s.clients)
}

// Close closes the Store's clients; later opens fail.
func (s *Store) Close() error { return s.clients.Close() }

// algorithms are the algorithms of the key versions ksa signs with: RS256
// and ES256/ES384 (Cloud KMS has no P-521).
var algorithms = []x509.SignatureAlgorithm{x509.SHA256WithRSA, x509.ECDSAWithSHA256, x509.ECDSAWithSHA384}

// cloud is Google Cloud KMS for stepkms: a client per credentials file
// (the application default credentials for none), key versions by
// resource name, created software-protected.
func (s *Store) cloud() stepkms.Cloud[*stepcloudkms.CloudKMS] {
	return stepkms.Cloud[*stepcloudkms.CloudKMS]{
		Scheme: keystore.SchemeCloudKMS, Name: "Google Cloud KMS",
		Bits: []int{2048, 3072, 4096}, Curves: []elliptic.Curve{elliptic.P256(), elliptic.P384()},
		ClientKey: func(r keystore.Ref) string { return r.Attr("credentials-file") },
		NewClient: func(ctx context.Context, file string) (*stepcloudkms.CloudKMS, error) {
			opts := slices.Clone(s.cfg.ClientOptions)
			if file != "" {
				opts = append(opts, option.WithAuthCredentialsFile(option.ServiceAccount, file))
			}
			client, err := kmsapi.NewKeyManagementClient(ctx, opts...)
			if err != nil {
				return nil, err
			}
			return stepcloudkms.NewCloudKMS(client), nil
		},
		ClientFailed: "the Google Cloud KMS client cannot be made",
		ClientFix:    "give ksa Google credentials: GOOGLE_APPLICATION_CREDENTIALS, credentials-file= in the reference, or a service account of the machine or pod",
		SigningKey:   func(r keystore.Ref) string { return "cloudkms:" + r.Attr("resource") },
		CheckSigner:  checkAlgorithm,
		CreateRequest: func(r keystore.Ref, alg apiv1.SignatureAlgorithm, bits int) *apiv1.CreateKeyRequest {
			return &apiv1.CreateKeyRequest{Name: r.Attr("resource"), SignatureAlgorithm: alg, Bits: bits, ProtectionLevel: apiv1.Software}
		},
		Created:  func(r, name keystore.Ref) string { return r.With("resource", name.Attr("resource")).String() },
		Classify: classify, MaxCalls: s.cfg.MaxCalls,
	}
}

// checkAlgorithm refuses a key version of an algorithm no JWT algorithm
// kube-apiserver accepts uses.
func checkAlgorithm(r keystore.Ref, signer crypto.Signer) error {
	if a, ok := signer.(interface {
		SignatureAlgorithm() x509.SignatureAlgorithm
	}); ok && !slices.Contains(algorithms, a.SignatureAlgorithm()) {
		return stepkms.StoreError(r, "the key version signs with "+a.SignatureAlgorithm().String()+", which no JWT algorithm kube-apiserver accepts uses",
			"use a version of algorithm RSA_SIGN_PKCS1_2048_SHA256 (3072, 4096), EC_SIGN_P256_SHA256 or EC_SIGN_P384_SHA384", nil)
	}
	return nil
}
