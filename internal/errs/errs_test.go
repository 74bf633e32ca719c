package errs_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
)

func TestMsg(t *testing.T) {
	inner := errs.New("jwks", "unsupported key")
	for _, tc := range []struct {
		name        string
		prefix, msg string
		cause       error
		want        string
	}{
		{name: "all parts", prefix: "oidc", msg: "rendering the key set", cause: errs.Wrap("jwks", nil, "key #0", inner), want: "oidc: rendering the key set: key #0: unsupported key"},
		{name: "no cause", prefix: "tokens", msg: "token too large", want: "tokens: token too large"},
		{name: "no message", prefix: "tokens", cause: inner, want: "tokens: unsupported key"},
		{name: "another module's prefix kept", prefix: "x509sa", msg: "chain", cause: errors.New("x509: certificate signed by unknown authority"), want: "x509sa: chain: x509: certificate signed by unknown authority"},
		{name: "a prefix pasted as text is kept", prefix: "oidc", msg: "x", cause: errors.New("jwks: y"), want: "oidc: x: jwks: y"},
		{name: "a typed error of the module", prefix: "oidc", msg: "x", cause: &ksa.NameError{Field: "pod name", Value: "a..b", Reason: "is not a DNS subdomain"}, want: `oidc: x: pod name "a..b" is not a DNS subdomain`},
		{name: "a configuration error names its own package", prefix: "oidc", msg: "x", cause: &ksa.ConfigError{Field: "jwks.RemoteConfig.URL", Reason: "is empty"}, want: "oidc: x: RemoteConfig.URL is empty"},
		{name: "a list", prefix: "oidc", msg: "x", cause: errs.Join("jwks", "two", []error{inner, inner}), want: "oidc: x: two: unsupported key; unsupported key"},
		{name: "wrapped by fmt keeps its text", prefix: "oidc", msg: "x", cause: fmt.Errorf("at %d: %w", 3, inner), want: "oidc: x: at 3: jwks: unsupported key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, errs.Msg(tc.prefix, tc.msg, tc.cause))
		})
	}
}

func TestWrap(t *testing.T) {
	kind := errs.New("tokens", "malformed token")
	cause := errors.New("unexpected end of JSON input")
	for _, tc := range []struct {
		name      string
		err       error
		want      string
		kind, cau bool
	}{
		{name: "kind and cause", err: errs.Wrap("tokens", kind, "header", cause), want: "tokens: header: unexpected end of JSON input", kind: true, cau: true},
		{name: "kind's phrase when no message", err: errs.Wrap("tokens", kind, "", cause), want: "tokens: malformed token: unexpected end of JSON input", kind: true, cau: true},
		{name: "no cause", err: errs.Wrap("tokens", kind, "header too large", nil), want: "tokens: header too large", kind: true},
		{name: "no kind", err: errs.Wrap("tokens", nil, "reading", cause), want: "tokens: reading: unexpected end of JSON input", cau: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.EqualError(t, tc.err, tc.want)
			assert.Equal(t, tc.kind, errors.Is(tc.err, kind))
			assert.Equal(t, tc.cau, errors.Is(tc.err, cause))
		})
	}
}

func TestNew(t *testing.T) {
	a, b := errs.New("jwks", "no keys"), errs.New("jwks", "no keys")
	assert.EqualError(t, a, "jwks: no keys")
	assert.NotErrorIs(t, a, b, "each sentinel is distinct")
	assert.Equal(t, "no keys", errs.Text(a))
}

func TestJoin(t *testing.T) {
	a, b := errs.New("tokens", "a"), errs.New("jwks", "b")
	assert.NoError(t, errs.Join("tokens", "none", nil))
	assert.Same(t, a, errs.Join("tokens", "one", []error{a}))
	err := errs.Join("tokens", "no key verified the signature", []error{a, b})
	assert.EqualError(t, err, "tokens: no key verified the signature: a; b")
	assert.ErrorIs(t, err, a)
	assert.ErrorIs(t, err, b)
	assert.Equal(t, "", errs.Text(nil))
}
