//go:build ksa_nocloudkms

package keystores

import "github.com/ksa-go/ksa/keystore"

// cloudkmsStore refuses cloudkms: ksa_nocloudkms left it out.
func cloudkmsStore() keystore.Opener { return tagged(keystore.SchemeCloudKMS, "ksa_nocloudkms") }
