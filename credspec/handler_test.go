package credspec_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/credspec"
)

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
