package credspec_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/ksa-go/ksa/credspec"
)

// referenceCompare is windows-gmsa's compareCredSpecContents, the oracle
// Equal is held to.
func referenceCompare(pod, crd string) (bool, error) {
	if pod == crd {
		return true, nil
	}
	var a, b map[string]any
	if err := json.Unmarshal([]byte(pod), &a); err != nil {
		return false, err
	}
	if err := json.Unmarshal([]byte(crd), &b); err != nil {
		return false, err
	}
	return reflect.DeepEqual(a, b), nil
}

func FuzzEqual(f *testing.F) {
	f.Add(dummyCredSpecContents, reformattedContents)
	f.Add(expectedCredSpec0, expectedCredSpecWithHostAccountConfig)
	f.Add(`{"a":1}`, `{"a":1.0}`)
	f.Add(`{"a":-0}`, `{"a":0}`)
	f.Add(`{"n":123456789012345678}`, `{"n":123456789012345679}`)
	f.Add(`{"B":"zzz","B":"v"}`, `{"B":"v"}`)
	f.Add(`{"p":"\u003cpw\u003e"}`, `{"p":"<pw>"}`)
	f.Add("{\"\xff\":1}", "{\"\xfe\":1}")
	f.Add(`null`, `{}`)
	f.Add(`[]`, `{}`)
	f.Add(`{"a":1e400}`, `{}`)
	f.Add(`{} x`, `{}`)
	f.Add(``, ``)
	f.Fuzz(func(t *testing.T, a, b string) {
		eq, err := credspec.Equal(a, b)
		if len(a) > credspec.MaxSize || len(b) > credspec.MaxSize {
			require.ErrorIs(t, err, credspec.ErrTooLarge)
			return
		}
		want, wantErr := referenceCompare(a, b)
		if wantErr != nil {
			require.ErrorIs(t, err, credspec.ErrInvalidSpec)
			assert.True(t, strings.HasSuffix(err.Error(), ": "+wantErr.Error()), "encoding/json's error is the cause: %v", err)
			return
		}
		require.NoError(t, err)
		require.Equal(t, want, eq)
		rev, err := credspec.Equal(b, a)
		require.NoError(t, err)
		require.Equal(t, eq, rev, "symmetric")

		ca, errA := credspec.Canonical(a)
		if errA != nil {
			require.True(t, errors.Is(errA, credspec.ErrTooLarge) || errors.Is(errA, credspec.ErrInvalidSpec), errA)
			return
		}
		again, err := credspec.Canonical(ca)
		require.NoError(t, err)
		require.Equal(t, ca, again, "idempotent")
		same, err := credspec.Equal(a, ca)
		require.NoError(t, err)
		require.True(t, same, "a value equals its canonical form: %q vs %q", a, ca)
		if cb, err := credspec.Canonical(b); err == nil && ca == cb {
			require.True(t, eq, "equal canonical forms imply Equal")
		}
	})
}

