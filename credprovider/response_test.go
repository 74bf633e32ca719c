package credprovider_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/credprovider"
	"github.com/ksa-go/ksa/tokens"
)

func TestRespond(t *testing.T) {
	iss := newIssuer(t, t0)
	hour := iss.mint(t, "puller", "web-1", testAudience, time.Hour)
	now := func() time.Time { return t0.Add(10 * time.Minute) }
	tests := []struct {
		name     string
		req      credprovider.Request
		cred     credprovider.Credential
		cache    credprovider.Cache
		want     time.Duration
		wantType credprovider.CacheKeyType
		wantErr  error
	}{
		{name: "zero cache: not cached", req: credprovider.Request{Image: "r.example/a"},
			cred: credprovider.Credential{Password: "p"}, want: 0, wantType: credprovider.CacheImage},
		{name: "no expiry, no token: as asked", req: credprovider.Request{Image: "r.example/a"},
			cred: credprovider.Credential{Password: "p"}, cache: credprovider.Cache{For: 5 * time.Hour, KeyType: credprovider.CacheRegistry},
			want: 5 * time.Hour, wantType: credprovider.CacheRegistry},
		{name: "credential expiry shortens", req: credprovider.Request{Image: "r.example/a"},
			cred:  credprovider.Credential{Password: "p", Expiry: t0.Add(40*time.Minute + 500*time.Millisecond)},
			cache: credprovider.Cache{For: 5 * time.Hour}, want: 30 * time.Minute, wantType: credprovider.CacheImage},
		{name: "token expiry shortens a longer credential", req: credprovider.Request{Image: "r.example/a", ServiceAccountToken: hour},
			cred:  credprovider.Credential{Password: "p", Expiry: t0.Add(12 * time.Hour)},
			cache: credprovider.Cache{For: 5 * time.Hour}, want: 50 * time.Minute, wantType: credprovider.CacheImage},
		{name: "token expiry shortens an unknown one", req: credprovider.Request{Image: "r.example/a", ServiceAccountToken: hour},
			cred:  credprovider.Credential{Password: "p"},
			cache: credprovider.Cache{For: 5 * time.Hour, KeyType: credprovider.CacheGlobal}, want: 50 * time.Minute, wantType: credprovider.CacheGlobal},
		{name: "expired credential", req: credprovider.Request{Image: "r.example/a"},
			cred: credprovider.Credential{Password: "p", Expiry: t0}, wantErr: credprovider.ErrInvalidResponse},
		{name: "expiry now", req: credprovider.Request{Image: "r.example/a"},
			cred: credprovider.Credential{Password: "p", Expiry: now()}, wantErr: credprovider.ErrInvalidResponse},
		{name: "no password", req: credprovider.Request{Image: "r.example/a"}, wantErr: credprovider.ErrInvalidResponse},
		{name: "no image", cred: credprovider.Credential{Password: "p"}, wantErr: credprovider.ErrInvalidResponse},
		{name: "unknown key type", req: credprovider.Request{Image: "r.example/a"}, cred: credprovider.Credential{Password: "p"},
			cache: credprovider.Cache{KeyType: "Pod"}, wantErr: credprovider.ErrInvalidResponse},
		{name: "negative duration", req: credprovider.Request{Image: "r.example/a"}, cred: credprovider.Credential{Password: "p"},
			cache: credprovider.Cache{For: -time.Second}, wantErr: credprovider.ErrInvalidResponse},
		{name: "token not a JWT", req: credprovider.Request{Image: "r.example/a", ServiceAccountToken: "opaque"},
			cred: credprovider.Credential{Password: "p"}, wantErr: tokens.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := credprovider.Respond(&tt.req, tt.cred, tt.cache, now)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				require.ErrorIs(t, err, credprovider.ErrInvalidResponse)
				assert.NotContains(t, err.Error(), "p\"")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, resp.CacheDuration)
			assert.Equal(t, tt.wantType, resp.CacheKeyType)
			assert.Equal(t, map[string]credprovider.AuthConfig{"r.example": {Username: tt.cred.Username, Password: "p"}}, resp.Auth)
		})
	}
}

