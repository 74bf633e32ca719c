package keystore

import (
	"crypto"
	"fmt"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/pemblock"
	"github.com/ksa-go/ksa/jwks"
)

// ParseSigningKeyPEM returns the first private key in PEM data ("RSA
// PRIVATE KEY", "EC PRIVATE KEY" or PKCS#8 "PRIVATE KEY"), as
// kube-apiserver reads --service-account-signing-key-file. The key is
// checked with jwks.CheckPublicKey. Other blocks are skipped, but a damaged
// block before the key (broken base64, no END line) is an error matching
// jwks.ErrMalformedPEM, as is an encrypted key or one that does not parse
// (the message names the block by position and type; a refused key also
// matches jwks.ErrUnsupportedKey); data without a private key is an error
// matching jwks.ErrNoKeys.
func ParseSigningKeyPEM(data []byte) (crypto.Signer, error) {
	for i := 0; ; i++ {
		block, rest, damaged := pemblock.Next(data)
		if damaged != "" {
			return nil, pemError(i, damaged, pemblock.Damaged, nil)
		}
		if block == nil {
			break
		}
		data = rest
		kind := pemblock.KindOf(block.Type)
		if !kind.Private() {
			continue
		}
		if pemblock.Encrypted(block) {
			return nil, pemError(i, block.Type, "encrypted PEM blocks are not supported", nil)
		}
		key, err := pemblock.ParsePrivate(kind, block.Bytes)
		if err != nil {
			return nil, pemError(i, block.Type, "does not parse", err)
		}
		signer, ok := key.(crypto.Signer)
		if !ok {
			return nil, pemError(i, block.Type, fmt.Sprintf("%T is not a signing key", key), nil)
		}
		if _, err := jwks.PublicKey(signer); err != nil {
			return nil, pemError(i, block.Type, "key refused", err)
		}
		return signer, nil
	}
	return nil, errs.Wrap(prefix, jwks.ErrNoKeys, "data does not contain a private key", nil)
}

// pemError reports block i of PEM data, of type typ, matching
// jwks.ErrMalformedPEM.
func pemError(i int, typ, reason string, cause error) error {
	return errs.Wrap(prefix, jwks.ErrMalformedPEM, pemblock.Where(i, typ)+": "+reason, cause)
}
