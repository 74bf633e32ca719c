//go:build ksa_nocloudkms

package keystores

import (
	"context"
	"crypto"
	"errors"

	"github.com/ksa-go/ksa/keystore"
)

// cloudkmsMissing is the build tag that left cloudkms out.
const cloudkmsMissing = "ksa_nocloudkms"

// openCloudKMS is never called: Stores.check refuses cloudkms references first.
func (s *Stores) openCloudKMS(context.Context, keystore.Ref) (crypto.Signer, error) {
	return nil, errors.ErrUnsupported
}

// createCloudKMS is never called: Stores.check refuses cloudkms references first.
func (s *Stores) createCloudKMS(context.Context, keystore.Ref, KeySpec) (Created, error) {
	return Created{}, errors.ErrUnsupported
}
