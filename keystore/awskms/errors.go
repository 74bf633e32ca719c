package awskms

import (
	"context"
	"errors"
	"net"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/aws/smithy-go"

	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/internal/stepkms"
)

// classify explains an AWS KMS failure; what says what failed.
func classify(r keystore.Ref, what string, err error) *keystore.StoreError {
	e := stepkms.StoreError(r, what, "check the key and ksa's AWS credentials and region", err)
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
		e.What = what + ": AWS KMS" + endpoint() + " did not answer"
		e.Fix = "check that AWS KMS is reachable (the region, AWS_ENDPOINT_URL_KMS, a proxy) and retry"
	}
	return e
}

// endpoint names the endpoint the AWS SDK was told to use, if any.
func endpoint() string {
	for _, v := range []string{"AWS_ENDPOINT_URL_KMS", "AWS_ENDPOINT_URL"} {
		if u := os.Getenv(v); u != "" {
			return " at " + u
		}
	}
	return ""
}