// TestRespondWarnAfter: a token kube-apiserver extended to a year is cached
// only until its warnafter time, when the kubelet would have replaced it.
func TestRespondWarnAfter(t *testing.T) {
	iss := newIssuer(t, t0)
	claims := &tokens.Claims{
		Issuer: testIssuer, Subject: "system:serviceaccount:team:puller", Audience: []string{testAudience},
		IssuedAt: t0, NotBefore: t0, Expiry: t0.Add(365 * 24 * time.Hour),
		Kubernetes: &tokens.KubernetesClaims{Namespace: "team", ServiceAccount: ksa.ObjectRef{Name: "puller", UID: "u"},
			Pod: &ksa.ObjectRef{Name: "p", UID: "pu"}, WarnAfter: t0.Add(time.Hour)},
	}
	tok, err := iss.minter.Sign(context.Background(), claims)
	require.NoError(t, err)
	resp, err := credprovider.PassThrough(&credprovider.Request{Image: "r.example/a", ServiceAccountToken: tok}, "sa",
		credprovider.Cache{For: 24 * time.Hour}, func() time.Time { return t0 })
	require.NoError(t, err)
	assert.Equal(t, time.Hour, resp.CacheDuration)
}

func TestPassThrough(t *testing.T) {
	iss := newIssuer(t, t0)
	tok := iss.mint(t, "puller", "web-1", testAudience, time.Hour)
	resp, err := credprovider.PassThrough(&credprovider.Request{Image: "r.example:5000/team/app:v1", ServiceAccountToken: tok}, "ksa",
		credprovider.Cache{For: 2 * time.Hour}, func() time.Time { return t0 })
	require.NoError(t, err)
	assert.Equal(t, time.Hour, resp.CacheDuration)
	assert.Equal(t, map[string]credprovider.AuthConfig{"r.example:5000": {Username: "ksa", Password: tok}}, resp.Auth)

	_, err = credprovider.PassThrough(&credprovider.Request{Image: "r.example/a"}, "ksa", credprovider.Cache{}, nil)
	require.ErrorIs(t, err, credprovider.ErrNoToken)
}

func TestResponseEncode(t *testing.T) {
	var buf bytes.Buffer
	resp := &credprovider.Response{CacheKeyType: credprovider.CacheRegistry, CacheDuration: 90 * time.Second,
		Auth: map[string]credprovider.AuthConfig{"r.example": {Username: "u", Password: "<p>"}}}
	require.NoError(t, resp.Encode(&buf))
	assert.Equal(t, `{"apiVersion":"credentialprovider.kubelet.k8s.io/v1","kind":"CredentialProviderResponse","cacheKeyType":"Registry","cacheDuration":"1m30s","auth":{"r.example":{"username":"u","password":"\u003cp\u003e"}}}`+"\n", buf.String())

	buf.Reset()
	require.NoError(t, (&credprovider.Response{CacheKeyType: credprovider.CacheImage}).Encode(&buf))
	assert.Contains(t, buf.String(), `"cacheDuration":"0s"`, "a zero duration is written: the kubelet then does not cache")

	for _, bad := range []*credprovider.Response{nil, {}, {CacheKeyType: credprovider.CacheImage, CacheDuration: -1}} {
		buf.Reset()
		require.ErrorIs(t, bad.Encode(&buf), credprovider.ErrInvalidResponse)
		assert.Zero(t, buf.Len())
	}
}

func TestRegistry(t *testing.T) {
	for in, want := range map[string]string{
		"r.example/a:v1": "r.example", "r.example:5000/t/a@sha256:00": "r.example:5000", "nginx": "nginx",
	} {
		assert.Equal(t, want, credprovider.Registry(in), in)
	}
}
