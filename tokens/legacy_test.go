package tokens_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/tokens"
)

// TestLegacyTokens follows Kubernetes' legacy validator and its tests
// (k8s.io/kubernetes/pkg/serviceaccount): opt-in only, claims checked in
// Kubernetes' order, the secret and service account looked up.
func TestLegacyTokens(t *testing.T) {
	key := testkeys.K8sRSA()
	m := mustMinter(t, key, func(c *tokens.MinterConfig) { c.Issuer = tokens.LegacyIssuer })
	sa := ksa.ServiceAccount{Namespace: "test", Name: "my-service-account", UID: "12345"}
	raw, err := m.MintLegacy(t.Context(), sa, "my-secret")
	require.NoError(t, err)
	assert.Equal(t, `{"iss":"kubernetes/serviceaccount","kubernetes.io/serviceaccount/namespace":"test","kubernetes.io/serviceaccount/secret.name":"my-secret","kubernetes.io/serviceaccount/service-account.name":"my-service-account","kubernetes.io/serviceaccount/service-account.uid":"12345","sub":"system:serviceaccount:test:my-service-account"}`, payloadOf(t, raw))

	store := func() *objectStore {
		s := newObjectStore().add(tokens.KindServiceAccount, "test", "my-service-account", "12345")
		s.secrets["test/my-secret"] = tokens.LegacySecret{UID: "s-uid", Token: []byte(raw)}
		return s
	}
	tests := []struct {
		name     string
		token    string
		legacy   tokens.LegacyConfig
		store    *objectStore
		wantErr  error
		wantText string
	}{
		{name: "refused unless accepted", token: raw, wantErr: tokens.ErrUnknownIssuer},
		{name: "item 13: accepted without lookups", token: raw, legacy: tokens.LegacyConfig{Accept: true}},
		{name: "item 19: secret and service account present", token: raw, legacy: tokens.LegacyConfig{Accept: true}, store: store()},
		{name: "item 20: secret missing", token: raw, legacy: tokens.LegacyConfig{Accept: true},
			store: func() *objectStore { s := store(); delete(s.secrets, "test/my-secret"); return s }(), wantErr: tokens.ErrInvalidated},
		{name: "item 21: service account missing", token: raw, legacy: tokens.LegacyConfig{Accept: true},
			store: store().remove(tokens.KindServiceAccount, "test", "my-service-account"), wantErr: tokens.ErrServiceAccountNotFound},
		{name: "item 22: marked invalid", token: raw, legacy: tokens.LegacyConfig{Accept: true},
			store: func() *objectStore {
				s := store()
				sec := s.secrets["test/my-secret"]
				sec.InvalidSince = "2022-12-20"
				s.secrets["test/my-secret"] = sec
				return s
			}(), wantErr: tokens.ErrInvalidated,
			wantText: "the token in secret test/my-secret for service account test/my-service-account has been marked invalid. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the 'kubernetes.io/legacy-token-invalid-since' label from the secret to temporarily allow use of this token"},
		{name: "token differs from the secret's copy", token: raw, legacy: tokens.LegacyConfig{Accept: true},
			store: func() *objectStore {
				s := store()
				s.secrets["test/my-secret"] = tokens.LegacySecret{Token: []byte("other")}
				return s
			}(), wantErr: tokens.ErrLegacyToken, wantText: "Token does not match server's copy"},
		{name: "service account UID changed", token: raw, legacy: tokens.LegacyConfig{Accept: true},
			store: func() *objectStore {
				s := store()
				s.add(tokens.KindServiceAccount, "test", "my-service-account", "99")
				return s
			}(), wantErr: tokens.ErrServiceAccountUIDMismatch},
		// Deleting the Secret is the only way to revoke a legacy token: with
		// an object getter it is checked unless the caller insists.
		{name: "secret deleted, checked by default", token: raw, legacy: tokens.LegacyConfig{Accept: true},
			store: newObjectStore().add(tokens.KindServiceAccount, "test", "my-service-account", "12345"), wantErr: tokens.ErrInvalidated},
		{name: "secret deleted, check skipped", token: raw, legacy: tokens.LegacyConfig{Accept: true, InsecureSkipSecretCheck: true},
			store: newObjectStore().add(tokens.KindServiceAccount, "test", "my-service-account", "12345")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustValidator(t, mustSource(t, key), func(c *tokens.ValidatorConfig) {
				c.Legacy = tt.legacy
				if tt.store != nil {
					c.SkipObjectCheck, c.Objects = false, tt.store
				}
			})
			res, err := v.Validate(t.Context(), tt.token)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				if tt.wantText != "" {
					assert.EqualError(t, err, "tokens: "+tt.wantText)
				}
				return
			}
			require.NoError(t, err)
			assert.True(t, res.Legacy)
			assert.Equal(t, []string{testAudience}, res.Audiences, "legacy tokens get the validator's audiences")
			info := res.UserInfo()
			assert.Equal(t, "system:serviceaccount:test:my-service-account", info.Username)
			assert.Equal(t, "12345", info.UID)
			assert.Nil(t, info.Extra)
		})
	}
}

