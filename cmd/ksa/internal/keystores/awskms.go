//go:build !ksa_noawskms

package keystores

import (
	"context"
	"crypto"
	"crypto/elliptic"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/aws/smithy-go"
	"go.step.sm/crypto/kms/apiv1"
	"go.step.sm/crypto/kms/awskms"

	"github.com/ksa-go/ksa/keystore"
)

// awskmsMissing is empty: this build has AWS KMS.
const awskmsMissing = ""

// awsManager returns the AWS KMS client of r's region, profile and
// credentials file.
func (s *Stores) awsManager(ctx context.Context, r keystore.Ref) (*awskms.KMS, error) {
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
	m, err := s.remote("awskms\x00"+uri, func() (io.Closer, error) {
		km, err := aside(ctx, func() (*awskms.KMS, error) {
			return awskms.New(context.WithoutCancel(ctx), apiv1.Options{Type: apiv1.AmazonKMS, URI: uri})
		})
		if err != nil {
			return nil, err
		}
		return km, nil
	})
	if err != nil {
		return nil, awsError(r, "the AWS configuration cannot be loaded", err)
	}
	return m.(*awskms.KMS), nil
}

func (s *Stores) openAWSKMS(ctx context.Context, r keystore.Ref) (crypto.Signer, error) {
	km, err := s.awsManager(ctx, r)
	if err != nil {
		return nil, err
	}
	signer, err := aside(ctx, func() (crypto.Signer, error) {
		return km.CreateSigner(&apiv1.CreateSignerRequest{SigningKey: "awskms:key-id=" + url.QueryEscape(r.Attr("key-id"))})
	})
	if err != nil {
		return nil, awsError(r, "cannot be opened", err)
	}
	return newRemoteSigner(r, signer, awsError), nil
}

func (s *Stores) createAWSKMS(ctx context.Context, r keystore.Ref, spec KeySpec) (Created, error) {
	if err := supports(r, "AWS KMS", spec, []int{2048, 3072, 4096}, elliptic.P256(), elliptic.P384(), elliptic.P521()); err != nil {
		return Created{}, err
	}
	km, err := s.awsManager(ctx, r)
	if err != nil {
		return Created{}, err
	}
	alg, bits := algorithm(spec)
	resp, err := aside(ctx, func() (*apiv1.CreateKeyResponse, error) {
		return km.CreateKey(&apiv1.CreateKeyRequest{Name: "awskms:name=" + url.QueryEscape(r.Attr("name")), SignatureAlgorithm: alg, Bits: bits})
	})
	if err != nil {
		return Created{}, awsError(r, "the key cannot be created", err)
	}
	created, err := keystore.ParseRef(resp.Name)
	if err != nil || created.Attr("key-id") == "" {
		return Created{}, storeError(r, "AWS KMS named the new key in a way ksa cannot read", bugFix, err)
	}
	return Created{Ref: r.With("name", "").With("key-id", created.Attr("key-id")).String(), Public: resp.PublicKey}, nil
}

// awsError explains an AWS KMS failure; what says what failed.
func awsError(r keystore.Ref, what string, err error) *Error {
	e := storeError(r, what, "check the key and ksa's AWS credentials and region", err)
	var (
		notFound *types.NotFoundException
		api      smithy.APIError
		op       *net.OpError
	)
	switch {
	case errors.As(err, &notFound):
		e.What, e.Detail = what+": AWS KMS has no key "+r.Attr("key-id"), ""
		e.Fix = "check key-id and the region (aws kms describe-key --key-id KEY_ID)"
	case errors.As(err, &api):
		e.Detail = api.ErrorCode() + ": " + api.ErrorMessage()
		switch api.ErrorCode() {
		case "AccessDeniedException", "UnrecognizedClientException", "InvalidSignatureException", "ExpiredTokenException":
			e.Fix = "give ksa AWS credentials allowed kms:GetPublicKey and kms:Sign on the key (kms:CreateKey and kms:CreateAlias to create one)"
		case "DisabledException", "KMSInvalidStateException":
			e.Fix = "enable the key (aws kms enable-key), or cancel its deletion"
		case "InvalidKeyUsageException":
			e.Fix = "use a key made for SIGN_VERIFY"
		}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), errors.As(err, &op):
		e.What = what + ": AWS KMS" + awsEndpoint() + " did not answer"
		e.Fix = "check that AWS KMS is reachable (the region, AWS_ENDPOINT_URL_KMS, a proxy) and retry"
	}
	return e
}

// awsEndpoint names the endpoint the AWS SDK was told to use, if any.
func awsEndpoint() string {
	for _, v := range []string{"AWS_ENDPOINT_URL_KMS", "AWS_ENDPOINT_URL"} {
		if u := os.Getenv(v); u != "" {
			return " at " + u
		}
	}
	return ""
}
