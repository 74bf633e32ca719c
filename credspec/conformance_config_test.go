package credspec_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/credspec"
	"github.com/ksa-go/ksa/podcert"
)

// TestConformanceConfig maps windows-gmsa's configuration cases (its
// environment variables, options and certificate reloading) to this
// package's options and to the podcert.Source the webhook serves its
// certificate from. Where
// windows-gmsa reads environment variables and falls back to a default
// (28, 29) or panics (30) on a bad value, options here are typed Go values
// whose zero values are the documented defaults and whose invalid values are
// constructor errors.
func TestConformanceConfig(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{name: "28_duration_option_zero_is_default_negative_is_error", run: func(t *testing.T) {
			exp := newExpander(t, credspec.ExpanderConfig{Source: &fakeSource{}})
			_, err := credspec.NewHandler(credspec.HandlerConfig{Expander: exp, Timeout: -time.Second})
			require.ErrorIs(t, err, ksa.ErrInvalidConfig)

			// Timeout 0: each review's lookups get DefaultReviewTimeout.
			var deadline time.Time
			src := credspec.SourceFunc(func(ctx context.Context, name string) (string, error) {
				deadline, _ = ctx.Deadline()
				return contentsOf(name), nil
			})
			h, err := credspec.NewHandler(credspec.HandlerConfig{Expander: newExpander(t, credspec.ExpanderConfig{Source: src})})
			require.NoError(t, err)
			before := time.Now()
			resp := serve(t, h, "/mutate", reviewRequest(t, admissionv1.Create, "Pod", podWithPodLevelName(), nil))
			after := time.Now()
			require.True(t, resp.Allowed)
			assert.False(t, deadline.Before(before.Add(credspec.DefaultReviewTimeout)), "deadline %v", deadline)
			assert.False(t, deadline.After(after.Add(credspec.DefaultReviewTimeout)), "deadline %v", deadline)
		}},
		{name: "29_size_option_zero_is_default_negative_is_error", run: func(t *testing.T) {
			exp := newExpander(t, credspec.ExpanderConfig{Source: &fakeSource{}})
			_, err := credspec.NewHandler(credspec.HandlerConfig{Expander: exp, MaxRequestBytes: -1})
			require.ErrorIs(t, err, ksa.ErrInvalidConfig)

			h, err := credspec.NewHandler(credspec.HandlerConfig{Expander: exp})
			require.NoError(t, err)
			body := reviewRequest(t, admissionv1.Create, "Pod", podWithPodLevelName(), nil)
			atLimit := append(body, bytes.Repeat([]byte(" "), credspec.DefaultMaxRequestBytes-len(body))...)
			resp := serve(t, h, "/mutate", atLimit)
			assert.True(t, resp.Allowed, "a body of exactly DefaultMaxRequestBytes is read")
			resp = serve(t, h, "/mutate", append(atLimit, ' '))
			assert.False(t, resp.Allowed)
			assert.Equal(t, int32(http.StatusRequestEntityTooLarge), resp.Result.Code)
		}},
		{name: "30_invalid_configuration_is_an_error_not_a_panic", run: func(t *testing.T) {
			_, err := credspec.NewExpander(credspec.ExpanderConfig{})
			assert.ErrorIs(t, err, ksa.ErrInvalidConfig)
			_, err = credspec.NewValidator(credspec.ValidatorConfig{Source: &fakeSource{}})
			assert.ErrorIs(t, err, ksa.ErrInvalidConfig)
			_, err = credspec.NewValidator(credspec.ValidatorConfig{Authorizer: &fakeAuthorizer{}})
			assert.ErrorIs(t, err, ksa.ErrInvalidConfig)
			_, err = credspec.NewHandler(credspec.HandlerConfig{})
			assert.ErrorIs(t, err, ksa.ErrInvalidConfig)
			_, err = podcert.NewSource(podcert.SourceConfig{ChainPath: "tls.crt"})
			assert.ErrorIs(t, err, ksa.ErrInvalidConfig)
			_, err = credspec.NewReviewAuthorizer(credspec.ReviewAuthorizerConfig{})
			assert.ErrorIs(t, err, ksa.ErrInvalidConfig)
		}},
		{name: "31_defaults_random_hostname_and_requester_check_off", run: func(t *testing.T) {
			exp := newExpander(t, credspec.ExpanderConfig{Source: &fakeSource{}})
			patch, err := exp.ExpandCreate(t.Context(), podWithPodLevelName())
			require.NoError(t, err)
			for _, op := range patch {
				assert.NotEqual(t, credspec.HostnamePath, op.Path)
			}
			authz := &fakeAuthorizer{}
			v := newValidator(t, &fakeSource{}, authz)
			require.NoError(t, v.ValidateCreate(t.Context(), dummyNamespace, podWithPodLevelName(), &ksa.UserInfo{Username: "alice"}))
			require.Len(t, authz.calls, 1)
			assert.True(t, strings.HasPrefix(authz.calls[0].User.Username, ksa.UsernamePrefix))
		}},
		{name: "32_cert_reloader_loads_initial_and_rewritten_files", run: func(t *testing.T) {
			fx := newCertFiles(t)
			initial, err := os.ReadFile(fx.certPath)
			require.NoError(t, err)
			var (
				mu      sync.Mutex
				reloads []error
			)
			r := fx.source(t, func(err error) {
				mu.Lock()
				defer mu.Unlock()
				reloads = append(reloads, err)
			})
			got := func() []error {
				mu.Lock()
				defer mu.Unlock()
				return slices.Clone(reloads)
			}
			addr := serveTLS(t, fullHandler(t), r)
			assert.Contains(t, string(initial), "CERTIFICATE")
			first := fx.servedLeaf(t, addr)

			// Unchanged files: no reload.
			assert.Equal(t, first, fx.servedLeaf(t, addr))
			assert.Empty(t, got())

			// Certificate rewritten, key not yet: the old pair stays.
			next := newTestCert(t, 3)
			fx.pool.AddCert(next.cert)
			fx.replace(t, fx.certPath, next.certPEM)
			assert.Equal(t, first, fx.servedLeaf(t, addr))
			require.Len(t, got(), 1)
			require.Error(t, got()[0])

			// Key written: the new pair is served.
			fx.replace(t, fx.keyPath, next.keyPEM)
			assert.Equal(t, next.cert.Raw, fx.servedLeaf(t, addr))
			require.Len(t, got(), 2)
			require.NoError(t, got()[1])

			// A missing file: reported, old pair kept.
			require.NoError(t, os.Remove(fx.keyPath))
			assert.Equal(t, next.cert.Raw, fx.servedLeaf(t, addr))
			require.Len(t, got(), 3)
			assert.True(t, errors.Is(got()[2], fs.ErrNotExist))
			assert.ErrorIs(t, r.Reload(), fs.ErrNotExist)
			cur, err := r.Current()
			require.NoError(t, err)
			assert.Equal(t, next.cert.Raw, cur.Certificate.Certificate[0])
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, tt.run)
	}
}

// serve posts body to the handler in process and decodes the response.
func serve(t testing.TB, h http.Handler, path string, body []byte) *admissionv1.AdmissionResponse {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code)
	review := decodeReview(t, rec.Body.Bytes())
	return review.Response
}

func decodeReview(t testing.TB, b []byte) *admissionv1.AdmissionReview {
	t.Helper()
	var review admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(b, &review))
	require.NotNil(t, review.Response)
	return &review
}
