package jwks

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"os"
)

// MaxPEMFileBytes bounds the key files LoadPublicKeysFile and
// LoadSigningKeyFile read: 1 MiB.
const MaxPEMFileBytes = 1 << 20

// ParsePublicKeysPEM reads every key in PEM data, as kube-apiserver reads
// --service-account-key-file: PKIX public keys, certificates (their public
// key), and RSA, EC and PKCS#8 private keys (their public half), in file
// order; beyond Kubernetes also PKCS#1 "RSA PUBLIC KEY" blocks and Ed25519
// keys. Blocks of other types ("EC PARAMETERS", ...) are skipped, as
// Kubernetes skips them. Stricter than Kubernetes, a block whose type names
// a key or certificate but does not parse, an encrypted block, or a PEM
// block that does not decode at all (broken base64, no END line), is an
// error matching [ErrMalformedPEM] rather than silently dropped. Data
// without any key is an error matching [ErrNoKeys].
func ParsePublicKeysPEM(data []byte) ([]crypto.PublicKey, error) {
	return parsePublicKeysPEM("", data)
}

// LoadPublicKeysFile reads a PEM file with [ParsePublicKeysPEM].
func LoadPublicKeysFile(path string) ([]crypto.PublicKey, error) {
	data, err := readKeyFile(path)
	if err != nil {
		return nil, err
	}
	return parsePublicKeysPEM(path, data)
}

// ParseSigningKeyPEM returns the first private key in PEM data ("RSA PRIVATE
// KEY", "EC PRIVATE KEY" or PKCS#8 "PRIVATE KEY"), as kube-apiserver reads
// --service-account-signing-key-file. The key is checked with
// [CheckPublicKey]. Other blocks are skipped, but a damaged block before
// the key (broken base64, no END line) is an error matching
// [ErrMalformedPEM], as is an encrypted key; data without a private key is
// an error matching [ErrNoKeys].
func ParseSigningKeyPEM(data []byte) (crypto.Signer, error) {
	return parseSigningKeyPEM("", data)
}

// LoadSigningKeyFile reads a PEM file with [ParseSigningKeyPEM].
func LoadSigningKeyFile(path string) (crypto.Signer, error) {
	data, err := readKeyFile(path)
	if err != nil {
		return nil, err
	}
	return parseSigningKeyPEM(path, data)
}

func readKeyFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &PEMError{Source: path, Block: -1, Reason: "cannot open", Kind: ErrKeyFile, Err: err}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxPEMFileBytes+1))
	if err != nil {
		return nil, &PEMError{Source: path, Block: -1, Reason: "cannot read", Kind: ErrKeyFile, Err: err}
	}
	if len(data) > MaxPEMFileBytes {
		return nil, &PEMError{Source: path, Block: -1, Reason: fmt.Sprintf("file is over the %d-byte limit", MaxPEMFileBytes), Kind: ErrMalformedPEM}
	}
	return data, nil
}

func parsePublicKeysPEM(source string, data []byte) ([]crypto.PublicKey, error) {
	var keys []crypto.PublicKey
	for i := 0; ; i++ {
		block, rest, damaged := decodePEM(data)
		if damaged != "" {
			return nil, &PEMError{Source: source, Block: i, Type: damaged, Reason: "PEM block does not decode (broken base64 or no END line)", Kind: ErrMalformedPEM}
		}
		if block == nil {
			break
		}
		data = rest
		kind := blockKind(block.Type)
		if kind == otherBlock {
			continue
		}
		fail := func(reason string, err error) error {
			return &PEMError{Source: source, Block: i, Type: block.Type, Reason: reason, Kind: ErrMalformedPEM, Err: err}
		}
		if _, encrypted := block.Headers["Proc-Type"]; encrypted {
			return nil, fail("encrypted PEM blocks are not supported", nil)
		}
		var key any
		var err error
		switch kind {
		case publicBlock:
			key, err = x509.ParsePKIXPublicKey(block.Bytes)
		case rsaPublicBlock:
			key, err = x509.ParsePKCS1PublicKey(block.Bytes)
		case certificateBlock:
			var cert *x509.Certificate
			if cert, err = x509.ParseCertificate(block.Bytes); err == nil {
				key = cert.PublicKey
			}
		default:
			key, err = parsePrivateKey(kind, block.Bytes)
		}
		if err != nil {
			return nil, fail("does not parse", err)
		}
		pub, err := PublicKey(key)
		if err != nil {
			return nil, fail("key refused", err)
		}
		keys = append(keys, pub)
	}
	if len(keys) == 0 {
		return nil, &PEMError{Source: source, Block: -1, Reason: "data does not contain any public key", Kind: ErrNoKeys}
	}
	return keys, nil
}

