package credspec_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/credspec"
)

func TestDenialStatus(t *testing.T) {
	authzErr := assert.AnError
	v := newValidator(t, &fakeSource{}, credspec.AuthorizerFunc(func(_ context.Context, _ credspec.UseRequest) (credspec.Decision, error) {
		return credspec.Decision{}, authzErr
	}))
	err := v.ValidateCreate(t.Context(), dummyNamespace, podWithPodLevelName(), nil)
	d := requireDenial(t, err, 403, credspec.ErrNotAuthorized,
		"is not authorized to `use` GMSA cred spec \"dummy-cred-spec-name\", reason: \"error when checking authz access: "+authzErr.Error()+"\"")
	assert.ErrorIs(t, err, authzErr)
	assert.True(t, apierrors.IsForbidden(err))
	assert.Equal(t, dummyCredSpecName, d.CredSpecName)
	se := d.StatusError()
	assert.Equal(t, d.Message, se.Error())
	assert.Equal(t, metav1.StatusReasonForbidden, se.ErrStatus.Reason)

	// No namespace at all: 400.
	pod := podWithPodLevelName()
	pod.Namespace = ""
	err = v.ValidateCreate(t.Context(), "", pod, nil)
	requireDenial(t, err, 400, credspec.ErrBadRequest, "has no namespace")
	assert.True(t, apierrors.IsBadRequest(err))
}
