//go:build !cgo && !ksa_nopkcs11

package keystores

// pkcs11Missing says that the build without cgo left PKCS #11 out.
const pkcs11Missing = "cgo"
