package golangjwt_test

import (
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/golangjwt"
	"github.com/ksa-go/ksa/tokens"
)

func TestClaimsValidate(t *testing.T) {
	ok := golangjwt.Claims{
		RegisteredClaims: jwt.RegisteredClaims{Subject: "system:serviceaccount:prod:billing", IssuedAt: jwt.NewNumericDate(now)},
		Kubernetes:       &golangjwt.KubernetesClaims{Namespace: "prod", ServiceAccount: &golangjwt.ObjectRef{Name: "billing", UID: "u"}},
	}
	require.NoError(t, ok.Validate())
	tests := []struct {
		name string
		edit func(*golangjwt.Claims)
		err  error
		msg  string
	}{
		{name: "no kubernetes.io", edit: func(c *golangjwt.Claims) { c.Kubernetes = nil }, err: tokens.ErrMissingClaim,
			msg: "golangjwt: claim kubernetes.io is missing"},
		{name: "no namespace", edit: func(c *golangjwt.Claims) { c.Kubernetes.Namespace = "" }, err: tokens.ErrMissingClaim},
		{name: "no service account UID", edit: func(c *golangjwt.Claims) { c.Kubernetes.ServiceAccount.UID = "" }, err: tokens.ErrMissingClaim},
		{name: "no iat", edit: func(c *golangjwt.Claims) { c.IssuedAt = nil }, err: tokens.ErrMissingClaim},
		{name: "another subject", edit: func(c *golangjwt.Claims) { c.Subject = "system:serviceaccount:prod:admin" }, err: tokens.ErrMalformed,
			msg: `golangjwt: claim sub "system:serviceaccount:prod:admin" is not the username of service account prod/billing`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			k := *ok.Kubernetes
			sa := *k.ServiceAccount
			k.ServiceAccount = &sa
			c.Kubernetes = &k
			tt.edit(&c)
			err := c.Validate()
			require.ErrorIs(t, err, tt.err)
			if tt.msg != "" {
				assert.Equal(t, tt.msg, err.Error())
			}
		})
	}
}
