// Package awskms opens and creates signing keys in AWS KMS named by
// keystore references (awskms:key-id=...), through step-ca's
// go.step.sm/crypto and the AWS SDK v2.
//
// A program makes one [Store] and opens and creates keys through it, or
// through a keystore.Openers holding it:
//
//	store, err := awskms.NewStore(awskms.Config{})
//	defer store.Close()
//	signer, err := store.Open(ctx, "awskms:key-id=1234abcd-12ab-34cd-56ef-1234567890ab;region=eu-west-1")
//	// A new key, as "ksa issuer keygen --out URI" makes one: name is its
//	// description and alias prefix; created.Ref names it by the key ID AWS
//	// chose (an alias could later move to another key).
//	created, err := store.Create(ctx, "awskms:name=cluster-1-sa;region=eu-west-1", keystore.KeySpec{Curve: elliptic.P256()})
//
// # Configuration
//
// Credentials, region and endpoint come from the AWS SDK's usual chain
// (AWS_* variables, shared files, roles, IRSA) and from the reference's
// region, profile and credentials-file; AWS_ENDPOINT_URL_KMS points the
// SDK at another endpoint. One client is made per region, profile and
// credentials file, and kept until Close. Config.MaxCalls bounds the
// signatures of one key in flight (keystore.MaxRemoteCalls, 64, when 0).
//
// # Keys and calls
//
// A key is checked when it is opened: jwks' key rules and a probe
// signature verified with its public key, which is read then and never
// again. Open, Create and the signer's SignContext return when the
// caller's context ends (go.step.sm gives each call its own 15 s, so the
// call runs aside and ends on its own). Errors are *keystore.StoreError
// values saying what AWS answered (no such key, access denied, disabled)
// and the fix.
//
// # Proven here
//
// The tests run keystoretest's conformance checks, and this package's
// own, on local-kms (keystoretest.StartLocalKMS), an independent
// implementation of the AWS KMS API: keys created, opened by key ID and
// by ARN, signed with by more goroutines than calls may be in flight, an
// endpoint that never answers. Without local-kms the tests are skipped,
// saying how to install it. AWS KMS itself is not reached.
package awskms
