package kubeapi_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ksa-go/ksa/kubeapi"
)

// fakeRequester answers TokenRequests with a token named after the call
// count, valid for the requested lifetime from the clock's now.
type fakeRequester struct {
	mu    sync.Mutex
	calls int
	fail  error
	now   func() time.Time
}

func (f *fakeRequester) RequestToken(_ context.Context, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.fail != nil {
		return nil, f.fail
	}
	out := tr.DeepCopy()
	out.Status.Token = "token-" + string(rune('0'+f.calls))
	if tr.Spec.ExpirationSeconds != nil {
		out.Status.ExpirationTimestamp = metav1.NewTime(f.now().Add(time.Duration(*tr.Spec.ExpirationSeconds) * time.Second))
	}
	return out, nil
}

func (f *fakeRequester) count() int { f.mu.Lock(); defer f.mu.Unlock(); return f.calls }

func tokenRequest(exp int64, podUID string) *authenticationv1.TokenRequest {
	return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences:         []string{"foo1", "foo2"},
		ExpirationSeconds: &exp,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", Name: "foo-pod", UID: types.UID(podUID)},
	}}
}

func newManager(t *testing.T, now *time.Time) (*kubeapi.Manager, *fakeRequester) {
	t.Helper()
	clock := func() time.Time { return *now }
	req := &fakeRequester{now: clock}
	m, err := kubeapi.NewManager(kubeapi.ManagerConfig{Requester: req, Now: clock, Jitter: func() time.Duration { return 0 }})
	require.NoError(t, err)
	return m, req
}

// TestManagerCaching follows the kubelet's token manager tests
// (k8s.io/kubernetes/pkg/kubelet/token): a second call served from the
// cache, a fetch again after 80 % of the lifetime or 24 hours, and the held
// token returned when that fetch fails.
func TestManagerCaching(t *testing.T) {
	tests := []struct {
		name      string
		exp       int64
		advance   time.Duration
		failAfter bool
		wantCalls int
		wantErr   error
	}{
		{name: "item 88: second call served from the cache", exp: 3600, wantCalls: 1},
		{name: "item 89: 1h token after 50 min is refreshed", exp: 3600, advance: 50 * time.Minute, wantCalls: 2},
		{name: "1h token after 47 min is not", exp: 3600, advance: 47 * time.Minute, wantCalls: 1},
		{name: "item 90: 40h token after 25h is refreshed (24h rule)", exp: 40 * 3600, advance: 25 * time.Hour, wantCalls: 2},
		{name: "item 91: failed refresh keeps the valid token", exp: 3600, advance: 50 * time.Minute, failAfter: true, wantCalls: 2},
		{name: "failed refresh of an expired token", exp: 3600, advance: 61 * time.Minute, failAfter: true, wantCalls: 2, wantErr: kubeapi.ErrTokenRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := k8sNow
			m, req := newManager(t, &now)
			first, err := m.Token(t.Context(), "ns", "sa", tokenRequest(tt.exp, "pod-uid"))
			require.NoError(t, err)
			now = now.Add(tt.advance)
			if tt.failAfter {
				req.fail = errors.New("apiserver down")
			}
			got, err := m.Token(t.Context(), "ns", "sa", tokenRequest(tt.exp, "pod-uid"))
			assert.Equal(t, tt.wantCalls, req.count())
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				var terr *kubeapi.TokenRequestError
				require.ErrorAs(t, err, &terr)
				assert.True(t, terr.Expired)
				return
			}
			require.NoError(t, err)
			if tt.wantCalls == 1 || tt.failAfter {
				assert.Equal(t, first.Status.Token, got.Status.Token)
			} else {
				assert.NotEqual(t, first.Status.Token, got.Status.Token)
			}
		})
	}
}

// TestManagerKeys: what distinguishes cache entries (items 92 and 96).
func TestManagerKeys(t *testing.T) {
	withUID := func(tr *authenticationv1.TokenRequest, uid string) *authenticationv1.TokenRequest {
		tr.UID = types.UID(uid)
		return tr
	}
	tests := []struct {
		name     string
		a, b     *authenticationv1.TokenRequest
		sameName bool
		hit      bool
	}{
		{name: "identical", a: tokenRequest(2000, "u"), b: tokenRequest(2000, "u"), hit: true},
		{name: "other lifetime", a: tokenRequest(2000, "u"), b: tokenRequest(3000, "u")},
		{name: "other pod", a: tokenRequest(2000, "u"), b: tokenRequest(2000, "v")},
		{name: "item 92: service-account UID uid-1 vs uid-2", a: withUID(tokenRequest(2000, "u"), "uid-1"), b: withUID(tokenRequest(2000, "u"), "uid-2")},
		{name: "item 92: same service-account UID", a: withUID(tokenRequest(2000, "u"), "uid-1"), b: withUID(tokenRequest(2000, "u"), "uid-1"), hit: true},
		{name: "UID set vs unset", a: withUID(tokenRequest(2000, "u"), "uid-1"), b: tokenRequest(2000, "u")},
		{name: "audience order", a: tokenRequest(2000, "u"), b: func() *authenticationv1.TokenRequest {
			tr := tokenRequest(2000, "u")
			tr.Spec.Audiences = []string{"foo2", "foo1"}
			return tr
		}()},
		{name: "nil vs empty audiences", a: func() *authenticationv1.TokenRequest {
			tr := tokenRequest(2000, "u")
			tr.Spec.Audiences = nil
			return tr
		}(), b: func() *authenticationv1.TokenRequest {
			tr := tokenRequest(2000, "u")
			tr.Spec.Audiences = []string{}
			return tr
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := k8sNow
			m, req := newManager(t, &now)
			_, err := m.Token(t.Context(), "ns", "sa", tt.a)
			require.NoError(t, err)
			_, err = m.Token(t.Context(), "ns", "sa", tt.b)
			require.NoError(t, err)
			want := 2
			if tt.hit {
				want = 1
			}
			assert.Equal(t, want, req.count())
		})
	}
}