// TestLegacyClaimChecks: the missing-claim checks, in Kubernetes' order.
func TestLegacyClaimChecks(t *testing.T) {
	key := testkeys.K8sRSA()
	m := mustMinter(t, key)
	full := tokens.LegacyClaims{Namespace: "ns", SecretName: "s", ServiceAccountName: "sa", ServiceAccountUID: "u"}
	tests := []struct {
		name     string
		sub      string
		mod      func(*tokens.LegacyClaims)
		wantText string
	}{
		{name: "sub", sub: "", wantText: "sub claim is missing"},
		{name: "namespace", mod: func(l *tokens.LegacyClaims) { l.Namespace = "" }, wantText: "namespace claim is missing"},
		{name: "secret", mod: func(l *tokens.LegacyClaims) { l.SecretName = "" }, wantText: "secretName claim is missing"},
		{name: "name", mod: func(l *tokens.LegacyClaims) { l.ServiceAccountName = "" }, wantText: "serviceAccountName claim is missing"},
		{name: "uid", mod: func(l *tokens.LegacyClaims) { l.ServiceAccountUID = "" }, wantText: "serviceAccountUID claim is missing"},
		{name: "sub names another account", sub: "system:serviceaccount:ns:other", wantText: "sub claim is invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := full
			if tt.mod != nil {
				tt.mod(&l)
			}
			sub := "system:serviceaccount:ns:sa"
			if tt.mod == nil {
				sub = tt.sub
			}
			raw, err := m.Sign(t.Context(), &tokens.Claims{Issuer: tokens.LegacyIssuer, Subject: sub, Legacy: &l})
			require.NoError(t, err)
			v := mustValidator(t, mustSource(t, key), func(c *tokens.ValidatorConfig) { c.Legacy.Accept = true })
			_, err = v.Validate(t.Context(), raw)
			require.ErrorIs(t, err, tokens.ErrLegacyToken)
			assert.EqualError(t, err, "tokens: "+tt.wantText)
		})
	}
}

// TestLegacyTokenWithBoundClaims: on the legacy path only the flat claims
// are checked, so a kubernetes.io claim beside them is refused rather than
// trusted for the identity.
func TestLegacyTokenWithBoundClaims(t *testing.T) {
	key := testkeys.K8sRSA()
	m := mustMinter(t, key)
	raw, err := m.Sign(t.Context(), &tokens.Claims{
		Issuer: tokens.LegacyIssuer, Subject: "system:serviceaccount:low:sa",
		Legacy:     &tokens.LegacyClaims{Namespace: "low", SecretName: "s", ServiceAccountName: "sa", ServiceAccountUID: "u"},
		Kubernetes: &tokens.KubernetesClaims{Namespace: "kube-system", ServiceAccount: ksa.ObjectRef{Name: "admin", UID: "x"}},
	})
	require.NoError(t, err)
	v := mustValidator(t, mustSource(t, key), func(c *tokens.ValidatorConfig) { c.Legacy.Accept = true })
	_, err = v.Validate(t.Context(), raw)
	require.ErrorIs(t, err, tokens.ErrLegacyToken)

	// The legacy issuer cannot also be a bound issuer.
	_, err = tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{tokens.LegacyIssuer}, Keys: mustSource(t, key),
		Audiences: []string{"a"}, SkipObjectCheck: true, Legacy: tokens.LegacyConfig{Accept: true}})
	require.Error(t, err)
}
