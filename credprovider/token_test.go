package credprovider_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/credprovider"
	"github.com/ksa-go/ksa/tokens"
)

func TestCheckToken(t *testing.T) {
	iss := newIssuer(t, t0)
	other := newIssuer(t, t0)
	tests := []struct {
		name    string
		token   string
		check   func(*credprovider.TokenCheck)
		wantErr []error
	}{
		{name: "pod-bound token", token: iss.mint(t, "puller", "web-1", testAudience, time.Hour)},
		{name: "wrong audience", token: iss.mint(t, "puller", "web-1", "vault", time.Hour),
			wantErr: []error{credprovider.ErrTokenRefused, tokens.ErrAudienceMismatch}},
		{name: "other issuer's key", token: other.mint(t, "puller", "web-1", testAudience, time.Hour),
			wantErr: []error{credprovider.ErrTokenRefused, tokens.ErrUnknownKeyID}},
		{name: "no pod binding", token: iss.mint(t, "puller", "", testAudience, time.Hour),
			wantErr: []error{credprovider.ErrTokenRefused}},
		{name: "no pod binding, allowed", token: iss.mint(t, "puller", "", testAudience, time.Hour),
			check: func(c *credprovider.TokenCheck) { c.InsecureSkipPodBinding = true }},
		{name: "no token", wantErr: []error{credprovider.ErrNoToken}},
		{name: "not a token", token: "x.y.z", wantErr: []error{credprovider.ErrTokenRefused, tokens.ErrMalformed}},
		{name: "no audience", token: "x", check: func(c *credprovider.TokenCheck) { c.Audience = "" }, wantErr: []error{ksa.ErrInvalidConfig}},
		{name: "no verifier", token: "x", check: func(c *credprovider.TokenCheck) { c.Verify = nil }, wantErr: []error{ksa.ErrInvalidConfig}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := credprovider.TokenCheck{Verify: iss.validator.ValidateFor, Audience: testAudience}
			if tt.check != nil {
				tt.check(&check)
			}
			res, err := credprovider.CheckToken(t.Context(), &credprovider.Request{Image: "r.example/a", ServiceAccountToken: tt.token}, check)
			for _, want := range tt.wantErr {
				require.ErrorIs(t, err, want)
			}
			if tt.wantErr != nil {
				assert.Equal(t, 1, strings.Count(err.Error(), "credprovider:"), err.Error())
				if tt.token != "" {
					assert.NotContains(t, err.Error(), tt.token)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "system:serviceaccount:team:puller", res.Identity.ServiceAccount.Username())
		})
	}
}

func TestCheckTokenExpired(t *testing.T) {
	iss := newIssuer(t, t0)
	tok := iss.mint(t, "puller", "web-1", testAudience, time.Hour)
	late := iss.validatorAt(t, t0.Add(2*time.Hour))
	_, err := credprovider.CheckToken(t.Context(), &credprovider.Request{Image: "a", ServiceAccountToken: tok},
		credprovider.TokenCheck{Verify: late.ValidateFor, Audience: testAudience})
	require.ErrorIs(t, err, credprovider.ErrTokenRefused)
	require.ErrorIs(t, err, tokens.ErrExpired)
	var te *tokens.TimeError
	require.ErrorAs(t, err, &te)
}
