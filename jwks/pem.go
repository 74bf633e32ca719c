package jwks

import (
	"crypto"
	"crypto/x509"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/pemblock"
)

// ParsePublicKeysPEM reads every key in PEM data, as kube-apiserver reads
// --service-account-key-file: PKIX public keys, certificates (their public
// key), and RSA, EC and PKCS#8 private keys (their public half), in file
// order; beyond Kubernetes also PKCS#1 "RSA PUBLIC KEY" blocks and Ed25519
// keys. Blocks of other types ("EC PARAMETERS", ...) are skipped, as
// Kubernetes skips them. Stricter than Kubernetes, a block whose type names
// a key or certificate but does not parse, an encrypted block, or a PEM
// block that does not decode at all (broken base64, no END line), is an
// error matching [ErrMalformedPEM] rather than silently dropped; the
// message names the block by position and type. Data without any key is an
// error matching [ErrNoKeys]. keystore.LoadPublicKeysFile reads a file
// with it.
func ParsePublicKeysPEM(data []byte) ([]crypto.PublicKey, error) {
	var keys []crypto.PublicKey
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
		if kind == pemblock.Other {
			continue
		}
		if pemblock.Encrypted(block) {
			return nil, pemError(i, block.Type, "encrypted PEM blocks are not supported", nil)
		}
		var key any
		var err error
		switch kind {
		case pemblock.Public:
			key, err = x509.ParsePKIXPublicKey(block.Bytes)
		case pemblock.RSAPublic:
			key, err = x509.ParsePKCS1PublicKey(block.Bytes)
		case pemblock.Certificate:
			var cert *x509.Certificate
			if cert, err = x509.ParseCertificate(block.Bytes); err == nil {
				key = cert.PublicKey
			}
		default:
			key, err = pemblock.ParsePrivate(kind, block.Bytes)
		}
		if err != nil {
			return nil, pemError(i, block.Type, "does not parse", err)
		}
		pub, err := PublicKey(key)
		if err != nil {
			return nil, pemError(i, block.Type, "key refused", err)
		}
		keys = append(keys, pub)
	}
	if len(keys) == 0 {
		return nil, errs.Wrap(prefix, ErrNoKeys, "data does not contain any public key", nil)
	}
	return keys, nil
}

// pemError reports block i of PEM data, of type typ, matching
// [ErrMalformedPEM].
func pemError(i int, typ, reason string, cause error) error {
	return errs.Wrap(prefix, ErrMalformedPEM, pemblock.Where(i, typ)+": "+reason, cause)
}
