// Package keystores is the command's wiring of the key stores: [Stores],
// the keystore.Openers ksa opens and creates keys through, over the
// key-store packages of the library this build links (keystore/pkcs11,
// keystore/awskms, keystore/cloudkms, keystore/azurekms).
//
// Each backend is a pair of small files behind a build tag of ksa's own:
// building with -tags ksa_nopkcs11, ksa_noawskms, ksa_nocloudkms or
// ksa_noazurekms leaves that package and its SDK out of the binary, and a
// reference to it then fails with "this ksa was built without ...",
// naming the tag. PKCS #11 also needs cgo (the token's library is loaded
// with dlopen). What a store does (PINs, logins, probes, remote calls, the
// errors) is the library's; the command only chooses which it links, and
// says what to do about one it left out.
package keystores
