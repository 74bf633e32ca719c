//go:build ksa_noawskms

package keystores

import "github.com/ksa-go/ksa/keystore"

// awskmsStore refuses awskms: ksa_noawskms left it out.
func awskmsStore() keystore.Opener { return tagged(keystore.SchemeAWSKMS, "ksa_noawskms") }
