package kubeapi_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/tokenreview"
)

func TestTokenReviewRoundTrip(t *testing.T) {
	tr := kubeapi.TokenReview(tokenreview.Request{Token: "tok", Audiences: []string{"vault"}})
	assert.Equal(t, authenticationv1.TokenReviewSpec{Token: "tok", Audiences: []string{"vault"}}, tr.Spec)

	id := ksa.Identity{ServiceAccount: testSA, Pod: ksa.ObjectRef{Name: "p", UID: "pu"}, CredentialID: "JTI=j"}
	info := id.UserInfo()
	extra := map[string]authenticationv1.ExtraValue{}
	for k, v := range info.Extra {
		extra[k] = v
	}
	tr.Status = authenticationv1.TokenReviewStatus{
		Authenticated: true, Audiences: []string{"vault"},
		User: authenticationv1.UserInfo{Username: info.Username, UID: info.UID, Groups: info.Groups, Extra: extra},
	}
	st, err := kubeapi.ReviewStatus(tr)
	require.NoError(t, err)
	assert.Equal(t, &tokenreview.Status{Authenticated: true, Audiences: []string{"vault"}, User: info}, st)
	got, err := tokenreview.IdentityOf(st.User)
	require.NoError(t, err)
	assert.Equal(t, id, got)

	refused, err := kubeapi.ReviewStatus(&authenticationv1.TokenReview{Status: authenticationv1.TokenReviewStatus{Error: "invalid bearer token"}})
	require.NoError(t, err)
	assert.Equal(t, &tokenreview.Status{Error: "invalid bearer token"}, refused)

	_, err = kubeapi.ReviewStatus(nil)
	require.ErrorIs(t, err, kubeapi.ErrNoReview)
}
