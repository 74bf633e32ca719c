// Package keystores opens the keys of ksa's key flags: a PEM file, or a
// key in a key store named by a keystore.Ref URI, through step-ca's
// go.step.sm/crypto: a PKCS #11 token (pkcs11), AWS KMS (awskms), Google
// Cloud KMS (cloudkms) or Azure Key Vault (azurekms). [Stores] is a
// keystore.Opener, and creates keys for "ksa issuer keygen".
//
// Each backend is one file that calls its go.step.sm constructor directly
// (no registry), behind a build tag of ksa's own: building with
// -tags ksa_nopkcs11, ksa_noawskms, ksa_nocloudkms or ksa_noazurekms
// leaves that backend and its SDK out of the binary, and a reference to it
// then fails with "this ksa was built without ...". PKCS #11 also needs
// cgo (the token's library is loaded with dlopen).
//
// What ksa adds to go.step.sm:
//
//   - references are parsed and checked by keystore.ParseRef before
//     go.step.sm sees them, and go.step.sm gets URIs ksa writes without
//     any secret: the PIN, read by ksa from the reference's pin-source,
//     goes in apiv1.Options.Pin, so no go.step.sm message can quote it;
//   - one manager per PKCS #11 module and token per process, whose PIN
//     every later reference to the token must repeat: a second login to a
//     token a process is logged in to succeeds whatever the PIN (the
//     token answers CKR_USER_ALREADY_LOGGED_IN), so ksa checks the PIN
//     itself; a token is named the same way (token, serial or slot-id) in
//     every reference to its module, so that it cannot hide under two
//     names;
//   - the public key is read once, when the key is opened, and a probe
//     signature checked with it (a key the store cannot sign with, or
//     signs with another scheme, is refused at start); Public never calls
//     the store;
//   - remote keys (awskms, cloudkms, azurekms) honour the caller's
//     context: go.step.sm gives each call its own 15 s deadline, so the
//     call runs aside and Open or SignContext return when the caller's
//     context ends, at most [MaxRemoteCalls] calls per key in flight;
//   - errors are one line, name the key by its reference (never the PIN),
//     say what the store answered in words and how to fix it, and match
//     keystore.ErrKeyStore, keystore.ErrUnsupportedStore or
//     jwks.ErrUnsupportedKey.
package keystores
