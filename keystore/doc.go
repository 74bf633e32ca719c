// Package keystore is the home of signing keys by reference: keys named by
// where they live rather than handed over in memory, a PEM key file or a
// key in a key store (an HSM or a KMS). It parses and checks references,
// reads PEM key files as kube-apiserver does, and defines [Opener], the
// seam through which a program opens a key by reference. The library
// links no key-store client: a program chooses its own (the ksa command
// opens pkcs11, awskms, cloudkms and azurekms keys through step-ca's
// go.step.sm/crypto). Public keys, JWK and JWKS documents and key IDs are
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
// # Opening keys
//
// An [Opener] opens the key a reference names as a crypto.Signer. [Files]
// opens PEM files and refuses key-store URIs with [ErrUnsupportedStore];
// a program linking key-store clients has an Opener of its own. Openers
// report the failures of a key store as errors matching [ErrKeyStore]
// that wrap the store's error.
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
