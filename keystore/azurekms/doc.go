// Package azurekms opens and creates signing keys in Azure Key Vault named
// by keystore references (azurekms:name=KEY;vault=VAULT), through step-ca's
// go.step.sm/crypto and the Azure SDK's azkeys.
//
// A program makes one [Store] and opens and creates keys through it, or
// through a keystore.Openers holding it:
//
//	store, err := azurekms.NewStore(azurekms.Config{})
//	defer store.Close()
//	signer, err := store.Open(ctx, "azurekms:name=sa;vault=my-vault")
//	// A new key (in an HSM with hsm=true); created.Ref has its version.
//	created, err := store.Create(ctx, "azurekms:name=sa-2;vault=my-vault", keystore.KeySpec{Curve: elliptic.P256()})
//
// # Configuration
//
// The identity comes from azidentity's chain (the environment, workload
// identity, managed identity) and the reference's environment, client-id,
// tenant-id and aad-endpoint; a client secret in the reference is refused.
// One client is made per cloud and identity and kept until Close.
// Config.MaxCalls bounds the signatures of one key in flight
// (keystore.MaxRemoteCalls, 64, when 0).
//
// # Keys and calls
//
// A key is checked when it is opened: jwks' key rules and a probe
// signature verified with its public key, which is read then and never
// again. Open, Create and the signer's SignContext return when the
// caller's context ends, the call going on aside. Errors are
// *keystore.StoreError values saying what Key Vault answered (no such
// key, forbidden, no credential) and the fix.
//
// # Proven here
//
// Azure Key Vault is not reachable from the tests, and go.step.sm's client
// cannot be pointed elsewhere: the package is wired and unit-tested only.
// The tests check the URIs go.step.sm gets (the key and the identity,
// never a secret), that clients are made once per identity without a
// network call, the explanation of Key Vault's answers, and the
// keystoretest conformance checks that need no key: refused references,
// refused key specs, a closed store.
package azurekms
