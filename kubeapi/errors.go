package kubeapi

import (
	"github.com/ksa-go/ksa/internal/errs"
)

// prefix starts the messages of the package's errors.
const prefix = "kubeapi"

// ErrNoReview: ReviewStatus got no TokenReview to read. Configurations a
// constructor refuses are a *ksa.ConfigError; a failed token request with
// no usable cached token is a *[TokenRequestError]; the conversions of
// certificate requests report x509sa's and podcert's errors.
var ErrNoReview = errs.New(prefix, "no TokenReview in the answer")
