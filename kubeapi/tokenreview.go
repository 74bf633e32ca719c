package kubeapi

import (
	"maps"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/tokenreview"
)

// TokenReview builds the authentication/v1 TokenReview that asks about
// req: spec.token and spec.audiences.
func TokenReview(req tokenreview.Request) *authenticationv1.TokenReview {
	return &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{
		Token:     req.Token,
		Audiences: slices.Clone(req.Audiences),
	}}
}

// ReviewStatus converts a TokenReview's answer into a tokenreview.Status. A
// nil review is [ErrNoReview]: no answer was obtained.
func ReviewStatus(tr *authenticationv1.TokenReview) (*tokenreview.Status, error) {
	if tr == nil {
		return nil, ErrNoReview
	}
	st := tr.Status
	out := &tokenreview.Status{
		Authenticated: st.Authenticated,
		Audiences:     slices.Clone(st.Audiences),
		Error:         st.Error,
		User: ksa.UserInfo{
			Username: st.User.Username,
			UID:      st.User.UID,
			Groups:   slices.Clone(st.User.Groups),
		},
	}
	if len(st.User.Extra) > 0 {
		out.User.Extra = make(map[string][]string, len(st.User.Extra))
		for k, v := range maps.All(st.User.Extra) {
			out.User.Extra[k] = slices.Clone([]string(v))
		}
	}
	return out, nil
}
