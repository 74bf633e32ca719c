// Package keystore is the home of signing keys by reference: keys named by
// where they live rather than handed over in memory, a PEM key file or a
// key in a key store (an HSM or a KMS). It parses and checks references,
// reads PEM key files as kube-apiserver does, and defines [Opener] and
// [Creator], the seams through which a program opens and creates a key by
// reference. This package links no key-store client: each has a package
// of its own below it (keystore/pkcs11, keystore/awskms,
// keystore/cloudkms, keystore/azurekms, over step-ca's go.step.sm/crypto),
// so that a program builds only the stores it imports, and [Openers]
// gives each reference to the store of its scheme. Public keys, JWK and
// JWKS documents and key IDs are
// jwks' business; this package reads files and private keys, and uses jwks
// to check what it reads.
//
// # PEM key files
//
// [LoadSigningKeyFile] reads --service-account-signing-key-file: the first
// private key of the file ("RSA PRIVATE KEY", "EC PRIVATE KEY" or PKCS#8
// "PRIVATE KEY"), checked with jwks.CheckPublicKey (RSA 2048 to 8192 bits,
// P-256, P-384 or P-521, Ed25519). [LoadPublicKeysFile] reads
// --service-account-key-file: every public key of the file, from public
// keys, certificates and private keys, through jwks.ParsePublicKeysPEM.
// [ParseSigningKeyPEM] reads a private key from PEM data already in
// memory.
//
//	signer, err := keystore.LoadSigningKeyFile("/etc/kubernetes/pki/sa.key")
//	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: signer})
//
// # References
//
// [ParseRef] reads a reference to an existing key, as an operator writes
// it in a flag or a file; [ParseNewKeyRef] one to a key to create. A
// reference that does not start with a URI scheme is a file path. The
// URIs are those of step-ca (attributes name=value, separated by ";"
// before an optional "?" and by "&" after it, values %-encoded; the
// scheme in any case):
//
//	# a key on a PKCS #11 token (RFC 7512): the module, one of token, serial
//	# or slot-id, id (CKA_ID, hex) or object (CKA_LABEL) or both, and
//	# pin-source, a file or env:NAME; optional max-sessions and type=private
//	pkcs11:module-path=/usr/lib/softhsm/libsofthsm2.so;token=ksa;id=0a0b;object=sa?pin-source=/run/secrets/pin
//	# AWS KMS: key-id, a key ID or key ARN; optional region, profile,
//	# credentials-file (a key to create: name instead of key-id)
//	awskms:key-id=1234abcd-12ab-34cd-56ef-1234567890ab;region=eu-west-1
//	# Google Cloud KMS: a key version, or resource= with credentials-file
//	# (a key to create: the cryptoKey, without a version)
//	cloudkms:projects/P/locations/L/keyRings/R/cryptoKeys/K/cryptoKeyVersions/1
//	# Azure Key Vault: name and vault; optional version, hsm, environment,
//	# client-id, tenant-id, aad-endpoint
//	azurekms:name=sa;vault=my-vault
//
// Everything is checked before any key store is asked, and every
// refusal is a *[RefError] matching [ErrInvalidRef] that says what is
// wrong and how to write it instead: an unknown scheme, a malformed
// %-escape, an attribute ksa does not read or given twice, a pkcs11 URI
// without a token, a key or a pin-source, an AWS alias (the AWS KMS client
// lowercases key IDs, and an alias can move to another key), a Cloud KMS
// key without its version. Secrets are refused: a PIN in pin-value, a
// client secret in client-secret, which process listings and logs would
// show. The PIN comes from the file pin-source names, or from the
// environment variable of pin-source=env:NAME ([Ref.ReadPIN]).
// [Ref.String] shows a reference as written, with the values of those
// attributes replaced by REDACTED, so that a message can always name a
// key by its reference.
//
// # Opening and creating keys
//
// An [Opener] opens the key a reference names as a crypto.Signer; a
// [Creator] makes a key of a [KeySpec] in a key store and returns its
// reference ([Created]). [Files] opens PEM files and refuses key-store
// URIs with [ErrUnsupportedStore]. [Openers] opens PEM files itself and
// gives each key-store reference to the Opener of its scheme, which a
// program sets from the store packages it imports; a scheme left unset is
// refused with [ErrUnsupportedStore]:
//
//	hsm, err := pkcs11.NewStore(pkcs11.Config{})
//	aws, err := awskms.NewStore(awskms.Config{})
//	keys := keystore.Openers{PKCS11: hsm, AWSKMS: aws}
//	defer keys.Close()
//	signer, err := keys.Open(ctx, "awskms:key-id=1234abcd-12ab-34cd-56ef-1234567890ab")
//	created, err := keys.Create(ctx, "pkcs11:token=ksa;id=0a0c;object=sa-2?pin-source=/run/secrets/pin", keystore.KeySpec{})
//
// The stores report their failures as a *[StoreError]: the key's
// reference, what went wrong and how to fix it, matching [ErrKeyStore]
// (a PIN refused: [ErrLoginRefused]), [ErrUnsupportedStore] or
// jwks.ErrUnsupportedKey, and wrapping the store's error, so that a
// program can say it in its own words. Every store checks a key when it
// opens it, with jwks' key rules and a probe signature verified with its
// public key, which it reads then and never again; a remote store's
// signatures end with their caller's context, at most [MaxRemoteCalls]
// per key in flight. keystore/keystoretest holds the checks every store
// passes.
//
// # Limits and errors
//
// Files over [MaxPEMFileBytes] (1 MiB) are refused unread, as are
// references over [MaxRefBytes] (4096 bytes) and PIN files over
// [MaxPINBytes] (1024 bytes). A file that cannot be opened or read is an
// error matching [ErrKeyFile] and its cause (fs.ErrNotExist,
// fs.ErrPermission); one that is read but holds no key matches
// jwks.ErrNoKeys; a damaged, encrypted or unparsable key block matches
// jwks.ErrMalformedPEM (and jwks.ErrUnsupportedKey for a key outside
// ksa's rules), the message naming the file and the block by position
// and type. This package imports only the standard library and the
// module's core.
package keystore
