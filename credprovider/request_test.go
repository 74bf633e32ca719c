package credprovider_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/credprovider"
)

const head = `{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1",`

func TestParseRequest(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    *credprovider.Request
		wantErr error
	}{
		{name: "image only", in: head + `"image":"registry.example/app:v1"}`,
			want: &credprovider.Request{Image: "registry.example/app:v1"}},
		{name: "token and annotations", in: head + `"image":"r.example/a","serviceAccountToken":"tok","serviceAccountAnnotations":{"example.com/role":"puller","b":""}}`,
			want: &credprovider.Request{Image: "r.example/a", ServiceAccountToken: "tok", ServiceAccountAnnotations: map[string]string{"example.com/role": "puller", "b": ""}}},
		{name: "null annotations", in: head + `"image":"r.example/a","serviceAccountAnnotations":null}`,
			want: &credprovider.Request{Image: "r.example/a"}},
		{name: "members in any order", in: `{"image":"r.example/a","apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderRequest"}`,
			want: &credprovider.Request{Image: "r.example/a"}},
		{name: "v1beta1", in: `{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1beta1","image":"a"}`, wantErr: credprovider.ErrMalformedRequest},
		{name: "no apiVersion", in: `{"kind":"CredentialProviderRequest","image":"a"}`, wantErr: credprovider.ErrMalformedRequest},
		{name: "response kind", in: `{"kind":"CredentialProviderResponse","apiVersion":"credentialprovider.kubelet.k8s.io/v1","image":"a"}`, wantErr: credprovider.ErrMalformedRequest},
		{name: "no image", in: head + `"serviceAccountToken":"t"}`, wantErr: credprovider.ErrMalformedRequest},
		{name: "unknown member", in: head + `"image":"a","auth":{}}`, wantErr: credprovider.ErrMalformedRequest},
		{name: "case variant", in: head + `"Image":"a"}`, wantErr: credprovider.ErrMalformedRequest},
		{name: "duplicate member", in: head + `"image":"a","image":"b"}`, wantErr: credprovider.ErrMalformedRequest},
		{name: "duplicate annotation", in: head + `"image":"a","serviceAccountAnnotations":{"k":"1","k":"2"}}`, wantErr: credprovider.ErrMalformedRequest},
		{name: "annotation not a string", in: head + `"image":"a","serviceAccountAnnotations":{"k":1}}`, wantErr: credprovider.ErrMalformedRequest},
		{name: "nested annotations", in: head + `"image":"a","serviceAccountAnnotations":{"k":{"x":"y"}}}`, wantErr: credprovider.ErrMalformedRequest},
		{name: "token not a string", in: head + `"image":"a","serviceAccountToken":7}`, wantErr: credprovider.ErrMalformedRequest},
		{name: "trailing data", in: head + `"image":"a"}{}`, wantErr: credprovider.ErrMalformedRequest},
		{name: "empty", in: ``, wantErr: credprovider.ErrMalformedRequest},
		{name: "array", in: `[]`, wantErr: credprovider.ErrMalformedRequest},
		{name: "invalid UTF-8", in: head + "\"image\":\"a\xff\"}", wantErr: credprovider.ErrMalformedRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := credprovider.ParseRequest([]byte(tt.in))
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, got)
				assert.Equal(t, 1, strings.Count(err.Error(), "credprovider:"), err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestDecodeRequestSizeLimit holds DecodeRequest to MaxRequestBytes at the
// boundary: a request of exactly the limit is read, one byte more is
// refused.
func TestDecodeRequestSizeLimit(t *testing.T) {
	build := func(size int) []byte {
		pre := head + `"image":"a","serviceAccountToken":"`
		post := `"}`
		return []byte(pre + strings.Repeat("x", size-len(pre)-len(post)) + post)
	}
	at := build(credprovider.MaxRequestBytes)
	require.Len(t, at, credprovider.MaxRequestBytes)
	req, err := credprovider.DecodeRequest(bytes.NewReader(at))
	require.NoError(t, err)
	assert.Len(t, req.ServiceAccountToken, credprovider.MaxRequestBytes-len(head)-len(`"image":"a","serviceAccountToken":""}`))

	_, err = credprovider.DecodeRequest(bytes.NewReader(build(credprovider.MaxRequestBytes + 1)))
	require.ErrorIs(t, err, credprovider.ErrRequestTooLarge)
	assert.Equal(t, 2<<20, credprovider.MaxRequestBytes, "the documented limit")
}

func TestDecodeRequestReadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := credprovider.DecodeRequest(iotest.ErrReader(boom))
	require.ErrorIs(t, err, boom)
}
