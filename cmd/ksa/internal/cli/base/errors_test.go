package base

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/jwks"
)

func TestErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  *Error
		want string
	}{
		{name: "what only", err: &Error{What: "sa.key already exists"}, want: "sa.key already exists"},
		{name: "cause without its prefix", err: &Error{What: "reading key file k", Err: jwks.ErrNoKeys, Fix: "pass a key"}, want: "reading key file k: no keys; fix: pass a key"},
		{name: "folded onto one line", err: &Error{What: "a\nb", Fix: "c\r\nd"}, want: "a b; fix: c d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.err.Error())
			assert.ErrorIs(t, &Error{Err: jwks.ErrNoKeys}, jwks.ErrNoKeys)
		})
	}
}
