package credspec_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/credspec"
)

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
