package tokens_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// TestOnValidate: every validation, valid or refused, cached or not,
// reaches the hook with what it found.
func TestOnValidate(t *testing.T) {
	key := testkeys.K8sEC()
	m := mustMinter(t, key, func(c *tokens.MinterConfig) { c.ExtendExpiration = true })
	extended, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: testSA, ExpirationSeconds: tokens.WarnOnlyExpirationSeconds,
		BoundObject: &tokens.BoundObject{Kind: tokens.BoundPod, Name: "p", UID: "pu"}})
	require.NoError(t, err)
	plain, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: testSA, Audiences: []string{testAudience}})
	require.NoError(t, err)

	var mu sync.Mutex
	var events []tokens.ValidationEvent
	clk := k8sNow
	v := mustValidator(t, mustSource(t, key.Public()), func(c *tokens.ValidatorConfig) {
		c.Cache = &tokens.CacheConfig{}
		c.Now = func() time.Time { return clk }
		c.OnValidate = func(ev tokens.ValidationEvent) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, ev)
		}
	})
	last := func() tokens.ValidationEvent {
		mu.Lock()
		defer mu.Unlock()
		return events[len(events)-1]
	}

	_, err = v.Validate(t.Context(), plain.Raw)
	require.NoError(t, err)
	ev := last()
	assert.NoError(t, ev.Err)
	assert.Nil(t, ev.Reason)
	assert.Equal(t, testIssuer, ev.Issuer)
	assert.Equal(t, m.KeyID(), ev.KeyID)
	assert.Equal(t, jwks.ES256, ev.Algorithm)
	assert.False(t, ev.Cached || ev.Stale || ev.WarnAfter || ev.Legacy || ev.NoAudience)

	_, err = v.Validate(t.Context(), plain.Raw)
	require.NoError(t, err)
	assert.True(t, last().Cached)

	clk = k8sNow.Add(2 * time.Hour) // past warnafter, within the extended exp
	_, err = v.Validate(t.Context(), extended.Raw)
	require.NoError(t, err)
	ev = last()
	assert.True(t, ev.WarnAfter)
	assert.True(t, ev.Stale)

	_, err = v.ValidateFor(t.Context(), plain.Raw, []string{"other"})
	require.ErrorIs(t, err, tokens.ErrAudienceMismatch)
	ev = last()
	assert.Same(t, err, ev.Err)
	assert.Equal(t, tokens.ErrAudienceMismatch, ev.Reason)

	_, err = v.Validate(t.Context(), "not.a.token")
	require.Error(t, err)
	ev = last()
	assert.Equal(t, tokens.ErrMalformed, ev.Reason)
	assert.Empty(t, ev.Issuer)
	assert.Len(t, events, 5)
}

func TestReason(t *testing.T) {
	assert.Nil(t, tokens.Reason(nil))
	assert.Nil(t, tokens.Reason(errors.New("other")))
	assert.Equal(t, tokens.ErrBoundObjectNotFound, tokens.Reason(&tokens.ObjectError{Kind: tokens.KindPod, Problem: tokens.ErrBoundObjectNotFound}))
	_, noKeys := mustValidator(t, mustSource(t)).Validate(t.Context(), forgedToken(t, jwks.ES256, "", 64))
	assert.Equal(t, jwks.ErrNoKeys, tokens.Reason(noKeys))
	_, unknown := mustValidator(t, mustSource(t)).Validate(t.Context(), forgedToken(t, jwks.ES256, "k", 64))
	assert.Equal(t, tokens.ErrUnknownKeyID, tokens.Reason(unknown))
	assert.Equal(t, tokens.ErrExpired, tokens.Reason(&tokens.TimeError{Claim: "exp"}))
}
