package jwxkeys

import (
	"fmt"

	"github.com/ksa-go/ksa/internal/errs"
)

const prefix = "jwxkeys"

// ErrConvert: a key or set could not be converted between jwx and ksa (jwx
// failed to encode or decode it); the error wraps jwx's.
var ErrConvert = errs.New(prefix, "conversion failed")

// convertError reports a conversion jwx could not do.
func convertError(what string, cause error) error {
	return errs.Wrap(prefix, ErrConvert, "converting "+what, cause)
}

// refuse reports why the key provider found no key for a signature: kind
// is the sentinel of package tokens ksa's own validator refuses the same
// token with.
func refuse(kid, alg string, kind, cause error) error {
	return errs.Wrap(prefix, kind, fmt.Sprintf("%s (kid %q, alg %q)", errs.Text(kind), kid, alg), cause)
}
