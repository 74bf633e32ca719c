package jws

import (
	"encoding/base64"
	"errors"
	"strings"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/view"
)

// strict decodes unpadded base64url, refusing non-zero trailing bits.
var strict = base64.RawURLEncoding.Strict()

// ErrBase64 matches every decoding failure of Decode.
var ErrBase64 = errors.New("not strict unpadded base64url")

// Decode decodes s as strict unpadded base64url (RFC 7515 §2) into buf,
// growing it when it is too small, and returns the decoded bytes. Every
// byte must be of the alphabet (Go's decoder, even strict, skips CR and LF:
// a token must have one spelling) and the trailing bits must be zero.
// Errors match ErrBase64.
func Decode(s string, buf []byte) ([]byte, error) {
	// The strict decoder refuses every byte outside the alphabet but CR
	// and LF, which it skips: look for those two (a vectorised search).
	for _, c := range [...]byte{'\n', '\r'} {
		if i := strings.IndexByte(s, c); i >= 0 {
			return nil, detail(ErrBase64, "byte %q at %d is not in the alphabet", c, i)
		}
	}
	n := strict.DecodedLen(len(s))
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	m, err := strict.Decode(buf, view.Bytes(s))
	if err != nil {
		return nil, errs.Wrap("", ErrBase64, "", err)
	}
	return buf[:m], nil
}
