//go:build ksa_nopkcs11

package keystores

// pkcs11Missing is the build tag that left PKCS #11 out.
const pkcs11Missing = "ksa_nopkcs11"
