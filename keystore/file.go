package keystore

import (
	"crypto"
	"fmt"
	"io"
	"os"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/jwks"
)

// MaxPEMFileBytes bounds the key files LoadSigningKeyFile and
// LoadPublicKeysFile read: 1 MiB. A larger file is refused unread, with an
// error matching jwks.ErrMalformedPEM.
const MaxPEMFileBytes = 1 << 20

// LoadSigningKeyFile reads a PEM file with [ParseSigningKeyPEM], as
// kube-apiserver reads --service-account-signing-key-file. The error names
// the file.
func LoadSigningKeyFile(path string) (crypto.Signer, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	signer, err := ParseSigningKeyPEM(data)
	if err != nil {
		return nil, errs.Wrap(prefix, nil, path, err)
	}
	return signer, nil
}

// LoadPublicKeysFile reads a PEM file with jwks.ParsePublicKeysPEM, as
// kube-apiserver reads --service-account-key-file: every public key, in
// file order, from public keys, certificates and private keys. The error
// names the file.
func LoadPublicKeysFile(path string) ([]crypto.PublicKey, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	keys, err := jwks.ParsePublicKeysPEM(data)
	if err != nil {
		return nil, errs.Wrap(prefix, nil, path, err)
	}
	return keys, nil
}

// readFile reads a key file of at most MaxPEMFileBytes.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errs.Wrap(prefix, ErrKeyFile, path+": cannot open", errs.PathCause(path, err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxPEMFileBytes+1))
	if err != nil {
		return nil, errs.Wrap(prefix, ErrKeyFile, path+": cannot read", errs.PathCause(path, err))
	}
	if len(data) > MaxPEMFileBytes {
		return nil, errs.Wrap(prefix, jwks.ErrMalformedPEM, fmt.Sprintf("%s: file is over the %d-byte limit", path, MaxPEMFileBytes), nil)
	}
	return data, nil
}
