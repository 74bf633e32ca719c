package oidc_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testclock"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/oidc/oidctest"
	"github.com/ksa-go/ksa/tokens"
)

var rpSA = ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "u-1"}

// clock is a manual clock shared by the issuer, the key set and validation.
type clock = testclock.Clock

func newVerifier(t *testing.T, clk *clock, srvs ...*oidctest.Server) *oidc.Verifier {
	t.Helper()
	var issuers []string
	for _, s := range srvs {
		issuers = append(issuers, s.Issuer())
	}
	v, err := oidc.NewVerifier(t.Context(), oidc.VerifierConfig{
		Issuers:   issuers,
		Client:    srvs[0].Client(),
		Audiences: []string{"vault"}, Now: clk.Now,
	})
	require.NoError(t, err)
	return v
}

func TestVerifier(t *testing.T) {
	clk := testclock.New(time.Unix(1700000000, 0))
	srv := oidctest.Start(t, oidctest.Config{Now: clk.Now})
	v := newVerifier(t, clk, srv)
	raw := mint(t, srv, tokens.Request{ServiceAccount: rpSA, Audiences: []string{"vault"},
		BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "p", UID: "pu"}})

	res, err := v.Verify(t.Context(), raw)
	require.NoError(t, err)
	assert.Equal(t, rpSA, res.Identity.ServiceAccount)
	assert.Equal(t, srv.Issuer(), res.Issuer)

	// The same result as static validation with the same key.
	static, err := tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{srv.Issuer()}, Keys: mustSource(t, srv.Keys()),
		Audiences: []string{"vault"}, SkipObjectCheck: true, Now: clk.Now})
	require.NoError(t, err)
	want, err := static.Validate(t.Context(), raw)
	require.NoError(t, err)
	assert.Equal(t, want, res)

	_, err = v.VerifyFor(t.Context(), raw, []string{"other"})
	require.ErrorIs(t, err, tokens.ErrAudienceMismatch)
	assert.Equal(t, srv.Issuer(), v.Provider(srv.Issuer()).Issuer)
	assert.Equal(t, 1, v.KeySet(srv.Issuer()).Stats().Keys)
}

func mustSource(t *testing.T, keys []jwks.Key) *jwks.StaticSource {
	t.Helper()
	s, err := jwks.NewStaticSource(keys...)
	require.NoError(t, err)
	return s
}

// TestVerifierRotation: a token signed with a new key is verified after one
// refetch triggered by its unknown kid.
func TestVerifierRotation(t *testing.T) {
	clk := testclock.New(time.Unix(1700000000, 0))
	srv := oidctest.Start(t, oidctest.Config{Now: clk.Now})
	v := newVerifier(t, clk, srv)
	req := tokens.Request{ServiceAccount: rpSA, Audiences: []string{"vault"}}
	_, err := v.Verify(t.Context(), mint(t, srv, req))
	require.NoError(t, err)
	_, before := srv.Requests()

	rotate(t, srv, nil, false)
	_, err = v.Verify(t.Context(), mint(t, srv, req))
	require.NoError(t, err)
	_, after := srv.Requests()
	assert.Equal(t, before+1, after)
}

// TestVerifierIssuerBinding: the key of issuer A never verifies a token that
// claims issuer B.
func TestVerifierIssuerBinding(t *testing.T) {
	clk := testclock.New(time.Unix(1700000000, 0))
	keyA := testkeys.Generated("p256")
	a := oidctest.Start(t, oidctest.Config{Path: "/a", Now: clk.Now, Signer: keyA})
	b := oidctest.Start(t, oidctest.Config{Path: "/b", Now: clk.Now})
	// Both issuers on one TLS client: use a's, trusting each server's own
	// certificate is not needed since httptest servers share the test CA.
	v := newVerifier(t, clk, a, b)
	req := tokens.Request{ServiceAccount: rpSA, Audiences: []string{"vault"}}
	_, err := v.Verify(t.Context(), mint(t, a, req))
	require.NoError(t, err)
	_, err = v.Verify(t.Context(), mint(t, b, req))
	require.NoError(t, err)

	forger, err := tokens.NewMinter(tokens.MinterConfig{Issuer: b.Issuer(), Signer: keyA, Now: clk.Now})
	require.NoError(t, err)
	forged, err := forger.Mint(t.Context(), req)
	require.NoError(t, err)
	_, err = v.Verify(t.Context(), forged.Raw)
	require.ErrorIs(t, err, tokens.ErrUnknownKeyID)
}

