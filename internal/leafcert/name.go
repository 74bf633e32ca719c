package leafcert

import (
	"bytes"
	"crypto/x509/pkix"
	"encoding/asn1"
	"slices"
	"unicode/utf8"
)

// Name returns the DER of a distinguished name: the bytes asn1.Marshal
// writes for it (and so x509.CreateCertificate for a template's Subject),
// without reflection for names whose values are all strings (those ksa
// writes), the values of a multi-valued RDN in DER's order. Any other name
// is left to asn1.Marshal.
func Name(rdns pkix.RDNSequence) ([]byte, error) {
	if !plain(rdns) {
		return asn1.Marshal(rdns)
	}
	b := builder{buf: make([]byte, 0, 256)}
	var failed error
	out := b.seq(func() {
		for _, rdn := range rdns {
			b.tlv(0x31, func() {
				start := len(b.buf)
				ends := make([]int, 0, len(rdn))
				for _, atv := range rdn {
					failed = cmp(failed, b.attribute(atv.Type, atv.Value.(string)))
					ends = append(ends, len(b.buf))
				}
				b.sortSet(start, ends)
			})
		}
	})
	if failed != nil {
		return nil, failed
	}
	return out, nil
}

// attribute writes an AttributeTypeAndValue with a string value: a
// PrintableString when every byte allows it, else a UTF8String, as
// encoding/asn1 chooses.
func (b *builder) attribute(oid asn1.ObjectIdentifier, s string) error {
	var err error
	b.seq(func() {
		b.oid(oid)
		tag := byte(0x13) // PrintableString
		for i := 0; i < len(s); i++ {
			if !printable(s[i]) {
				tag = 0x0c // UTF8String
				break
			}
		}
		if tag == 0x0c && !utf8.ValidString(s) {
			err = asn1.SyntaxError{Msg: "string not valid UTF-8"}
		}
		b.tlv(tag, func() { b.buf = append(b.buf, s...) })
	})
	return err
}

// sortSet puts the elements of a SET OF, written from start with each
// ending at ends[i], in the ascending byte order DER requires.
func (b *builder) sortSet(start int, ends []int) {
	if len(ends) < 2 {
		return
	}
	elems := make([][]byte, len(ends))
	from := start
	for i, end := range ends {
		elems[i] = bytes.Clone(b.buf[from:end])
		from = end
	}
	slices.SortFunc(elems, bytes.Compare)
	at := start
	for _, e := range elems {
		at += copy(b.buf[at:], e)
	}
}

// plain reports whether every attribute has a string value and an object
// identifier Name encodes itself.
func plain(rdns pkix.RDNSequence) bool {
	for _, rdn := range rdns {
		for _, atv := range rdn {
			if _, ok := atv.Value.(string); !ok {
				return false
			}
			oid := atv.Type
			if len(oid) < 2 || oid[0] < 0 || oid[0] > 2 || (oid[0] < 2 && oid[1] >= 40) {
				return false
			}
			for _, arc := range oid {
				if arc < 0 || int64(arc) > 1<<40 {
					return false
				}
			}
		}
	}
	return true
}

// printable reports whether b may appear in a PrintableString, as
// encoding/asn1 decides when it picks a string type (no '*', no '&').
func printable(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	switch b {
	case ' ', '\'', '(', ')', '+', ',', '-', '.', '/', ':', '=', '?':
		return true
	}
	return false
}

// oid writes an OBJECT IDENTIFIER whose arcs plain accepted.
func (b *builder) oid(oid asn1.ObjectIdentifier) {
	b.tlv(0x06, func() {
		b.base128(int64(oid[0])*40 + int64(oid[1]))
		for _, arc := range oid[2:] {
			b.base128(int64(arc))
		}
	})
}

// base128 writes n in groups of seven bits, most significant first, the
// high bit set on all but the last.
func (b *builder) base128(n int64) {
	groups := 1
	for v := n >> 7; v > 0; v >>= 7 {
		groups++
	}
	for i := groups - 1; i >= 0; i-- {
		c := byte(n>>(7*i)) & 0x7f
		if i > 0 {
			c |= 0x80
		}
		b.buf = append(b.buf, c)
	}
}
