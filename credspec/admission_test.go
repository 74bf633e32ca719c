package credspec_test

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/ksa-go/ksa/credspec"
)

// TestHandlerEphemeralContainers covers pods/ephemeralcontainers updates,
// which windows-gmsa does not see (its PR #187 is open).
func TestHandlerEphemeralContainers(t *testing.T) {
	old := podWithPodLevelName()
	old.Spec.SecurityContext.WindowsOptions.GMSACredentialSpec = new(canonical(t, dummyCredSpecContents))
	debug := func(opts *corev1.WindowsSecurityContextOptions) *corev1.Pod {
		p := old.DeepCopy()
		p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: "debugger", Image: "busybox", SecurityContext: &corev1.SecurityContext{WindowsOptions: opts},
		}}}
		return p
	}
	src := &fakeSource{}
	authz := &fakeAuthorizer{decide: denyName("forbidden-spec", "")}
	h := newTestHandler(t, credspec.HandlerConfig{
		Expander:  newExpander(t, credspec.ExpanderConfig{Source: src}),
		Validator: newValidator(t, src, authz),
	})

	// Mutate: the new ephemeral container is expanded.
	resp := serve(t, h, "/mutate", reviewRequest(t, admissionv1.Update, "Pod", debug(named("other-spec")), old))
	require.True(t, resp.Allowed)
	var patch credspec.Patch
	require.NoError(t, json.Unmarshal(resp.Patch, &patch))
	assert.Equal(t, credspec.Patch{{Op: "add", Path: "/spec/ephemeralContainers/0/securityContext/windowsOptions/gmsaCredentialSpec", Value: canonical(t, contentsOf("other-spec"))}}, patch)

	// Validate: authorized and compared like a create.
	resp = serve(t, h, "/validate", reviewRequest(t, admissionv1.Update, "Pod", debug(withContents("other-spec", contentsOf("other-spec"))), old))
	assert.True(t, resp.Allowed, resp.Result)
	resp = serve(t, h, "/validate", reviewRequest(t, admissionv1.Update, "Pod", debug(withContents("other-spec", `{"x":1}`)), old))
	assert.False(t, resp.Allowed)
	assert.Equal(t, int32(422), resp.Result.Code)
	resp = serve(t, h, "/validate", reviewRequest(t, admissionv1.Update, "Pod", debug(named("forbidden-spec")), old))
	assert.False(t, resp.Allowed)
	assert.Equal(t, int32(403), resp.Result.Code)

	// An existing ephemeral container cannot change its settings.
	existing := debug(withContents("other-spec", contentsOf("other-spec")))
	changed := existing.DeepCopy()
	changed.Spec.EphemeralContainers[0].SecurityContext.WindowsOptions.GMSACredentialSpecName = new("third-spec")
	resp = serve(t, h, "/validate", reviewRequest(t, admissionv1.Update, "Pod", changed, existing))
	assert.False(t, resp.Allowed)
	assert.Equal(t, "cannot update an existing pod's GMSA settings (GMSA name modified on ephemeral container \"debugger\")", resp.Result.Message)
	// Mutating an update that adds nothing returns no patch.
	resp = serve(t, h, "/mutate", reviewRequest(t, admissionv1.Update, "Pod", existing, existing))
	assert.True(t, resp.Allowed)
	assert.Nil(t, resp.Patch)
	assert.Nil(t, resp.PatchType)
}

// TestHandlerRequestingUser covers CheckRequestingUser end to end.
func TestHandlerRequestingUser(t *testing.T) {
	src := &fakeSource{}
	authz := &fakeAuthorizer{decide: func(r credspec.UseRequest) (credspec.Decision, error) {
		return credspec.Decision{Allowed: r.User.Username != "alice", Reason: "no binding"}, nil
	}}
	v, err := credspec.NewValidator(credspec.ValidatorConfig{Source: src, Authorizer: authz, CheckRequestingUser: true})
	require.NoError(t, err)
	var (
		mu       sync.Mutex
		outcomes []credspec.ReviewOutcome
	)
	h := newTestHandler(t, credspec.HandlerConfig{Validator: v, OnReview: func(o credspec.ReviewOutcome) {
		mu.Lock()
		defer mu.Unlock()
		outcomes = append(outcomes, o)
	}})
	resp := serve(t, h, "/validate", reviewRequest(t, admissionv1.Create, "Pod", podWithPodLevelName(), nil))
	assert.False(t, resp.Allowed)
	assert.Equal(t, int32(403), resp.Result.Code)
	assert.Equal(t, "user \"alice\" is not authorized to `use` GMSA cred spec \"dummy-cred-spec-name\", reason: \"no binding\"", resp.Result.Message)
	require.Len(t, authz.calls, 2)
	assert.Equal(t, "system:serviceaccount:dummy-namespace:dummy-service-account-name", authz.calls[0].User.Username)
	assert.Equal(t, "alice", authz.calls[1].User.Username)
	assert.Equal(t, []string{"system:authenticated"}, authz.calls[1].User.Groups)

	require.Len(t, outcomes, 1)
	assert.Equal(t, "/validate", outcomes[0].Path)
	assert.Equal(t, testUID, outcomes[0].UID)
	assert.Equal(t, admissionv1.Create, outcomes[0].Operation)
	assert.ErrorIs(t, outcomes[0].Err, credspec.ErrNotAuthorized)

	// Without a requesting user, the check fails closed.
	err = v.ValidateCreate(t.Context(), dummyNamespace, podWithPodLevelName(), nil)
	requireDenial(t, err, 403, credspec.ErrNotAuthorized, "the requesting user is unknown")
}
