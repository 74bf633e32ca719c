// Package cloudkms opens and creates signing key versions in Google Cloud
// KMS named by keystore references
// (cloudkms:projects/P/locations/L/keyRings/R/cryptoKeys/K/cryptoKeyVersions/V),
// through step-ca's go.step.sm/crypto and Google's Cloud KMS client.
//
// A program makes one [Store] and opens and creates keys through it, or
// through a keystore.Openers holding it:
//
//	store, err := cloudkms.NewStore(cloudkms.Config{})
//	defer store.Close()
//	signer, err := store.Open(ctx, "cloudkms:projects/p/locations/global/keyRings/ksa/cryptoKeys/sa/cryptoKeyVersions/1")
//	// A new cryptoKey with its first version; created.Ref names the version.
//	created, err := store.Create(ctx, "cloudkms:projects/p/locations/global/keyRings/ksa/cryptoKeys/sa-2", keystore.KeySpec{Curve: elliptic.P256()})
//
// # Configuration
//
// Credentials are Google's application default credentials, or the
// reference's credentials-file (resource= then names the key version).
// Config.ClientOptions go to every client the Store makes (another
// endpoint, a transport, credentials of the program's own); one client is
// made per credentials file and kept until Close. Config.MaxCalls bounds
// the signatures of one key in flight (keystore.MaxRemoteCalls, 64, when
// 0).
//
// # Keys and calls
//
// Only versions that sign as a JWT algorithm kube-apiserver accepts are
// opened: RS256 (RSA_SIGN_PKCS1_2048_SHA256, 3072, 4096), ES256 and ES384;
// an RSA-PSS or SHA-512 version is refused. A key is checked when it is
// opened: jwks' key rules and a probe signature verified with its public
// key, which is read then and never again. Open, Create and the signer's
// SignContext return when the caller's context ends, the call going on
// aside. Errors are *keystore.StoreError values saying what Cloud KMS
// answered (NotFound, PermissionDenied, FailedPrecondition) and the fix.
//
// # Proven here
//
// Google Cloud KMS is not reachable from the tests: the package is wired
// and unit-tested only. The tests run keystoretest's conformance checks,
// and this package's own, through the real Cloud KMS client and
// go.step.sm against a fake of Cloud KMS's gRPC API on loopback, whose
// answers follow the API's documentation, not the service.
package cloudkms
