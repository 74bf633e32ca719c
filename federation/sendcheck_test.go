package federation_test

import (
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/federation"
)

// TestAzureRetriesNeverSendExpired: Entra is unavailable twice and azcore
// retries with the same assertion; meanwhile the assertion runs out of time.
// The per-attempt check stops it before it leaves, with a typed error.
func TestAzureRetriesNeverSendExpired(t *testing.T) {
	e := newEnv(t)
	e.project(t, federation.DefaultAudience, 10*time.Minute)
	e.clk.Advance(10*time.Minute - 15*time.Second) // 15 s left: passes the pre-flight
	cred := e.credential(t, func(o *federation.AzureConfig) {
		o.ClientOptions.Retry = policy.RetryOptions{MaxRetries: 3, RetryDelay: time.Millisecond, MaxRetryDelay: 2 * time.Millisecond}
	})
	e.entra.Unavailable(2, func() { e.clk.Advance(4 * time.Second) })
	_, err := getToken(t, cred)
	require.ErrorIs(t, err, federation.ErrAssertionExpired)
	var pf *federation.PreflightError
	require.ErrorAs(t, err, &pf)
	assert.Equal(t, "expiry", pf.Check)
	assert.Empty(t, e.entra.Exchanges(), "the attempt that would have carried a stale assertion never left")
}
