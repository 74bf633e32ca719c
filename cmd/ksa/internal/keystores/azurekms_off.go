//go:build ksa_noazurekms

package keystores

import (
	"context"
	"crypto"
	"errors"

	"github.com/ksa-go/ksa/keystore"
)

// azurekmsMissing is the build tag that left azurekms out.
const azurekmsMissing = "ksa_noazurekms"

// openAzureKMS is never called: Stores.check refuses azurekms references first.
func (s *Stores) openAzureKMS(context.Context, keystore.Ref) (crypto.Signer, error) {
	return nil, errors.ErrUnsupported
}

// createAzureKMS is never called: Stores.check refuses azurekms references first.
func (s *Stores) createAzureKMS(context.Context, keystore.Ref, KeySpec) (Created, error) {
	return Created{}, errors.ErrUnsupported
}
