//go:build ksa_noawskms

package keystores

import (
	"context"
	"crypto"
	"errors"

	"github.com/ksa-go/ksa/keystore"
)

// awskmsMissing is the build tag that left awskms out.
const awskmsMissing = "ksa_noawskms"

// openAWSKMS is never called: Stores.check refuses awskms references first.
func (s *Stores) openAWSKMS(context.Context, keystore.Ref) (crypto.Signer, error) {
	return nil, errors.ErrUnsupported
}

// createAWSKMS is never called: Stores.check refuses awskms references first.
func (s *Stores) createAWSKMS(context.Context, keystore.Ref, KeySpec) (Created, error) {
	return Created{}, errors.ErrUnsupported
}
