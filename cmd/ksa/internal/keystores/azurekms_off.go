//go:build ksa_noazurekms

package keystores

import "github.com/ksa-go/ksa/keystore"

// azurekmsStore refuses azurekms: ksa_noazurekms left it out.
func azurekmsStore() keystore.Opener { return tagged(keystore.SchemeAzureKMS, "ksa_noazurekms") }
