package podcert

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"strconv"
	"time"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
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

// Credential is a key and certificate chain, ready for TLS, and the
// identity the leaf carries.
type Credential struct {
	// Certificate is the key and chain (leaf first) for crypto/tls, with
	// Leaf set.
	Certificate tls.Certificate
	// Identity is what the leaf proves: the service account (with UID),
	// the pod name and the credential ID. It is zero for a leaf read
	// without identity (SourceConfig.AnyCertificate).
	Identity ksa.Identity
	// SPIFFEID is the leaf's SPIFFE ID (its URI SAN,
	// spiffe://<trust domain>/ns/<namespace>/sa/<name>); zero when it has
	// none or was read without identity.
	SPIFFEID x509sa.SPIFFEID
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
	return parseBlocks(data, podCertificate)
}

// ParseKeyAndChain reads the separate keyPath and certificateChainPath
// files of a podCertificate projection. The rules, for both forms: at most
// [MaxBundleSize] bytes; nothing but PEM blocks and white space; exactly
// one PRIVATE KEY block (PKCS#8, no headers) of a key type [CheckKey]
// accepts; 1 to [MaxBundleCertificates] CERTIFICATE blocks that parse, the
// first of them for that key and an identity certificate x509sa decodes.
// Errors match [ErrInvalidBundle] or [ErrLimit].
func ParseKeyAndChain(keyPEM, chainPEM []byte) (*Credential, error) {
	return parseKeyAndChain(keyPEM, chainPEM, podCertificate)
}

// rules says what a credential's files may hold.
type rules struct {
	// anyCertificate accepts the keys crypto/tls reads (PKCS#1, SEC1 and
	// PKCS#8; any key jwks.CheckPublicKey accepts) and a leaf without
	// identity.
	anyCertificate bool
}

// podCertificate are the rules of a pod's mounted pod certificate.
var podCertificate = rules{}

func parseKeyAndChain(keyPEM, chainPEM []byte, r rules) (*Credential, error) {
	if n := len(keyPEM) + len(chainPEM); n > MaxBundleSize {
		return nil, limit("bundle bytes", n, MaxBundleSize)
	}
	key, _, err := readBlocks(keyPEM, r, true, false)
	if err != nil {
		return nil, err
	}
	_, certs, err := readBlocks(chainPEM, r, false, true)
	if err != nil {
		return nil, err
	}
	return newCredential(key, certs, r)
}

// parseBlocks reads a key and its chain from one file.
func parseBlocks(data []byte, r rules) (*Credential, error) {
	key, certs, err := readBlocks(data, r, true, true)
	if err != nil {
		return nil, err
	}
	return newCredential(key, certs, r)
}

// bundleError reports credential files that cannot be used. It matches
// [ErrInvalidBundle] and wraps cause, if any.
func bundleError(reason string, cause error) error {
	return wrap(ErrInvalidBundle, "credential bundle: "+reason, cause)
}

// readBlocks reads PEM blocks, requiring a key and/or certificates.
func readBlocks(data []byte, r rules, wantKey, wantCerts bool) (crypto.Signer, [][]byte, error) {
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
			return nil, nil, bundleError("data outside PEM blocks", nil)
		}
		var block *pem.Block
		block, rest = pem.Decode(trimmed)
		if block == nil {
			return nil, nil, bundleError("malformed PEM block", nil)
		}
		if len(block.Headers) > 0 {
			return nil, nil, bundleError("PEM headers are not allowed", nil)
		}
		switch {
		case block.Type == "PRIVATE KEY" || r.anyCertificate && (block.Type == "RSA PRIVATE KEY" || block.Type == "EC PRIVATE KEY"):
			if !wantKey {
				return nil, nil, bundleError("a private key in the certificate chain", nil)
			}
			if key != nil {
				return nil, nil, bundleError("more than one private key", nil)
			}
			k, err := parsePrivateKey(block, r)
			if err != nil {
				return nil, nil, err
			}
			key = k
		case block.Type == "CERTIFICATE":
			if !wantCerts {
				return nil, nil, bundleError("a certificate in the key file", nil)
			}
			if len(certs) == MaxBundleCertificates {
				return nil, nil, limit("certificates", MaxBundleCertificates+1, MaxBundleCertificates)
			}
			certs = append(certs, block.Bytes)
		case r.anyCertificate && block.Type == "EC PARAMETERS" && wantKey:
			// What openssl writes before an EC PRIVATE KEY; the key
			// names its curve again.
		default:
			return nil, nil, bundleError("unexpected PEM block "+strconv.Quote(block.Type), nil)
		}
	}
	switch {
	case wantKey && key == nil:
		return nil, nil, bundleError("no private key", nil)
	case wantCerts && len(certs) == 0:
		return nil, nil, bundleError("no certificate", nil)
	}
	return key, certs, nil
}

// parsePrivateKey reads a private key block: PKCS#8 of a key type
// [CheckKey] accepts or, with anyCertificate, PKCS#8, PKCS#1 or SEC1 of a
// key jwks.CheckPublicKey accepts.
func parsePrivateKey(block *pem.Block, r rules) (crypto.Signer, error) {
	var k any
	var err error
	switch block.Type {
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		var ec *ecdsa.PrivateKey
		ec, err = x509.ParseECPrivateKey(block.Bytes)
		k = ec
	default:
		k, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		what := "PKCS#8"
		switch block.Type {
		case "RSA PRIVATE KEY":
			what = "PKCS#1"
		case "EC PRIVATE KEY":
			what = "SEC1"
		}
		return nil, bundleError("the private key is not "+what, err)
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, bundleError("the private key cannot sign", nil)
	}
	check := CheckKey
	if r.anyCertificate {
		check = jwks.CheckPublicKey
	}
	if err := check(signer.Public()); err != nil {
		return nil, bundleError("the private key", err)
	}
	return signer, nil
}

// newCredential parses the chain and builds the credential.
func newCredential(key crypto.Signer, certs [][]byte, r rules) (*Credential, error) {
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
	cred := &Credential{
		Certificate: tls.Certificate{Certificate: certs, PrivateKey: key, Leaf: leaf},
		NotAfter:    leaf.NotAfter,
	}
	if r.anyCertificate {
		return cred, nil
	}
	decoded, err := x509sa.DecodeCertificate(leaf)
	if err != nil {
		return nil, bundleError("the leaf carries no identity", err)
	}
	cred.Identity, cred.SPIFFEID = decoded.Identity(), decoded.SPIFFEID
	return cred, nil
}
