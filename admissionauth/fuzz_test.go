package admissionauth_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/admissionauth"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/tokens"
)

// FuzzParseReview: any body is either refused with ErrReview or is strict
// JSON naming an AdmissionReview with a request uid.
func FuzzParseReview(f *testing.F) {
	for _, seed := range []string{
		review,
		`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"x","resource":{"group":"apps"}}}`,
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x","resource":{"group":"a","group":"b"}}}`,
		`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x","RESOURCE":{}}}`,
		`{"request":null}`,
		`[]`,
		"\xef\xbb\xbf{}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rv, err := admissionauth.ParseReview(body)
		if err != nil {
			require.ErrorIs(t, err, admissionauth.ErrReview)
			return
		}
		require.True(t, json.Valid(body), "accepted invalid JSON %q", body)
		require.NotEmpty(t, rv.UID)
		require.Contains(t, []string{admissionauth.AdmissionV1, admissionauth.AdmissionV1beta1}, rv.APIVersion)
	})
}

// FuzzVerify: whatever the Authorization header holds, the verifier never
// panics, accepts nothing but the one good token, and refuses with a
// sentinel of the package.
func FuzzVerify(f *testing.F) {
	// RSA and a fixed jti: every fuzz worker mints the same token.
	key := testkeys.K8sRSA()
	m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: issuer, Signer: key, Now: func() time.Time { return now }, NewJTI: func() string { return "fuzz" }})
	require.NoError(f, err)
	good := webhookToken(f, m, tokens.BoundValidatingWebhookConfiguration, "gmsa", audience, "*")
	f.Add("Bearer " + good)
	f.Add("bearer " + good + " ")
	f.Add("Bearer " + good + "x")
	f.Add("Basic x")
	f.Add("Bearer")
	f.Add("Bearer a,b")
	f.Add("")
	v := verifier(f, validator(f, key, now, false), admissionauth.Require)
	f.Fuzz(func(t *testing.T, auth string) {
		res, err := v.Verify(t.Context(), auth, admissionauth.Review{APIVersion: admissionauth.AdmissionV1, UID: "u"})
		if err != nil {
			require.NotEqual(t, 500, admissionauth.StatusCode(err), "%v", err)
			return
		}
		require.True(t, res.Authenticated)
		require.Equal(t, good, strings.TrimLeft(auth[len("Bearer "):], " "), "accepted another token")
	})
}
