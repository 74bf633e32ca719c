package podcert

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"strconv"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/x509sa"
)

// Limits of the workload side.
const (
	// MaxBundleSize bounds a credential bundle, or a key file and a chain
	// file together, in bytes: the API's chain limit plus room for the
	// largest key.
	MaxBundleSize = MaxCertificateChainSize + 16<<10
	// MaxBundleCertificates bounds the certificates of a chain, leaf
	// included.
	MaxBundleCertificates = x509sa.MaxChainLength
	// MaxTrustBundleSize bounds a trust bundle, in bytes (a
	// ClusterTrustBundle holds at most 1 MiB).
	MaxTrustBundleSize = 1 << 20
	// MaxTrustBundleCertificates bounds the certificates of a trust
	// bundle.
	MaxTrustBundleCertificates = 128
)

// Credential is a pod's key and certificate chain, ready for TLS, and the
// identity the leaf carries.
type Credential struct {
	// Certificate is the key and chain (leaf first) for crypto/tls, with
	// Leaf set.
	Certificate tls.Certificate
	// Identity is what the leaf proves: the service account (with UID),
	// the pod name and the credential ID.
	Identity ksa.Identity
	// NotAfter is the leaf's expiry.
	NotAfter time.Time
}

// ParseBundle reads a credential bundle as the kubelet writes it to a
// podCertificate projection's credentialBundlePath: a PKCS#8 PRIVATE KEY
// block and CERTIFICATE blocks, leaf first. See [ParseKeyAndChain] for the
// rules.
func ParseBundle(data []byte) (*Credential, error) {
	if len(data) > MaxBundleSize {
		return nil, limit("bundle bytes", len(data), MaxBundleSize)
	}
	return parseBlocks(data, true, true)
}

// ParseKeyAndChain reads the separate keyPath and certificateChainPath
// files of a podCertificate projection. The rules, for both forms: at most
// [MaxBundleSize] bytes; nothing but PEM blocks and white space; exactly
// one PRIVATE KEY block (PKCS#8, no headers) of a key type [CheckKey]
// accepts; 1 to [MaxBundleCertificates] CERTIFICATE blocks that parse, the
// first of them for that key and an identity certificate x509sa decodes.
// Errors match [ErrInvalidBundle] or [ErrLimit].
func ParseKeyAndChain(keyPEM, chainPEM []byte) (*Credential, error) {
	if n := len(keyPEM) + len(chainPEM); n > MaxBundleSize {
		return nil, limit("bundle bytes", n, MaxBundleSize)
	}
	joined := make([]byte, 0, len(keyPEM)+1+len(chainPEM))
	joined = append(append(append(joined, keyPEM...), '\n'), chainPEM...)
	if _, err := parseBlocks(keyPEM, true, false); err != nil {
		return nil, err
	}
	if _, err := parseBlocks(chainPEM, false, true); err != nil {
		return nil, err
	}
	return parseBlocks(joined, true, true)
}

// parseBlocks reads PEM blocks, requiring a key and/or certificates; with
// both, it builds the credential.
func parseBlocks(data []byte, wantKey, wantCerts bool) (*Credential, error) {
	var (
		key   crypto.Signer
		certs [][]byte
		rest  = data
	)
	for {
		trimmed := bytes.TrimLeft(rest, " \t\r\n")
		if len(trimmed) == 0 {
			break
		}
		if !bytes.HasPrefix(trimmed, []byte("-----BEGIN ")) {
			return nil, bundleError("data outside PEM blocks", nil)
		}
		var block *pem.Block
		block, rest = pem.Decode(trimmed)
		if block == nil {
			return nil, bundleError("malformed PEM block", nil)
		}
		if len(block.Headers) > 0 {
			return nil, bundleError("PEM headers are not allowed", nil)
		}
		switch block.Type {
		case "PRIVATE KEY":
			if !wantKey {
				return nil, bundleError("a private key in the certificate chain", nil)
			}
			if key != nil {
				return nil, bundleError("more than one private key", nil)
			}
			k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
			if err != nil {
				return nil, bundleError("the private key is not PKCS#8", err)
			}
			signer, ok := k.(crypto.Signer)
			if !ok {
				return nil, bundleError("the private key cannot sign", nil)
			}
			if err := CheckKey(signer.Public()); err != nil {
				return nil, bundleError("the private key", err)
			}
			key = signer
		case "CERTIFICATE":
			if !wantCerts {
				return nil, bundleError("a certificate in the key file", nil)
			}
			if len(certs) == MaxBundleCertificates {
				return nil, limit("certificates", MaxBundleCertificates+1, MaxBundleCertificates)
			}
			certs = append(certs, block.Bytes)
		default:
			return nil, bundleError("unexpected PEM block "+strconv.Quote(block.Type), nil)
		}
	}
	switch {
	case wantKey && key == nil:
		return nil, bundleError("no private key", nil)
	case wantCerts && len(certs) == 0:
		return nil, bundleError("no certificate", nil)
	case !wantKey || !wantCerts:
		return nil, nil
	}
	leaf, err := x509.ParseCertificate(certs[0])
	if err != nil {
		return nil, bundleError("the leaf does not parse", err)
	}
	for i, der := range certs[1:] {
		if _, err := x509.ParseCertificate(der); err != nil {
			return nil, bundleError("certificate "+strconv.Itoa(i+1)+" does not parse", err)
		}
	}
	if pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(leaf.PublicKey) {
		return nil, bundleError("the private key is not the leaf's", nil)
	}
	decoded, err := x509sa.DecodeCertificate(leaf)
	if err != nil {
		return nil, bundleError("the leaf carries no identity", err)
	}
	return &Credential{
		Certificate: tls.Certificate{Certificate: certs, PrivateKey: key, Leaf: leaf},
		Identity:    decoded.Identity(),
		NotAfter:    leaf.NotAfter,
	}, nil
}

// bundleError reports credential files that cannot be used. It matches
// [ErrInvalidBundle] and wraps cause, if any.
func bundleError(reason string, cause error) error {
	return wrap(ErrInvalidBundle, "credential bundle: "+reason, cause)
}