// TestVerifierRateLimitsUnknownKids: a flood of tokens with unknown kids
// costs at most the burst of fetches, then one per interval.
func TestVerifierRateLimitsUnknownKids(t *testing.T) {
	clk := testclock.New(time.Unix(1700000000, 0))
	srv := oidctest.Start(t, oidctest.Config{Now: clk.Now})
	v := newVerifier(t, clk, srv)
	req := tokens.Request{ServiceAccount: rpSA, Audiences: []string{"vault"}}
	_, err := v.Verify(t.Context(), mint(t, srv, req))
	require.NoError(t, err) // the first fetch takes one token of the burst

	forger, err := tokens.NewMinter(tokens.MinterConfig{Issuer: srv.Issuer(), Signer: testkeys.Generated("p256-stranger"), Now: clk.Now})
	require.NoError(t, err)
	forged, err := forger.Mint(t.Context(), req)
	require.NoError(t, err)
	for i := 0; i < 20; i++ {
		_, err := v.Verify(t.Context(), forged.Raw)
		require.ErrorIs(t, err, tokens.ErrUnknownKeyID)
	}
	_, fetches := srv.Requests()
	assert.Equal(t, int64(jwks.DefaultRefetchBurst), fetches, "the burst, then nothing")
	// The refusal says the key set may not be fetched again yet, and when
	// it may; it stays an unknown kid (for metrics and logs).
	_, err = v.Verify(t.Context(), forged.Raw)
	require.ErrorIs(t, err, jwks.ErrRateLimited)
	var limited *jwks.RateLimitError
	require.ErrorAs(t, err, &limited)
	assert.Equal(t, clk.Now().Add(jwks.DefaultRefetchInterval), limited.Next)
	strangerKid, kidErr := jwks.KeyID(testkeys.Generated("p256-stranger"))
	require.NoError(t, kidErr)
	assert.Equal(t, strangerKid, limited.KeyID)
	assert.Equal(t, tokens.ErrUnknownKeyID, tokens.Reason(err))
	assert.NotErrorIs(t, err, tokens.ErrKeySource)

	clk.Advance(jwks.DefaultRefetchInterval)
	for i := 0; i < 5; i++ {
		_, err := v.Verify(t.Context(), forged.Raw)
		require.ErrorIs(t, err, tokens.ErrUnknownKeyID)
	}
	_, fetches = srv.Requests()
	assert.Equal(t, int64(jwks.DefaultRefetchBurst+1), fetches, "one more per interval")

	// Known keys keep verifying without fetches.
	_, err = v.Verify(t.Context(), mint(t, srv, req))
	require.NoError(t, err)
	_, again := srv.Requests()
	assert.Equal(t, fetches, again)
}

// TestVerifierMergesConcurrentMisses: many goroutines meeting a new kid at
// once cause one fetch.
func TestVerifierMergesConcurrentMisses(t *testing.T) {
	clk := testclock.New(time.Unix(1700000000, 0))
	srv := oidctest.Start(t, oidctest.Config{Now: clk.Now})
	v := newVerifier(t, clk, srv)
	req := tokens.Request{ServiceAccount: rpSA, Audiences: []string{"vault"}}
	_, err := v.Verify(t.Context(), mint(t, srv, req))
	require.NoError(t, err)

	rotate(t, srv, nil, true)
	raw := mint(t, srv, req)
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := v.Verify(t.Context(), raw)
			assert.NoError(t, err)
		}()
	}
	wg.Wait()
	_, fetches := srv.Requests()
	// One initial fetch, then the rotation's misses: merged into as few
	// fetches as the burst allows, never one per goroutine.
	assert.LessOrEqual(t, fetches, int64(jwks.DefaultRefetchBurst))
}

// TestVerifierKeepsKeysWhenIssuerFails: a failing issuer does not take down
// verification with the keys already held; a first failure is retried.
func TestVerifierKeepsKeysWhenIssuerFails(t *testing.T) {
	clk := testclock.New(time.Unix(1700000000, 0))
	srv := oidctest.Start(t, oidctest.Config{Now: clk.Now})
	events := make(chan jwks.FetchEvent, 10)
	v, err := oidc.NewVerifier(t.Context(), oidc.VerifierConfig{
		Issuers:   []string{srv.Issuer()},
		Client:    srv.Client(),
		OnFetch:   func(ev jwks.FetchEvent) { events <- ev },
		Audiences: []string{"vault"}, Now: clk.Now,
	})
	require.NoError(t, err)
	req := tokens.Request{ServiceAccount: rpSA, Audiences: []string{"vault"}}

	// First fetch fails: a typed key-source error carrying the fetch error.
	srv.SetFailing(true)
	raw := mint(t, srv, req)
	_, err = v.Verify(t.Context(), raw)
	require.ErrorIs(t, err, tokens.ErrKeySource)
	require.ErrorIs(t, err, jwks.ErrFetch)
	var ferr *jwks.FetchError
	require.ErrorAs(t, err, &ferr)
	assert.Equal(t, 500, ferr.Status)
	assert.Error(t, (<-events).Err)

	// Recovered: the next call retries.
	srv.SetFailing(false)
	_, err = v.Verify(t.Context(), raw)
	require.NoError(t, err)
	assert.NoError(t, (<-events).Err)

	// Failing again after the keys expire: the old keys keep working at
	// once, while the refresh fails in the background.
	srv.SetFailing(true)
	clk.Advance(2 * time.Hour)
	raw = mint(t, srv, req)
	_, err = v.Verify(t.Context(), raw)
	require.NoError(t, err)
	ev := <-events
	assert.Equal(t, jwks.FetchExpired, ev.Reason)
	require.ErrorIs(t, ev.Err, jwks.ErrFetch)
	stats := v.KeySet(srv.Issuer()).Stats()
	assert.Equal(t, int64(2), stats.Failures)
	assert.Equal(t, 1, stats.Keys)
	require.ErrorIs(t, stats.LastError, jwks.ErrFetch)
}

