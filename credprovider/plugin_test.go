package credprovider_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/credprovider"
)

func TestRun(t *testing.T) {
	iss := newIssuer(t, t0)
	tok := iss.mint(t, "puller", "web-1", testAudience, time.Hour)
	passThrough := credprovider.ProviderFunc(func(ctx context.Context, req *credprovider.Request) (*credprovider.Response, error) {
		if _, err := credprovider.CheckToken(ctx, req, credprovider.TokenCheck{Verify: iss.validator.ValidateFor, Audience: testAudience}); err != nil {
			return nil, err
		}
		return credprovider.PassThrough(req, "ksa", credprovider.Cache{For: time.Hour}, func() time.Time { return t0 })
	})
	exchangeFailed := errors.New("exchange failed")
	tests := []struct {
		name     string
		in       string
		provider credprovider.Provider
		want     string
		wantErr  []error
	}{
		{name: "pass-through", in: head + `"image":"r.example/a","serviceAccountToken":"` + tok + `"}`, provider: passThrough,
			want: `{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderResponse","cacheKeyType":"Image","cacheDuration":"1h0m0s","auth":{"r.example":{"username":"ksa","password":"` + tok + `"}}}` + "\n"},
		{name: "malformed", in: `{}`, provider: passThrough, wantErr: []error{credprovider.ErrMalformedRequest}},
		{name: "no token", in: head + `"image":"r.example/a"}`, provider: passThrough, wantErr: []error{credprovider.ErrNoToken}},
		{name: "provider error", in: head + `"image":"r.example/a"}`, wantErr: []error{exchangeFailed},
			provider: credprovider.ProviderFunc(func(context.Context, *credprovider.Request) (*credprovider.Response, error) {
				return nil, exchangeFailed
			})},
		{name: "nil response", in: head + `"image":"r.example/a"}`, wantErr: []error{credprovider.ErrInvalidResponse},
			provider: credprovider.ProviderFunc(func(context.Context, *credprovider.Request) (*credprovider.Response, error) {
				return nil, nil
			})},
		{name: "response the kubelet would refuse", in: head + `"image":"r.example/a"}`, wantErr: []error{credprovider.ErrInvalidResponse},
			provider: credprovider.ProviderFunc(func(context.Context, *credprovider.Request) (*credprovider.Response, error) {
				return &credprovider.Response{CacheKeyType: "Pod"}, nil
			})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := credprovider.Run(t.Context(), strings.NewReader(tt.in), &out, tt.provider)
			if tt.wantErr != nil {
				for _, want := range tt.wantErr {
					require.ErrorIs(t, err, want)
				}
				assert.Zero(t, out.Len(), "nothing on stdout after a failure")
				assert.NotContains(t, err.Error(), tok)
				assert.LessOrEqual(t, strings.Count(err.Error(), "credprovider:"), 1, err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, out.String())
		})
	}
}
