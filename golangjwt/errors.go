package golangjwt

import (
	"errors"
	"fmt"

	"github.com/ksa-go/ksa/internal/errs"
)

const prefix = "golangjwt"

// errCritical is the cause of a refusal of a header with "crit".
var errCritical = errors.New(`critical extensions ("crit") are not supported`)

// refuse reports why the key function found no key for a token: kind is
// the sentinel of package tokens ksa's own validator refuses the same
// token with; errors.Is matches it through jwt's own error.
func refuse(kid, alg string, kind, cause error) error {
	return errs.Wrap(prefix, kind, fmt.Sprintf("%s (kid %q, alg %q)", errs.Text(kind), kid, alg), cause)
}
