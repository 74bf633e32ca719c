//go:build !ksa_noazurekms

package keystores

import (
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/azurekms"
)

// azurekmsStore is the command's one azurekms store.
func azurekmsStore() keystore.Opener { return &azurekms.Store{} }
