//go:build !ksa_noawskms

package keystores

import (
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/awskms"
)

// awskmsStore is the command's one awskms store.
func awskmsStore() keystore.Opener { return &awskms.Store{} }
