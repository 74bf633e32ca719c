//go:build !ksa_nocloudkms

package keystores

import (
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/cloudkms"
)

// cloudkmsStore is the command's one cloudkms store.
func cloudkmsStore() keystore.Opener { return &cloudkms.Store{} }
