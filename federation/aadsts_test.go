package federation_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/federation"
	"github.com/ksa-go/ksa/federation/entratest"
	"github.com/ksa-go/ksa/internal/testkeys"
)

// TestAzureEntraRefusals: mismatches only Entra can see are refused the way
// Entra refuses them, and come back typed with the fix.
func TestAzureEntraRefusals(t *testing.T) {
	tests := []struct {
		name      string
		fc        func(e *env) entratest.FederatedCredential
		setup     func(t *testing.T, e *env)
		wantCode  int
		wantErr   error
		wantCheck error
	}{
		{name: "subject", wantCheck: federation.ErrAssertionSubject, fc: func(e *env) entratest.FederatedCredential {
			return entratest.FederatedCredential{Issuer: e.issuer.Issuer(), Subject: "system:serviceaccount:payments:other", Audience: federation.DefaultAudience}
		}, wantCode: 700213, wantErr: federation.ErrAssertionSubject},
		{name: "issuer", wantCheck: federation.ErrAssertionIssuer, fc: func(e *env) entratest.FederatedCredential {
			return entratest.FederatedCredential{Issuer: e.issuer.Issuer() + "/", Subject: subject, Audience: federation.DefaultAudience}
		}, wantCode: 700211, wantErr: federation.ErrAssertionIssuer},
		{name: "audience", wantCheck: federation.ErrAssertionAudience, fc: func(e *env) entratest.FederatedCredential {
			return entratest.FederatedCredential{Issuer: e.issuer.Issuer(), Subject: subject, Audience: "api://Other"}
		}, wantCode: 700212, wantErr: federation.ErrAssertionAudience},
		{name: "signing key not published", setup: func(t *testing.T, e *env) { rotate(t, e.issuer, nil, false) },
			wantCode: 7000272, wantErr: federation.ErrSigningKeyNotFound},
		{name: "issuer unreachable", setup: func(t *testing.T, e *env) { e.issuer.SetFailing(true) },
			wantCode: 90061, wantErr: federation.ErrIssuerUnreachable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &env{}
			var fcs []entratest.FederatedCredential
			if tt.fc != nil {
				// The issuer URL is known only once the env exists: build
				// it, then register the credential.
				e = newEnv(t, entratest.FederatedCredential{})
				fcs = []entratest.FederatedCredential{tt.fc(e)}
				e.entra.AddApp(entratest.App{ClientID: clientID, Credentials: fcs})
			} else {
				e = newEnv(t)
			}
			e.project(t, federation.DefaultAudience, time.Hour)
			if tt.setup != nil {
				tt.setup(t, e)
			}
			_, err := getToken(t, e.credential(t))
			require.ErrorIs(t, err, tt.wantErr)
			require.ErrorIs(t, err, federation.ErrEntra)
			var entraErr *federation.EntraError
			require.ErrorAs(t, err, &entraErr)
			assert.Equal(t, tt.wantCode, entraErr.Code)
			assert.NotEmpty(t, entraErr.Fix)
			assert.Equal(t, 1, strings.Count(err.Error(), fmt.Sprintf("AADSTS%d", tt.wantCode)), "the code is printed once: %v", err)
			if tt.wantCheck != nil {
				require.ErrorIs(t, err, tt.wantCheck, "Entra's refusal matches the pre-flight sentinel too")
			}
			ex := e.entra.Exchanges()
			require.Len(t, ex, 1)
			assert.Equal(t, tt.wantCode, ex[0].Code)
		})
	}
}

// TestAzureAssertionExpiredAtEntra: Entra's clock is ahead of ours; its
// AADSTS700024 comes back as ErrAssertionExpired.
func TestAzureAssertionExpiredAtEntra(t *testing.T) {
	e := newEnv(t)
	e.project(t, federation.DefaultAudience, time.Hour)
	local := e.clk.Now()
	cred := e.credential(t, func(o *federation.AzureConfig) { o.Now = func() time.Time { return local } })
	e.clk.Advance(2 * time.Hour)
	_, err := getToken(t, cred)
	require.ErrorIs(t, err, federation.ErrAssertionExpired)
	var entraErr *federation.EntraError
	require.ErrorAs(t, err, &entraErr)
	assert.Equal(t, 700024, entraErr.Code)
}

// TestEntraStandInRules: the stand-in refuses what Entra ID refuses beyond
// credential matching: algorithms other than RS256, a scope without
// /.default, an app without federated credentials.
func TestEntraStandInRules(t *testing.T) {
	t.Run("ES256 assertion", func(t *testing.T) {
		e := newEnv(t)
		rotate(t, e.issuer, testkeys.Generated("p256"), true)
		e.project(t, federation.DefaultAudience, time.Hour)
		_, err := getToken(t, e.credential(t))
		var entraErr *federation.EntraError
		require.ErrorAs(t, err, &entraErr)
		assert.Equal(t, 700027, entraErr.Code)
	})
	t.Run("scope without /.default", func(t *testing.T) {
		e := newEnv(t)
		e.project(t, federation.DefaultAudience, time.Hour)
		_, err := e.credential(t).GetToken(t.Context(), policy.TokenRequestOptions{Scopes: []string{"https://management.azure.com/user_impersonation"}})
		var entraErr *federation.EntraError
		require.ErrorAs(t, err, &entraErr)
		assert.Equal(t, 1002012, entraErr.Code)
	})
	t.Run("no federated credentials", func(t *testing.T) {
		e := newEnv(t)
		e.entra.AddApp(entratest.App{ClientID: clientID})
		e.project(t, federation.DefaultAudience, time.Hour)
		_, err := getToken(t, e.credential(t))
		require.ErrorIs(t, err, federation.ErrNoMatchingCredential)
	})
}