func parseSigningKeyPEM(source string, data []byte) (crypto.Signer, error) {
	for i := 0; ; i++ {
		block, rest, damaged := decodePEM(data)
		if damaged != "" {
			return nil, &PEMError{Source: source, Block: i, Type: damaged, Reason: "PEM block does not decode (broken base64 or no END line)", Kind: ErrMalformedPEM}
		}
		if block == nil {
			break
		}
		data = rest
		kind := blockKind(block.Type)
		if kind != rsaPrivateBlock && kind != ecPrivateBlock && kind != pkcs8Block {
			continue
		}
		fail := func(reason string, err error) error {
			return &PEMError{Source: source, Block: i, Type: block.Type, Reason: reason, Kind: ErrMalformedPEM, Err: err}
		}
		if _, encrypted := block.Headers["Proc-Type"]; encrypted {
			return nil, fail("encrypted PEM blocks are not supported", nil)
		}
		key, err := parsePrivateKey(kind, block.Bytes)
		if err != nil {
			return nil, fail("does not parse", err)
		}
		signer, ok := key.(crypto.Signer)
		if !ok {
			return nil, fail(fmt.Sprintf("%T is not a signing key", key), nil)
		}
		if _, err := PublicKey(signer); err != nil {
			return nil, fail("key refused", err)
		}
		return signer, nil
	}
	return nil, &PEMError{Source: source, Block: -1, Reason: "data does not contain a private key", Kind: ErrNoKeys}
}

// decodePEM returns the next PEM block in data. pem.Decode passes over a
// block whose base64 is broken or whose END line is missing without a word,
// which would drop a damaged key unnoticed; damaged is the type named by
// such a block's BEGIN line ("?" if it names none), before the block
// returned or, when there is none, anywhere in data.
func decodePEM(data []byte) (block *pem.Block, rest []byte, damaged string) {
	block, rest = pem.Decode(data)
	skipped := data
	if block != nil {
		// The consumed text holds the block's own BEGIN line last.
		skipped = data[:len(data)-len(rest)]
		last := bytes.LastIndex(skipped, pemBegin)
		skipped = skipped[:last]
	}
	for len(skipped) > 0 {
		i := bytes.Index(skipped, pemBegin)
		if i < 0 {
			break
		}
		if i == 0 || skipped[i-1] == '\n' {
			line := skipped[i+len(pemBegin):]
			if end := bytes.IndexAny(line, "\r\n"); end >= 0 {
				line = line[:end]
			}
			typ, ok := bytes.CutSuffix(line, []byte("-----"))
			if !ok || len(typ) == 0 {
				return block, rest, "?"
			}
			return block, rest, string(typ)
		}
		skipped = skipped[i+len(pemBegin):]
	}
	return block, rest, ""
}

var pemBegin = []byte("-----BEGIN ")

type pemKind int

const (
	otherBlock pemKind = iota
	publicBlock
	rsaPublicBlock
	certificateBlock
	rsaPrivateBlock
	ecPrivateBlock
	pkcs8Block
)

func blockKind(typ string) pemKind {
	switch typ {
	case "PUBLIC KEY":
		return publicBlock
	case "RSA PUBLIC KEY":
		return rsaPublicBlock
	case "CERTIFICATE":
		return certificateBlock
	case "RSA PRIVATE KEY":
		return rsaPrivateBlock
	case "EC PRIVATE KEY":
		return ecPrivateBlock
	case "PRIVATE KEY":
		return pkcs8Block
	}
	return otherBlock
}

func parsePrivateKey(kind pemKind, der []byte) (any, error) {
	switch kind {
	case rsaPrivateBlock:
		return x509.ParsePKCS1PrivateKey(der)
	case ecPrivateBlock:
		return x509.ParseECPrivateKey(der)
	default:
		key, err := x509.ParsePKCS8PrivateKey(der)
		if err != nil {
			return nil, err
		}
		switch key.(type) {
		case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
			return key, nil
		}
		return nil, fmt.Errorf("a PKCS#8 key of type %T is not RSA, ECDSA or Ed25519", key)
	}
}
