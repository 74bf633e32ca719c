package pemblock

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
)

// Kind is what a PEM block's type says it holds.
type Kind int

// The kinds of blocks a key file may hold; Other is every type that names
// no key or certificate ("EC PARAMETERS", "X509 CRL", ...).
const (
	Other       Kind = iota
	Public           // "PUBLIC KEY": PKIX
	RSAPublic        // "RSA PUBLIC KEY": PKCS #1
	Certificate      // "CERTIFICATE"
	RSAPrivate       // "RSA PRIVATE KEY": PKCS #1
	ECPrivate        // "EC PRIVATE KEY": SEC 1
	PKCS8            // "PRIVATE KEY": PKCS #8
)

// KindOf returns the kind of a block type.
func KindOf(typ string) Kind {
	switch typ {
	case "PUBLIC KEY":
		return Public
	case "RSA PUBLIC KEY":
		return RSAPublic
	case "CERTIFICATE":
		return Certificate
	case "RSA PRIVATE KEY":
		return RSAPrivate
	case "EC PRIVATE KEY":
		return ECPrivate
	case "PRIVATE KEY":
		return PKCS8
	}
	return Other
}

// Private reports whether a block of kind k holds a private key.
func (k Kind) Private() bool { return k == RSAPrivate || k == ECPrivate || k == PKCS8 }

// Encrypted reports whether b is a legacy encrypted block (RFC 1421
// headers), which no key of ksa may be.
func Encrypted(b *pem.Block) bool {
	_, ok := b.Headers["Proc-Type"]
	return ok
}

// Next returns the next PEM block in data. pem.Decode passes over a block
// whose base64 is broken or whose END line is missing without a word,
// which would drop a damaged key unnoticed; damaged is the type named by
// such a block's BEGIN line ("?" if it names none), before the block
// returned or, when there is none, anywhere in data.
func Next(data []byte) (block *pem.Block, rest []byte, damaged string) {
	block, rest = pem.Decode(data)
	skipped := data
	if block != nil {
		// The consumed text holds the block's own BEGIN line last.
		skipped = data[:len(data)-len(rest)]
		last := bytes.LastIndex(skipped, begin)
		skipped = skipped[:last]
	}
	for len(skipped) > 0 {
		i := bytes.Index(skipped, begin)
		if i < 0 {
			break
		}
		if i == 0 || skipped[i-1] == '\n' {
			line := skipped[i+len(begin):]
			if end := bytes.IndexAny(line, "\r\n"); end >= 0 {
				line = line[:end]
			}
			typ, ok := bytes.CutSuffix(line, []byte("-----"))
			if !ok || len(typ) == 0 {
				return block, rest, "?"
			}
			return block, rest, string(typ)
		}
		skipped = skipped[i+len(begin):]
	}
	return block, rest, ""
}

var begin = []byte("-----BEGIN ")

// Damaged is the reason given for a block Next reports as damaged.
const Damaged = "PEM block does not decode (broken base64 or no END line)"

// Where names block i of the data and its type in a message: "PEM block
// #1 (EC PRIVATE KEY)".
func Where(i int, typ string) string { return fmt.Sprintf("PEM block #%d (%s)", i, typ) }

// ParsePrivate parses the DER of a private key block of kind k: PKCS #1
// RSA, SEC 1 EC, or PKCS #8 holding an RSA, ECDSA or Ed25519 key.
func ParsePrivate(k Kind, der []byte) (any, error) {
	switch k {
	case RSAPrivate:
		return x509.ParsePKCS1PrivateKey(der)
	case ECPrivate:
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