// TestNewVerifierErrors: discovery failures and bad configuration.
func TestNewVerifierErrors(t *testing.T) {
	srv := oidctest.Start(t, oidctest.Config{})
	tests := []struct {
		name    string
		cfg     oidc.VerifierConfig
		wantErr error
		// wantField is the field a *ksa.ConfigError names.
		wantField string
	}{
		{name: "no issuers", cfg: oidc.VerifierConfig{Audiences: []string{"a"}}, wantErr: ksa.ErrInvalidConfig},
		{name: "issuer mismatch", cfg: oidc.VerifierConfig{Issuers: []string{srv.Issuer() + "/"}, Client: srv.Client(),
			Audiences: []string{"a"}}, wantErr: oidc.ErrIssuerMismatch},
		{name: "duplicate issuer", cfg: oidc.VerifierConfig{Issuers: []string{srv.Issuer(), srv.Issuer()}, Client: srv.Client(),
			Audiences: []string{"a"}}, wantErr: ksa.ErrInvalidConfig},
		{name: "no audiences", cfg: oidc.VerifierConfig{Issuers: []string{srv.Issuer()}, Client: srv.Client()}, wantErr: ksa.ErrInvalidConfig},
		{name: "empty audience", cfg: oidc.VerifierConfig{Issuers: []string{srv.Issuer()}, Client: srv.Client(), Audiences: []string{""}}, wantErr: ksa.ErrInvalidConfig},
		{name: "negative leeway", cfg: oidc.VerifierConfig{Issuers: []string{srv.Issuer()}, Client: srv.Client(), Audiences: []string{"a"}, Leeway: -2},
			wantErr: ksa.ErrInvalidConfig, wantField: "tokens.ValidatorConfig.Leeway"},
		{name: "negative timeout", cfg: oidc.VerifierConfig{Issuers: []string{srv.Issuer()}, Client: srv.Client(), Audiences: []string{"a"}, MaxStale: -1},
			wantErr: ksa.ErrInvalidConfig, wantField: "jwks.RemoteConfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := oidc.NewVerifier(t.Context(), tt.cfg)
			require.ErrorIs(t, err, tt.wantErr)
			if tt.wantField != "" {
				var ce *ksa.ConfigError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, tt.wantField, ce.Field)
			}
		})
	}
}

// TestVerifierBearerStaysWithTheIssuer: the discovery bearer token reaches a
// jwks_uri on the issuer's own host, never one on another host unless
// KeySetBearerToken says so.
func TestVerifierBearerStaysWithTheIssuer(t *testing.T) {
	const secret = "pod-token"
	bearer := func(context.Context) (string, error) { return secret, nil }

	// Same host: oidctest demands the token on every path.
	same := oidctest.Start(t, oidctest.Config{BearerToken: secret})
	v, err := oidc.NewVerifier(t.Context(), oidc.VerifierConfig{
		Issuers: []string{same.Issuer()}, Client: same.Client(), BearerToken: bearer,
		Audiences: []string{"vault"},
	})
	require.NoError(t, err)
	_, err = v.Verify(t.Context(), mint(t, same, tokens.Request{ServiceAccount: rpSA, Audiences: []string{"vault"}}))
	require.NoError(t, err)

	// Another host for the keys: it sees no credentials by default.
	var seen []string
	keys := oidctest.Start(t, oidctest.Config{})
	keyHost := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
		_, _ = w.Write(keys.Documents().JWKS)
	}))
	t.Cleanup(keyHost.Close)
	var issuer string
	disc := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"issuer":"` + issuer + `","jwks_uri":"` + keyHost.URL + `/keys"}`))
	}))
	t.Cleanup(disc.Close)
	issuer = disc.URL
	for _, explicit := range []bool{false, true} {
		cfg := oidc.VerifierConfig{
			Issuers: []string{issuer}, Client: disc.Client(), BearerToken: bearer,
			Audiences: []string{"vault"},
		}
		if explicit {
			cfg.KeySetBearerToken = bearer
		}
		v, err := oidc.NewVerifier(t.Context(), cfg)
		require.NoError(t, err)
		require.NoError(t, v.KeySet(issuer).Refresh(t.Context()))
	}
	assert.Equal(t, []string{"", "Bearer " + secret}, seen)
}
