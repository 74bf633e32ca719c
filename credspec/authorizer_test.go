package credspec_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/credspec"
)

// TestLocalSubjectAccessReview holds the review to windows-gmsa's: the
// service account's user and groups without UID or extras, verb use on
// windows.k8s.io/v1 gmsacredentialspecs, in the pod's namespace.
func TestLocalSubjectAccessReview(t *testing.T) {
	sa := ksa.ServiceAccount{Namespace: "ns", Name: "app"}
	req := credspec.UseRequest{User: ksa.UserInfo{Username: sa.Username(), Groups: sa.Groups()}, Namespace: "ns", Name: "webapp01"}
	got := credspec.LocalSubjectAccessReview(req)
	assert.Equal(t, &authorizationv1.LocalSubjectAccessReview{
		TypeMeta:   metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "LocalSubjectAccessReview"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns"},
		Spec: authorizationv1.SubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: "ns", Verb: "use", Group: "windows.k8s.io", Version: "v1", Resource: "gmsacredentialspecs", Name: "webapp01",
			},
			User:   "system:serviceaccount:ns:app",
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ns"},
		},
	}, got)

	// A requesting user's UID and extras are passed on, copied.
	user := ksa.UserInfo{Username: "alice", UID: "u1", Groups: []string{"devs"}, Extra: map[string][]string{"k": {"v"}}}
	got = credspec.LocalSubjectAccessReview(credspec.UseRequest{User: user, Namespace: "ns", Name: "x"})
	assert.Equal(t, "u1", got.Spec.UID)
	assert.Equal(t, map[string]authorizationv1.ExtraValue{"k": {"v"}}, got.Spec.Extra)
	got.Spec.Extra["k"][0] = "changed"
	assert.Equal(t, "v", user.Extra["k"][0])
}

func TestReviewAuthorizer(t *testing.T) {
	tests := []struct {
		name   string
		status authorizationv1.SubjectAccessReviewStatus
		err    error
		want   credspec.Decision
	}{
		{name: "allowed", status: authorizationv1.SubjectAccessReviewStatus{Allowed: true}, want: credspec.Decision{Allowed: true}},
		{name: "no_opinion", status: authorizationv1.SubjectAccessReviewStatus{Reason: "no RBAC policy matched"}, want: credspec.Decision{Reason: "no RBAC policy matched"}},
		{name: "allowed_and_denied_is_denied", status: authorizationv1.SubjectAccessReviewStatus{Allowed: true, Denied: true, Reason: "r"}, want: credspec.Decision{Reason: "r"}},
		{name: "error", err: assert.AnError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sent *authorizationv1.LocalSubjectAccessReview
			a, err := credspec.NewReviewAuthorizer(credspec.ReviewAuthorizerConfig{Create: func(_ context.Context, r *authorizationv1.LocalSubjectAccessReview) (*authorizationv1.LocalSubjectAccessReview, error) {
				sent = r
				if tt.err != nil {
					return nil, tt.err
				}
				out := r.DeepCopy()
				out.Status = tt.status
				return out, nil
			}})
			require.NoError(t, err)
			req := credspec.UseRequest{User: ksa.UserInfo{Username: "u"}, Namespace: "ns", Name: "n"}
			got, err := a.AuthorizeUse(t.Context(), req)
			assert.Equal(t, credspec.LocalSubjectAccessReview(req), sent)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	a, err := credspec.NewReviewAuthorizer(credspec.ReviewAuthorizerConfig{Create: func(context.Context, *authorizationv1.LocalSubjectAccessReview) (*authorizationv1.LocalSubjectAccessReview, error) {
		return nil, nil
	}})
	require.NoError(t, err)
	_, err = a.AuthorizeUse(t.Context(), credspec.UseRequest{})
	assert.Error(t, err, "a nil review without error is an error")
}
