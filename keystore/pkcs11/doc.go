// Package pkcs11 opens and creates signing keys on PKCS #11 tokens (HSMs,
// SoftHSM2, YubiHSM, Luna, CloudHSM) named by keystore references, through
// step-ca's go.step.sm/crypto and crypto11. It needs cgo: the token's
// module is loaded with dlopen. Built without cgo, the package compiles
// and refuses every reference with keystore.ErrUnsupportedStore.
//
// A program makes one [Store] and opens and creates keys through it, or
// through a keystore.Openers holding it:
//
//	hsm, err := pkcs11.NewStore(pkcs11.Config{})
//	defer hsm.Close()
//	signer, err := hsm.Open(ctx, "pkcs11:module-path=/usr/lib/softhsm/libsofthsm2.so;token=ksa;id=0a0b?pin-source=/run/secrets/pin")
//	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: signer})
//	// A new key, as "ksa issuer keygen --out URI" makes one: the reference
//	// names both the id and the object; a key with either is never replaced.
//	created, err := hsm.Create(ctx, "pkcs11:token=ksa;id=0a0c;object=sa-2?pin-source=/run/secrets/pin", keystore.KeySpec{Curve: elliptic.P256()})
//
// # PINs and logins
//
// The PIN comes from the reference's pin-source (a file, or env:NAME),
// read by [keystore.Ref.ReadPIN], or from Config.ReadPIN when the program
// keeps PINs elsewhere; go.step.sm gets URIs without it, so that no
// message can quote it. A token the process is logged in to accepts any
// PIN (CKR_USER_ALREADY_LOGGED_IN), so the Store logs in once per token
// and refuses a later reference to it with another PIN. That holds within
// one Store: a process MUST open every key of a module through one Store.
// A PIN the token refused, or a locked PIN, is an error matching
// keystore.ErrLoginRefused: do not retry it until the PIN changed, since
// HSMs lock a PIN after a few failed logins.
//
// # Keys
//
// A key is checked when it is opened: jwks' key rules (RSA 2048 to 8192
// bits, ECDSA P-256, P-384, P-521) and a probe signature verified with its
// public key, which is read then and never again (Public never calls the
// token). Its signatures are the token's, made in the caller's goroutine;
// SignContext refuses a context that has ended. Errors are
// *keystore.StoreError values naming the key by its reference, what the
// token answered (CKR_PIN_INCORRECT, no key with that id) and the fix.
//
// # Proven here
//
// The tests run keystoretest's conformance checks, and this package's
// own, on a real SoftHSM2 token of their own (keystoretest.StartSoftHSM):
// keys imported with softhsm2-util and created by the Store, opened by id,
// object or both, signed with concurrently, PINs wrong, missing and from
// the environment. Without SoftHSM2 the tests are skipped, saying how to
// install it. Other HSMs speak the same PKCS #11 API but are not tested.
package pkcs11