// TestManagerDeleteAndCleanup follows items 94-95.
func TestManagerDeleteAndCleanup(t *testing.T) {
	now := k8sNow
	m, req := newManager(t, &now)
	for _, uid := range []string{"a", "a", "b"} {
		tr := tokenRequest(3600, uid)
		if uid == "a" && m.Len() == 1 {
			tr.Spec.Audiences = []string{"other"}
		}
		_, err := m.Token(t.Context(), "ns", "sa", tr)
		require.NoError(t, err)
	}
	require.Equal(t, 3, m.Len())
	m.DeleteForPod("unknown")
	assert.Equal(t, 3, m.Len())
	m.DeleteForPod("a")
	assert.Equal(t, 1, m.Len())

	// Failed requests are never cached; a later success is.
	req.fail = errors.New("boom")
	_, err := m.Token(t.Context(), "ns", "other", tokenRequest(3600, "c"))
	require.ErrorIs(t, err, kubeapi.ErrTokenRequest)
	assert.Equal(t, 1, m.Len())
	req.fail = nil
	_, err = m.Token(t.Context(), "ns", "other", tokenRequest(3600, "c"))
	require.NoError(t, err)
	assert.Equal(t, 2, m.Len())

	// Cleanup removes expired entries only.
	now = now.Add(30 * time.Minute)
	_, err = m.Token(t.Context(), "ns", "late", tokenRequest(3600, "d"))
	require.NoError(t, err)
	now = now.Add(31 * time.Minute)
	m.Cleanup()
	assert.Equal(t, 1, m.Len(), "only the later token is left")
}

// TestManagerRequiresRefresh follows item 93, jitter included.
func TestManagerRequiresRefresh(t *testing.T) {
	tests := []struct {
		name    string
		exp     *int64
		advance time.Duration
		jitter  time.Duration
		want    bool
	}{
		{name: "60 min token at +10 min", exp: ptrInt(3600), advance: 10 * time.Minute},
		{name: "60 min token at +50 min", exp: ptrInt(3600), advance: 50 * time.Minute, want: true},
		{name: "60 h token at +25 h", exp: ptrInt(60 * 3600), advance: 25 * time.Hour, want: true},
		{name: "60 min token at +70 min (expired)", exp: ptrInt(3600), advance: 70 * time.Minute, want: true},
		{name: "nil expirationSeconds", exp: nil, advance: 70 * time.Minute},
		{name: "3607 s token refreshes 721 s before exp", exp: ptrInt(3607), advance: (3607 - 720) * time.Second, want: true},
		{name: "3607 s token not 722 s before exp", exp: ptrInt(3607), advance: (3607 - 722) * time.Second},
		{name: "jitter brings the refresh forward", exp: ptrInt(3607), advance: (3607 - 729) * time.Second, jitter: 9 * time.Second, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := k8sNow
			clock := func() time.Time { return now }
			req := &fakeRequester{now: clock}
			m, err := kubeapi.NewManager(kubeapi.ManagerConfig{Requester: req, Now: clock, Jitter: func() time.Duration { return tt.jitter }})
			require.NoError(t, err)
			tr := tokenRequest(0, "u")
			tr.Spec.ExpirationSeconds = tt.exp
			_, err = m.Token(t.Context(), "ns", "sa", tr)
			require.NoError(t, err)
			now = now.Add(tt.advance)
			_, err = m.Token(t.Context(), "ns", "sa", tr)
			require.NoError(t, err)
			assert.Equal(t, tt.want, req.count() == 2)
		})
	}
}

// TestManagerDefaultJitter: the documented default head start lies in
// [0, 10 s): never a refresh earlier than 10 s before the 80% mark, always
// one after it.
func TestManagerDefaultJitter(t *testing.T) {
	_, err := kubeapi.NewManager(kubeapi.ManagerConfig{})
	require.Error(t, err)
	assert.Equal(t, 10*time.Second, kubeapi.ManagerMaxJitter)
	assert.Equal(t, 24*time.Hour, kubeapi.ManagerMaxAge)
	mark := 3600*time.Second - 720*time.Second // 80% of an hour
	for _, tt := range []struct {
		name string
		at   time.Duration
		want bool
	}{
		{name: "10 s before the mark", at: mark - 10*time.Second, want: false},
		{name: "1 s after the mark", at: mark + time.Second, want: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for i := 0; i < 50; i++ {
				now := k8sNow
				clock := func() time.Time { return now }
				req := &fakeRequester{now: clock}
				m, err := kubeapi.NewManager(kubeapi.ManagerConfig{Requester: req, Now: clock})
				require.NoError(t, err)
				_, err = m.Token(t.Context(), "ns", "sa", tokenRequest(3600, "u"))
				require.NoError(t, err)
				now = now.Add(tt.at)
				_, err = m.Token(t.Context(), "ns", "sa", tokenRequest(3600, "u"))
				require.NoError(t, err)
				require.Equal(t, tt.want, req.count() == 2)
			}
		})
	}
}

func ptrInt(v int64) *int64 { return &v }
