package leafcert

import (
	"crypto/x509"
	"math/big"
	"math/bits"
	"time"
)

// Object identifiers, each as its whole DER encoding (tag, length, value).
const (
	oidKeyUsage         = "\x06\x03\x55\x1d\x0f"                         // 2.5.29.15
	oidSubjectAltName   = "\x06\x03\x55\x1d\x11"                         // 2.5.29.17
	oidBasicConstraints = "\x06\x03\x55\x1d\x13"                         // 2.5.29.19
	oidAuthorityKeyID   = "\x06\x03\x55\x1d\x23"                         // 2.5.29.35
	oidExtKeyUsage      = "\x06\x03\x55\x1d\x25"                         // 2.5.29.37
	oidServerAuth       = "\x06\x08\x2b\x06\x01\x05\x05\x07\x03\x01"     // 1.3.6.1.5.5.7.3.1
	oidClientAuth       = "\x06\x08\x2b\x06\x01\x05\x05\x07\x03\x02"     // 1.3.6.1.5.5.7.3.2
	oidECDSAWithSHA256  = "\x06\x08\x2a\x86\x48\xce\x3d\x04\x03\x02"     // 1.2.840.10045.4.3.2
	oidECDSAWithSHA384  = "\x06\x08\x2a\x86\x48\xce\x3d\x04\x03\x03"     // 1.2.840.10045.4.3.3
	oidECDSAWithSHA512  = "\x06\x08\x2a\x86\x48\xce\x3d\x04\x03\x04"     // 1.2.840.10045.4.3.4
	oidSHA256WithRSA    = "\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01\x0b" // 1.2.840.113549.1.1.11
	oidEd25519          = "\x06\x03\x2b\x65\x70"                         // 1.3.101.112
)

// algorithmID encodes an AlgorithmIdentifier, with NULL parameters for
// RSA as RFC 4055 asks and none for ECDSA and Ed25519.
func algorithmID(oid string, null bool) []byte {
	var b builder
	return b.seq(func() {
		b.raw(oid)
		if null {
			b.raw("\x05\x00")
		}
	})
}

// builder appends DER: each constructed value is written with a one-byte
// length placeholder, grown once its contents are known.
type builder struct{ buf []byte }

// tlv writes tag, then the contents body writes, and returns the encoded
// value (valid until the builder writes again).
func (b *builder) tlv(tag byte, body func()) []byte {
	start := len(b.buf)
	b.buf = append(b.buf, tag, 0)
	body()
	n := len(b.buf) - start - 2
	if n < 0x80 {
		b.buf[start+1] = byte(n)
		return b.buf[start:]
	}
	size := (bits.Len(uint(n)) + 7) / 8
	b.buf = append(b.buf, make([]byte, size)...)
	copy(b.buf[start+2+size:], b.buf[start+2:start+2+n])
	b.buf[start+1] = 0x80 | byte(size)
	for i := range size {
		b.buf[start+2+i] = byte(n >> (8 * (size - 1 - i)))
	}
	return b.buf[start:]
}

func (b *builder) seq(body func()) []byte { return b.tlv(0x30, body) }

func (b *builder) raw(der string)    { b.buf = append(b.buf, der...) }
func (b *builder) bytes(data []byte) { b.buf = append(b.buf, data...) }

// integer writes a non-negative INTEGER.
func (b *builder) integer(x *big.Int) {
	b.tlv(0x02, func() {
		v := x.Bytes()
		if len(v) == 0 || v[0]&0x80 != 0 {
			b.buf = append(b.buf, 0)
		}
		b.bytes(v)
	})
}

// time writes UTCTime for the years 1950 to 2049 and GeneralizedTime
// otherwise, as RFC 5280 asks.
func (b *builder) time(t time.Time) {
	t = t.UTC()
	if y := t.Year(); y >= 1950 && y < 2050 {
		b.tlv(0x17, func() { b.buf = t.AppendFormat(b.buf, "060102150405Z") })
		return
	}
	b.tlv(0x18, func() { b.buf = t.AppendFormat(b.buf, "20060102150405Z") })
}

// bitString writes whole bytes as a BIT STRING.
func (b *builder) bitString(data []byte) {
	b.tlv(0x03, func() {
		b.buf = append(b.buf, 0)
		b.bytes(data)
	})
}

// keyUsage writes the key usage bits, bit 0 (digitalSignature) first,
// without trailing zero bits.
func (b *builder) keyUsage(ku x509.KeyUsage) {
	v := []byte{bits.Reverse8(byte(ku)), bits.Reverse8(byte(ku >> 8))}
	if v[1] == 0 {
		v = v[:1]
	}
	b.tlv(0x03, func() {
		b.buf = append(b.buf, byte(bits.TrailingZeros8(v[len(v)-1])))
		b.bytes(v)
	})
}

// extension writes an Extension: its OID, critical when true, and the
// value body writes, wrapped in an OCTET STRING.
func (b *builder) extension(oid string, critical bool, body func()) {
	b.seq(func() {
		b.raw(oid)
		if critical {
			b.raw("\x01\x01\xff")
		}
		b.tlv(0x04, body)
	})
}
