package credspec_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"

	"github.com/ksa-go/ksa/credspec"
)

// TestAuthorizerErrorReason: an authorizer's error is quoted in the denial
// as windows-gmsa quotes it, without this module's package prefix (the
// admission response carries the message alone).
func TestAuthorizerErrorReason(t *testing.T) {
	authz, err := credspec.NewReviewAuthorizer(credspec.ReviewAuthorizerConfig{
		Create: func(context.Context, *authorizationv1.LocalSubjectAccessReview) (*authorizationv1.LocalSubjectAccessReview, error) {
			return nil, nil
		},
	})
	require.NoError(t, err)
	v := newValidator(t, &fakeSource{}, authz)
	err = v.ValidateCreate(t.Context(), dummyNamespace, podWithPodLevelName(), nil)
	d := requireDenial(t, err, 403, credspec.ErrNotAuthorized,
		`reason: "error when checking authz access: subject access review returned no status"`)
	assert.NotContains(t, d.Message, "credspec:")
}
