//go:build !ksa_nocloudkms

package keystores

import (
	"context"
	"crypto"
	"crypto/elliptic"
	"crypto/x509"
	"errors"
	"io"
	"net/url"

	"go.step.sm/crypto/kms/apiv1"
	"go.step.sm/crypto/kms/cloudkms"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ksa-go/ksa/keystore"
)

// cloudkmsMissing is empty: this build has Google Cloud KMS.
const cloudkmsMissing = ""

// cloudManagerKey is the key of the Cloud KMS client of r's credentials.
func cloudManagerKey(r keystore.Ref) string { return "cloudkms\x00" + r.Attr("credentials-file") }

// cloudManager returns the Cloud KMS client of r's credentials file, or of
// the application default credentials.
func (s *Stores) cloudManager(ctx context.Context, r keystore.Ref) (*cloudkms.CloudKMS, error) {
	uri := ""
	if f := r.Attr("credentials-file"); f != "" {
		uri = "cloudkms:credentials-file=" + url.QueryEscape(f)
	}
	m, err := s.remote(cloudManagerKey(r), func() (io.Closer, error) {
		km, err := aside(ctx, func() (*cloudkms.CloudKMS, error) {
			return cloudkms.New(context.WithoutCancel(ctx), apiv1.Options{Type: apiv1.CloudKMS, URI: uri})
		})
		if err != nil {
			return nil, err
		}
		return km, nil
	})
	if err != nil {
		e := cloudError(r, "the Google Cloud KMS client cannot be made", err)
		e.Fix = "give ksa Google credentials: GOOGLE_APPLICATION_CREDENTIALS, credentials-file= in the reference, or a service account of the machine or pod"
		return nil, e
	}
	return m.(*cloudkms.CloudKMS), nil
}

// cloudAlgorithms are the algorithms of the key versions ksa signs with:
// RS256 and ES256/ES384 (Cloud KMS has no P-521).
var cloudAlgorithms = []x509.SignatureAlgorithm{x509.SHA256WithRSA, x509.ECDSAWithSHA256, x509.ECDSAWithSHA384}

func (s *Stores) openCloudKMS(ctx context.Context, r keystore.Ref) (crypto.Signer, error) {
	km, err := s.cloudManager(ctx, r)
	if err != nil {
		return nil, err
	}
	signer, err := aside(ctx, func() (crypto.Signer, error) {
		return km.CreateSigner(&apiv1.CreateSignerRequest{SigningKey: "cloudkms:" + r.Attr("resource")})
	})
	if err != nil {
		return nil, cloudError(r, "cannot be opened", err)
	}
	if a, ok := signer.(interface {
		SignatureAlgorithm() x509.SignatureAlgorithm
	}); ok {
		alg := a.SignatureAlgorithm()
		ok := false
		for _, want := range cloudAlgorithms {
			ok = ok || alg == want
		}
		if !ok {
			return nil, storeError(r, "the key version signs with "+alg.String()+", which no JWT algorithm kube-apiserver accepts uses",
				"use a version of algorithm RSA_SIGN_PKCS1_2048_SHA256 (3072, 4096), EC_SIGN_P256_SHA256 or EC_SIGN_P384_SHA384", nil)
		}
	}
	return newRemoteSigner(r, signer, cloudError), nil
}

func (s *Stores) createCloudKMS(ctx context.Context, r keystore.Ref, spec KeySpec) (Created, error) {
	if err := supports(r, "Google Cloud KMS", spec, []int{2048, 3072, 4096}, elliptic.P256(), elliptic.P384()); err != nil {
		return Created{}, err
	}
	km, err := s.cloudManager(ctx, r)
	if err != nil {
		return Created{}, err
	}
	alg, bits := algorithm(spec)
	resp, err := aside(ctx, func() (*apiv1.CreateKeyResponse, error) {
		return km.CreateKey(&apiv1.CreateKeyRequest{Name: r.Attr("resource"), SignatureAlgorithm: alg, Bits: bits, ProtectionLevel: apiv1.Software})
	})
	if err != nil {
		return Created{}, cloudError(r, "the key cannot be created", err)
	}
	created, err := keystore.ParseRef(resp.Name)
	if err != nil {
		return Created{}, storeError(r, "Cloud KMS named the new key version in a way ksa cannot read", bugFix, err)
	}
	return Created{Ref: r.With("resource", created.Attr("resource")).String(), Public: resp.PublicKey}, nil
}

// cloudError explains a Cloud KMS failure; what says what failed.
func cloudError(r keystore.Ref, what string, err error) *Error {
	e := storeError(r, what, "check the key version and ksa's Google credentials", err)
	var (
		gs interface{ GRPCStatus() *status.Status }
		st *status.Status
	)
	if errors.As(err, &gs) {
		st = gs.GRPCStatus()
	}
	ok := st != nil
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		e.What = what + ": Google Cloud KMS did not answer"
		e.Fix = "check that cloudkms.googleapis.com is reachable and retry"
	case !ok:
	case st.Code() == codes.NotFound:
		e.What, e.Detail = what+": Google Cloud KMS has no key version "+r.Attr("resource"), ""
		e.Fix = "check the name (gcloud kms keys versions list --key K --keyring R --location L)"
	case st.Code() == codes.PermissionDenied, st.Code() == codes.Unauthenticated:
		e.Detail = st.Code().String() + ": " + st.Message()
		e.Fix = "grant ksa's Google identity roles/cloudkms.signerVerifier and roles/cloudkms.publicKeyViewer on the key"
	case st.Code() == codes.FailedPrecondition:
		e.Detail = st.Code().String() + ": " + st.Message()
		e.Fix = "enable the key version (it is disabled, destroyed or still being generated)"
	case st.Code() == codes.Unavailable, st.Code() == codes.DeadlineExceeded:
		e.What, e.Detail = what+": Google Cloud KMS did not answer", st.Code().String()+": "+st.Message()
		e.Fix = "check that cloudkms.googleapis.com is reachable and retry"
	default:
		e.Detail = st.Code().String() + ": " + st.Message()
	}
	return e
}
