package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/jwks"
)

func TestLibText(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{name: "nil", err: nil, want: ""},
		{name: "a library sentinel", err: jwks.ErrNoKeys, want: "no keys"},
		{name: "a wrapped library error", err: fmt.Errorf("podcert: configuration: %w", jwks.ErrNoKeys), want: "configuration: jwks: no keys"},
		{name: "not a library prefix", err: errors.New("open sa.key: no such file"), want: "open sa.key: no such file"},
		{name: "no prefix", err: errors.New("boom"), want: "boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, libText(tc.err))
		})
	}
}

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
