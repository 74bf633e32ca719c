package jws

// rawToDER encodes fixed-width big-endian r and s as the ASN.1 DER
// SEQUENCE { INTEGER r, INTEGER s } crypto/ecdsa verifies. It refuses zero
// values, which no valid signature has.
func rawToDER(r, s []byte) ([]byte, bool) {
	r, s = trimZeros(r), trimZeros(s)
	if len(r) == 0 || len(s) == 0 {
		return nil, false
	}
	rl, sl := intLen(r), intLen(s)
	body := 2 + rl + 2 + sl
	// Short-form INTEGER lengths and a SEQUENCE length that fits one byte
	// (the most appendInt and the 0x81 form below can write); ES512 needs
	// at most 67-byte integers.
	if rl > 127 || sl > 127 || body > 255 {
		return nil, false
	}
	out := make([]byte, 0, 3+body)
	out = append(out, 0x30)
	if body < 128 {
		out = append(out, byte(body))
	} else {
		out = append(out, 0x81, byte(body))
	}
	out = appendInt(out, r)
	return appendInt(out, s), true
}

func trimZeros(b []byte) []byte {
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	return b
}

// intLen is the content length of a DER INTEGER holding the positive
// big-endian value b (no leading zeros): one more when the top bit is set.
func intLen(b []byte) int {
	if b[0]&0x80 != 0 {
		return len(b) + 1
	}
	return len(b)
}

func appendInt(out, b []byte) []byte {
	out = append(out, 0x02, byte(intLen(b)))
	if b[0]&0x80 != 0 {
		out = append(out, 0)
	}
	return append(out, b...)
}

// derToRaw decodes an ASN.1 DER ECDSA signature into fixed-width r||s of
// size bytes each. r and s must be positive, minimally encoded INTEGERs:
// a signer that returns anything else is broken, and its signature could
// not verify.
func derToRaw(der []byte, size int) ([]byte, bool) {
	seq, rest, ok := readTLV(der, 0x30)
	if !ok || len(rest) != 0 {
		return nil, false
	}
	r, seq, ok := readTLV(seq, 0x02)
	if !ok {
		return nil, false
	}
	s, seq, ok := readTLV(seq, 0x02)
	if !ok || len(seq) != 0 {
		return nil, false
	}
	if r, ok = positiveInt(r); !ok {
		return nil, false
	}
	if s, ok = positiveInt(s); !ok {
		return nil, false
	}
	if len(r) > size || len(s) > size {
		return nil, false
	}
	out := make([]byte, 2*size)
	copy(out[size-len(r):size], r)
	copy(out[2*size-len(s):], s)
	return out, true
}

// positiveInt returns the big-endian magnitude held in the content of a
// DER INTEGER if it is minimally encoded and greater than zero: not
// empty, not negative (top bit clear), and with a leading zero byte only
// when the next byte has its top bit set.
func positiveInt(b []byte) ([]byte, bool) {
	if len(b) == 0 || b[0]&0x80 != 0 {
		return nil, false
	}
	if b[0] == 0 {
		if len(b) == 1 || b[1]&0x80 == 0 {
			return nil, false
		}
		b = b[1:]
	}
	return b, true
}

// readTLV reads one DER element with the given tag (short or one-byte long
// length form, all an ECDSA signature needs).
func readTLV(b []byte, tag byte) (content, rest []byte, ok bool) {
	if len(b) < 2 || b[0] != tag {
		return nil, nil, false
	}
	n, off := int(b[1]), 2
	if n&0x80 != 0 {
		if n != 0x81 || len(b) < 3 || b[2] < 128 {
			return nil, nil, false
		}
		n, off = int(b[2]), 3
	}
	if len(b)-off < n {
		return nil, nil, false
	}
	return b[off : off+n], b[off+n:], true
}
