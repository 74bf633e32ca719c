package errs_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/internal/errs"
)

func TestMsg(t *testing.T) {
	inner := errors.New("jwks: unsupported key")
	for _, tc := range []struct {
		name        string
		prefix, msg string
		cause       error
		want        string
	}{
		{name: "all parts", prefix: "oidc", msg: "rendering the key set", cause: fmt.Errorf("jwks: key #0: %s", errs.Text(inner)), want: "oidc: rendering the key set: key #0: unsupported key"},
		{name: "no cause", prefix: "tokens", msg: "token too large", want: "tokens: token too large"},
		{name: "no message", prefix: "tokens", cause: inner, want: "tokens: unsupported key"},
		{name: "foreign prefix kept", prefix: "x509sa", msg: "chain", cause: errors.New("x509: certificate signed by unknown authority"), want: "x509sa: chain: x509: certificate signed by unknown authority"},
		{name: "message with a prefix", prefix: "jwks", msg: "jwks: twice", want: "jwks: twice"},
		{name: "name that only starts like a prefix", prefix: "oidc", msg: "x", cause: errors.New("jwksx: y"), want: "oidc: x: jwksx: y"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, errs.Msg(tc.prefix, tc.msg, tc.cause))
		})
	}
}

func TestJoin(t *testing.T) {
	a, b := errors.New("tokens: a"), errors.New("jwks: b")
	assert.NoError(t, errs.Join("tokens", "none", nil))
	assert.Same(t, a, errs.Join("tokens", "one", []error{a}))
	err := errs.Join("tokens", "no key verified the signature", []error{a, b})
	assert.EqualError(t, err, "tokens: no key verified the signature: a; b")
	assert.ErrorIs(t, err, a)
	assert.ErrorIs(t, err, b)
	assert.Equal(t, "", errs.Text(nil))
}
