package admissionauth_test

import (
	"crypto"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/admissionauth"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

const (
	issuer   = "https://kubernetes.default.svc.cluster.local"
	audience = "https://gmsa-webhook.ksa-system.svc:443/validate"
)

var (
	now    = time.Unix(1514764800, 0)
	caller = ksa.ServiceAccount{Namespace: "kube-system", Name: "webhook-auth", UID: "sa-uid"}
)

// review is a small AdmissionReview about a pod.
const review = `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"namespace":"web","operation":"CREATE","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"frontend"}}}}`

func minter(t testing.TB, key crypto.Signer) *tokens.Minter {
	t.Helper()
	m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: key, Now: func() time.Time { return now }})
	require.NoError(t, err)
	return m
}

// webhookToken mints a token for the caller bound to a configuration.
func webhookToken(t testing.TB, m *tokens.Minter, kind tokens.BoundKind, name, aud, group string) string {
	t.Helper()
	tok, err := m.Mint(t.Context(), tokens.Request{
		ServiceAccount: caller,
		Audiences:      []string{aud},
		BoundObject:    &tokens.BoundObject{Kind: kind, Name: name, UID: name + "-uid"},
		Attestations:   map[string][]string{tokens.AttestationAdmissionReviewAPIGroups: {group}},
	})
	require.NoError(t, err)
	return tok.Raw
}

func validator(t testing.TB, key crypto.Signer, clock time.Time, cache bool) *tokens.Validator {
	t.Helper()
	k, err := jwks.NewKey(key.Public())
	require.NoError(t, err)
	src, err := jwks.NewStaticSource(k)
	require.NoError(t, err)
	cfg := tokens.ValidatorConfig{
		Issuers: []string{issuer}, Keys: src, Audiences: []string{audience}, SkipObjectCheck: true,
		Now: func() time.Time { return clock },
	}
	if cache {
		cfg.Cache = &tokens.CacheConfig{}
	}
	v, err := tokens.NewValidator(cfg)
	require.NoError(t, err)
	return v
}

func verifier(t testing.TB, v *tokens.Validator, mode admissionauth.Mode) *admissionauth.Verifier {
	t.Helper()
	av, err := admissionauth.New(admissionauth.Config{
		Tokens:          v.ValidateFor,
		Audience:        audience,
		Configurations:  []admissionauth.Configuration{{Kind: tokens.BoundValidatingWebhookConfiguration, Name: "gmsa"}},
		ServiceAccounts: []ksa.ServiceAccount{{Namespace: caller.Namespace, Name: caller.Name}},
		Mode:            mode,
	})
	require.NoError(t, err)
	return av
}
