package ksa_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// TestErrorText: the module's errors lose their package name, once; an
// error of any other package keeps its text, whatever it starts with.
func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{name: "nil", err: nil, want: ""},
		{name: "a sentinel", err: jwks.ErrNoKeys, want: "no keys"},
		{name: "a configuration error and its cause", err: &ksa.ConfigError{Field: "tokens.MinterConfig.Signer", Reason: "is not usable", Err: jwks.ErrUnsupportedKey},
			want: "MinterConfig.Signer is not usable: unsupported key"},
		{name: "a typed error", err: &tokens.RequestError{Field: "spec.audiences", Reason: "is empty"}, want: "invalid token request: spec.audiences: is empty"},
		{name: "the standard library's", err: errors.New("open sa.key: no such file or directory"), want: "open sa.key: no such file or directory"},
		{name: "a module's name in another package's error", err: fmt.Errorf("jwks: %w", jwks.ErrNoKeys), want: "jwks: jwks: no keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ksa.ErrorText(tc.err))
		})
	}
}