// FuzzHandler feeds arbitrary bodies to /mutate and /validate: the answer is
// always HTTP 200 with an AdmissionReview, and a body that is not one gets a
// 400 denial.
func FuzzHandler(f *testing.F) {
	h := fullHandler(f)
	pod := podWithPodLevelName()
	withContents := podWithPodLevelName()
	withContents.Spec.SecurityContext.WindowsOptions.GMSACredentialSpec = new(dummyCredSpecContents)
	for _, mutate := range []bool{true, false} {
		f.Add(reviewRequest(f, admissionv1.Create, "Pod", pod, nil), mutate)
		f.Add(reviewRequest(f, admissionv1.Create, "Pod", withContents, nil), mutate)
		f.Add(reviewRequest(f, admissionv1.Update, "Pod", withContents, pod), mutate)
		f.Add(reviewRequest(f, admissionv1.Delete, "Pod", pod, nil), mutate)
		f.Add(reviewRequest(f, admissionv1.Create, "Deployment", pod, nil), mutate)
		f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"kind":{"version":"v1","kind":"Pod"},"operation":"CREATE","object":{"spec":{"securityContext":{"windowsOptions":{"gmsaCredentialSpecName":""}}}}}}`), mutate)
		f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"kind":{"version":"v1","kind":"Pod"},"operation":"UPDATE","object":{},"oldObject":null}}`), mutate)
		f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"}`), mutate)
		f.Add([]byte(`{`), mutate)
		f.Add([]byte(`null`), mutate)
		f.Add([]byte{}, mutate)
	}
	f.Fuzz(func(t *testing.T, body []byte, mutate bool) {
		path := credspec.ValidatePath
		if mutate {
			path = credspec.MutatePath
		}
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code)
		var review admissionv1.AdmissionReview
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &review))
		resp := review.Response
		require.NotNil(t, resp)
		var in admissionv1.AdmissionReview
		if json.Unmarshal(body, &in) != nil || in.Request == nil {
			require.False(t, resp.Allowed)
			require.Equal(t, int32(http.StatusBadRequest), resp.Result.Code)
			return
		}
		require.Equal(t, in.Request.UID, resp.UID)
		if in.Kind != "AdmissionReview" || (in.APIVersion != "admission.k8s.io/v1" && in.APIVersion != "admission.k8s.io/v1beta1") {
			require.False(t, resp.Allowed)
			require.Equal(t, int32(http.StatusBadRequest), resp.Result.Code)
			return
		}
		require.Equal(t, in.APIVersion, review.APIVersion)
		if !resp.Allowed {
			require.NotNil(t, resp.Result)
			require.True(t, slices.Contains([]int32{400, 403, 404, 417, 422, 500}, resp.Result.Code), resp.Result.Code)
			require.Nil(t, resp.Patch)
			return
		}
		if resp.Patch != nil {
			require.True(t, mutate)
			var patch credspec.Patch
			require.NoError(t, json.Unmarshal(resp.Patch, &patch))
			require.NotEmpty(t, patch)
		}
	})
}

// FuzzParseCredentialSpec: any input is refused with an error matching one
// of the package's sentinels, or read into a spec that holds every member
// New-CredentialSpec writes and that reads back the same; no error quotes
// more than a member name of the input.
func FuzzParseCredentialSpec(f *testing.F) {
	f.Add([]byte(completeSpec))
	f.Add([]byte("\xef\xbb\xbf" + completeSpec))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"CmsPlugins":["a"],"cmsplugins":["b"]}`))
	f.Add([]byte(`eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.eyJzdWIiOiJ4In0.c2ln`))
	f.Add([]byte(`[1,2,3]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := credspec.ParseCredentialSpec(data)
		if err != nil {
			require.True(t, errors.Is(err, credspec.ErrInvalidSpec) || errors.Is(err, credspec.ErrAmbiguousSpec) || errors.Is(err, credspec.ErrTooLarge), "%v", err)
			if len(data) > 80 {
				assert.NotContains(t, err.Error(), string(data[:80]), "the error quotes the input")
			}
			return
		}
		out, err := json.Marshal(spec)
		require.NoError(t, err)
		again, err := credspec.ParseCredentialSpec(out)
		require.NoError(t, err, "%s", out)
		assert.Equal(t, spec, again)
	})
}

// TestParseCredentialSpecNeverQuotesInput: a token or a long line given
// by mistake stays out of the error.
func TestParseCredentialSpecNeverQuotesInput(t *testing.T) {
	token := "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.eyJpc3MiOiJodHRwczovL3giLCJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6YTpiIn0.c2lnbmF0dXJl"
	for _, in := range []string{token, `{"a":"` + token + `"}`, strings.Repeat("x", 60<<10), `{"CmsPlugins":"` + token + `"}`} {
		_, err := credspec.ParseCredentialSpec([]byte(in))
		require.Error(t, err)
		assert.NotContains(t, err.Error(), token[:40])
		assert.Less(t, len(err.Error()), 300, err.Error())
	}
}
