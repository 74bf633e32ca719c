// Package keystore is the home of signing keys by reference: keys named by
// where they live rather than handed over in memory. It holds PEM key
// files now, as kube-apiserver reads them; key stores (HSM and KMS keys
// named by URI) come next, and will give the same thing: a crypto.Signer
// checked with jwks' key rules, ready for tokens.Minter or an external
// signer. Public keys, JWK and JWKS documents and key IDs are jwks'
// business; this package reads files and private keys, and uses jwks to
// check what it reads.
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
// # Limits and errors
//
// Files over [MaxPEMFileBytes] (1 MiB) are refused unread. A file that
// cannot be opened or read is an error matching [ErrKeyFile] and its cause
// (fs.ErrNotExist, fs.ErrPermission); one that is read but holds no key
// matches jwks.ErrNoKeys; a damaged, encrypted or unparsable key block
// matches jwks.ErrMalformedPEM (and jwks.ErrUnsupportedKey for a key
// outside ksa's rules), the message naming the file and the block by
// position and type. This package imports only the standard library and
// the module's core.
package keystore
