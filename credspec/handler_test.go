package credspec_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/credspec"
)

func newTestHandler(t testing.TB, opts credspec.HandlerConfig) *credspec.Handler {
	t.Helper()
	h, err := credspec.NewHandler(opts)
	require.NoError(t, err)
	return h
}

func fullHandler(t testing.TB) *credspec.Handler {
	t.Helper()
	src := &fakeSource{}
	return newTestHandler(t, credspec.HandlerConfig{
		Expander:  newExpander(t, credspec.ExpanderConfig{Source: src}),
		Validator: newValidator(t, src, &fakeAuthorizer{}),
	})
}

// TestHandlerBadRequests holds the decoder to its contract: malformed
// reviews are answered with a denied review, HTTP 200, never a panic.
func TestHandlerBadRequests(t *testing.T) {
	valid := func(mut func(r *admissionv1.AdmissionRequest)) []byte {
		var review admissionv1.AdmissionReview
		require.NoError(t, json.Unmarshal(reviewRequest(t, admissionv1.Create, "Pod", podWithPodLevelName(), nil), &review))
		mut(review.Request)
		b, err := json.Marshal(&review)
		require.NoError(t, err)
		return b
	}
	tests := []struct {
		name     string
		body     []byte
		wantCode int32
		wantMsg  string
		wantUID  bool
	}{
		{name: "empty_body", body: nil, wantCode: 400, wantMsg: "unable to unmarshall JSON body as an admission review: unexpected end of JSON input"},
		{name: "not_json", body: []byte("nope"), wantCode: 400, wantMsg: "unable to unmarshall JSON body as an admission review: "},
		{name: "wrong_shape", body: []byte(`{"request": 3}`), wantCode: 400, wantMsg: "unable to unmarshall JSON body as an admission review: "},
		{name: "no_type_meta", body: []byte(`{"request": {"uid": "f0e1d2c3-0000-4000-8000-000000000001"}}`), wantCode: 400, wantUID: true, wantMsg: "expected an AdmissionReview of admission.k8s.io/v1 or admission.k8s.io/v1beta1"},
		{name: "wrong_version", body: []byte(`{"apiVersion":"admission.k8s.io/v2","kind":"AdmissionReview","request":{}}`), wantCode: 400, wantMsg: "expected an AdmissionReview"},
		{name: "no_request", body: []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`), wantCode: 400, wantMsg: "no 'Request' field in JSON body"},
		{name: "core_pod_of_other_group", body: valid(func(r *admissionv1.AdmissionRequest) { r.Kind.Group = "example.com" }), wantCode: 400, wantUID: true,
			wantMsg: "expected a Pod object, got a example.com/v1, Kind=Pod"},
		{name: "no_object", body: valid(func(r *admissionv1.AdmissionRequest) { r.Object = runtime.RawExtension{} }), wantCode: 400, wantUID: true,
			wantMsg: "unable to unmarshall pod JSON object: "},
		{name: "object_not_a_pod", body: valid(func(r *admissionv1.AdmissionRequest) { r.Object = runtime.RawExtension{Raw: []byte(`{"spec":[]}`)} }), wantCode: 400, wantUID: true,
			wantMsg: "unable to unmarshall pod JSON object: "},
		{name: "update_without_old_object", body: valid(func(r *admissionv1.AdmissionRequest) { r.Operation = admissionv1.Update }), wantCode: 400, wantUID: true,
			wantMsg: "unable to unmarshall pod JSON object: "},
		{name: "delete", body: valid(func(r *admissionv1.AdmissionRequest) { r.Operation = admissionv1.Delete }), wantCode: 400, wantUID: true,
			wantMsg: "unpexpected operation DELETE"},
	}
	h := fullHandler(t)
	for _, tt := range tests {
		for _, path := range []string{"/mutate", "/validate"} {
			t.Run(tt.name+path, func(t *testing.T) {
				resp := serve(t, h, path, tt.body)
				assert.False(t, resp.Allowed)
				require.NotNil(t, resp.Result)
				assert.Equal(t, tt.wantCode, resp.Result.Code)
				assert.Equal(t, metav1.StatusFailure, resp.Result.Status)
				assert.Contains(t, resp.Result.Message, tt.wantMsg)
				if tt.wantUID {
					assert.Equal(t, testUID, resp.UID)
				} else {
					assert.Empty(t, resp.UID)
				}
			})
		}
	}
}

func TestHandlerBodyLimit(t *testing.T) {
	body := reviewRequest(t, admissionv1.Create, "Pod", podWithPodLevelName(), nil)
	h := newTestHandler(t, credspec.HandlerConfig{
		Expander:        newExpander(t, credspec.ExpanderConfig{Source: &fakeSource{}}),
		MaxRequestBytes: int64(len(body)),
	})
	assert.True(t, serve(t, h, "/mutate", body).Allowed, "exactly at the limit")
	resp := serve(t, h, "/mutate", append(body, ' '))
	assert.False(t, resp.Allowed)
	assert.Equal(t, int32(http.StatusRequestEntityTooLarge), resp.Result.Code)
	assert.Equal(t, metav1.StatusReasonRequestEntityTooLarge, resp.Result.Reason)
	assert.Contains(t, resp.Result.Message, "couldn't read request body: AdmissionReview body is over the ")
}

func TestHandlerEndpoints(t *testing.T) {
	h := newTestHandler(t, credspec.HandlerConfig{
		Validator: newValidator(t, &fakeSource{}, &fakeAuthorizer{}),
		Version:   "1.2.3",
	})
	for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodHead} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), method, "/health", nil))
		assert.Equal(t, http.StatusNoContent, rec.Code, method)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/info", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.JSONEq(t, `{"version":"1.2.3"}`, rec.Body.String())

	// No Expander: /mutate does not exist, and Mutate denies.
	rec = httptest.NewRecorder()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/mutate", bytes.NewReader(reviewRequest(t, admissionv1.Create, "Pod", podWithPodLevelName(), nil)))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusNotFound, rec.Code)
	resp := h.Mutate(t.Context(), &admissionv1.AdmissionRequest{UID: testUID})
	assert.False(t, resp.Allowed)
	assert.Equal(t, int32(500), resp.Result.Code)

	// Default version.
	h = fullHandler(t)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequestWithContext(t.Context(), http.MethodGet, "/info", nil))
	assert.JSONEq(t, `{"version":"unknown"}`, rec.Body.String())
	// Lower-case post is accepted, as windows-gmsa upper-cases the method.
	req = httptest.NewRequestWithContext(t.Context(), "post", "/validate", bytes.NewReader(reviewRequest(t, admissionv1.Create, "Pod", podWithPodLevelName(), nil)))
	req.Header.Set("Content-Type", "application/json")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusOK, rec.Code)
}

func TestHandlerV1beta1AnsweredInKind(t *testing.T) {
	body := bytes.Replace(reviewRequest(t, admissionv1.Create, "Pod", podWithPodLevelName(), nil),
		[]byte(`"apiVersion":"admission.k8s.io/v1"`), []byte(`"apiVersion":"admission.k8s.io/v1beta1"`), 1)
	rec := httptest.NewRecorder()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/mutate", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	fullHandler(t).ServeHTTP(rec, req)
	review := decodeReview(t, rec.Body.Bytes())
	assert.Equal(t, "admission.k8s.io/v1beta1", review.APIVersion)
	assert.True(t, review.Response.Allowed)
	assert.Equal(t, testUID, review.Response.UID)
}

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

// TestLookupFailures maps Source answers to the codes windows-gmsa answers
// when it fetches a GMSACredentialSpec.
func TestLookupFailures(t *testing.T) {
	tests := []struct {
		name     string
		contents string
		err      error
		wantCode int32
		wantErr  error
		wantMsg  string
	}{
		{name: "not_found_sentinel", err: fmt.Errorf("object x: %w", credspec.ErrNotFound), wantCode: 404, wantErr: credspec.ErrNotFound, wantMsg: "cred spec dummy-cred-spec-name does not exist"},
		{name: "not_found_status", err: notFound("gone"), wantCode: 404, wantErr: credspec.ErrNotFound, wantMsg: "cred spec dummy-cred-spec-name does not exist"},
		{name: "other_error", err: assert.AnError, wantCode: 500, wantErr: credspec.ErrLookupFailed, wantMsg: "unable to retrieve the contents of cred spec dummy-cred-spec-name: " + assert.AnError.Error()},
		{name: "empty", contents: "", wantCode: 417, wantErr: credspec.ErrNoContents, wantMsg: "cred spec dummy-cred-spec-name does not have a credspec key"},
		{name: "null", contents: " null ", wantCode: 417, wantErr: credspec.ErrNoContents, wantMsg: "does not have a credspec key"},
		{name: "empty_string", contents: `""`, wantCode: 417, wantErr: credspec.ErrNoContents, wantMsg: "does not have a credspec key"},
		{name: "not_an_object", contents: `"abc"`, wantCode: 500, wantErr: credspec.ErrLookupFailed, wantMsg: "unable to marshall cred spec dummy-cred-spec-name into a JSON: "},
		{name: "too_large", contents: `{"a":"` + strings.Repeat("&", credspec.MaxSize/2) + `"}`, wantCode: 422, wantErr: credspec.ErrTooLarge, wantMsg: "cred spec dummy-cred-spec-name is too large to inline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := credspec.SourceFunc(func(context.Context, string) (string, error) { return tt.contents, tt.err })
			_, err := newExpander(t, credspec.ExpanderConfig{Source: src}).ExpandCreate(t.Context(), podWithPodLevelName())
			requireDenial(t, err, tt.wantCode, tt.wantErr, tt.wantMsg)
			pod := podWithPodLevelName()
			pod.Spec.SecurityContext.WindowsOptions.GMSACredentialSpec = new("{}")
			err = newValidator(t, src, &fakeAuthorizer{}).ValidateCreate(t.Context(), dummyNamespace, pod, nil)
			requireDenial(t, err, tt.wantCode, tt.wantErr, tt.wantMsg)
		})
	}
}

func TestExpanderHostnameRandomness(t *testing.T) {
	e := newExpander(t, credspec.ExpanderConfig{Source: &fakeSource{}, RandomHostname: true, Rand: bytes.NewReader([]byte{0xde, 0xad, 0xbe, 0xef, 0x01, 0x23})})
	patch, err := e.ExpandCreate(t.Context(), podWithPodLevelName())
	require.NoError(t, err)
	require.Len(t, patch, 2)
	assert.Equal(t, credspec.PatchOp{Op: "add", Path: "/spec/hostname", Value: "deadbeef-0123-4"}, patch[1])

	// Exhausted randomness fails closed.
	_, err = e.ExpandCreate(t.Context(), podWithPodLevelName())
	requireDenial(t, err, 500, credspec.ErrLookupFailed, "unable to generate a random hostname")
}

// TestHandlerTimeout: the Source sees the review's deadline.
func TestHandlerTimeout(t *testing.T) {
	_, err := credspec.NewHandler(credspec.HandlerConfig{Validator: newValidator(t, &fakeSource{}, &fakeAuthorizer{}), Timeout: -1})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)

	var deadlines []bool
	src := credspec.SourceFunc(func(ctx context.Context, name string) (string, error) {
		_, ok := ctx.Deadline()
		deadlines = append(deadlines, ok)
		return "", ctx.Err()
	})
	h := newTestHandler(t, credspec.HandlerConfig{Expander: newExpander(t, credspec.ExpanderConfig{Source: src}), Timeout: time.Nanosecond})
	resp := serve(t, h, "/mutate", reviewRequest(t, admissionv1.Create, "Pod", podWithPodLevelName(), nil))
	assert.False(t, resp.Allowed)
	assert.Equal(t, int32(500), resp.Result.Code)
	assert.Contains(t, resp.Result.Message, context.DeadlineExceeded.Error())
	assert.Equal(t, []bool{true}, deadlines)
}

func TestNilPods(t *testing.T) {
	e := newExpander(t, credspec.ExpanderConfig{Source: &fakeSource{}})
	v := newValidator(t, &fakeSource{}, &fakeAuthorizer{})
	pod := podWithPodLevelName()
	_, err := e.ExpandCreate(t.Context(), nil)
	assert.ErrorIs(t, err, credspec.ErrBadRequest)
	_, err = e.ExpandUpdate(t.Context(), pod, nil)
	assert.ErrorIs(t, err, credspec.ErrBadRequest)
	assert.ErrorIs(t, v.ValidateCreate(t.Context(), "ns", nil, nil), credspec.ErrBadRequest)
	assert.ErrorIs(t, v.ValidateUpdate(t.Context(), "ns", pod, nil, nil), credspec.ErrBadRequest)
	assert.ErrorIs(t, v.ValidateUpdate(t.Context(), "ns", nil, pod, nil), credspec.ErrBadRequest)
}
