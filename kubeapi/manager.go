package kubeapi

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
)

// The kubelet's token refresh rules.
const (
	// ManagerMaxAge is the age after which a cached token is refreshed
	// whatever its lifetime.
	ManagerMaxAge = 24 * time.Hour
	// ManagerMaxJitter bounds the random head start each refresh check takes:
	// whole seconds in [0, 10).
	ManagerMaxJitter = 10 * time.Second
)

// Requester requests tokens through the TokenRequest API. With client-go it
// is one call:
//
//	requester := kubeapi.RequesterFunc(func(ctx context.Context, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
//		return clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, tr, metav1.CreateOptions{})
//	})
type Requester interface {
	RequestToken(ctx context.Context, namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
}

// RequesterFunc adapts a function to [Requester].
type RequesterFunc func(ctx context.Context, namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)

// RequestToken calls f.
func (f RequesterFunc) RequestToken(ctx context.Context, namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	return f(ctx, namespace, name, tr)
}

// ErrTokenRequest matches a failed token request that the manager could not
// cover with a still-valid cached token.
var ErrTokenRequest = errs.New(prefix, "token request failed")

// TokenRequestError reports a failed token request with no usable cached
// token. It matches [ErrTokenRequest] and wraps the requester's error.
type TokenRequestError struct {
	Namespace, Name string
	// Expired is true when a cached token existed but has expired.
	Expired bool
	Err     error
}

func (e *TokenRequestError) Error() string {
	if e.Expired {
		return errs.Msg(prefix, fmt.Sprintf("token for %s/%s expired and its refresh failed", e.Namespace, e.Name), e.Err)
	}
	return errs.Msg(prefix, fmt.Sprintf("requesting a token for %s/%s", e.Namespace, e.Name), e.Err)
}

// Is reports whether target is [ErrTokenRequest].
func (e *TokenRequestError) Is(target error) bool { return target == ErrTokenRequest }

// Unwrap returns the requester's error.
func (e *TokenRequestError) Unwrap() error { return e.Err }

// ManagerConfig configures a [Manager].
type ManagerConfig struct {
	// Requester requests tokens. Required.
	Requester Requester
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Jitter returns the head start of one refresh check; nil means a
	// random whole number of seconds in [0, ManagerMaxJitter), as the
	// kubelet does.
	Jitter func() time.Duration
}

// Manager caches tokens obtained through the TokenRequest API as the
// kubelet's token manager does, for controllers that request tokens for
// other service accounts: entries are keyed by service account, namespace,
// audiences (order matters), requested lifetime, bound object and
// service-account UID; a token is refreshed once 80% of its lifetime has
// passed or it is 24 hours old (each check taking a random head start of up
// to ten seconds); when a refresh fails, the cached token keeps being
// returned until it expires. Failed requests are never cached. It is safe
// for concurrent use.
type Manager struct {
	req    Requester
	now    func() time.Time
	jitter func() time.Duration

	mu    sync.Mutex
	cache map[string]*authenticationv1.TokenRequest
}

// NewManager checks the config and returns a Manager.
func NewManager(cfg ManagerConfig) (*Manager, error) {
	if cfg.Requester == nil {
		return nil, &ksa.ConfigError{Field: "kubeapi.ManagerConfig.Requester", Reason: "is required"}
	}
	m := &Manager{req: cfg.Requester, now: cfg.Now, jitter: cfg.Jitter, cache: map[string]*authenticationv1.TokenRequest{}}
	if m.now == nil {
		m.now = time.Now
	}
	if m.jitter == nil {
		m.jitter = func() time.Duration { return time.Duration(rand.IntN(int(ManagerMaxJitter/time.Second))) * time.Second }
	}
	return m, nil
}

// managerKey is the kubelet's cache key: name, namespace, audiences
// (nil and empty differ), requested lifetime, bound object reference and
// the service-account UID precondition.
func managerKey(namespace, name string, tr *authenticationv1.TokenRequest) string {
	var exp int64
	if tr.Spec.ExpirationSeconds != nil {
		exp = *tr.Spec.ExpirationSeconds
	}
	var ref authenticationv1.BoundObjectReference
	if tr.Spec.BoundObjectRef != nil {
		ref = *tr.Spec.BoundObjectRef
	}
	return fmt.Sprintf("%q/%q/%#v/%#v/%#v/%q", name, namespace, tr.Spec.Audiences, exp, ref, tr.UID)
}

// Token returns a token for the request, from the cache unless it needs a
// refresh. If a refresh fails while the cached token is still valid, the
// cached token is returned with no error. Callers MUST NOT modify the
// result.
func (m *Manager) Token(ctx context.Context, namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	key := managerKey(namespace, name, tr)
	m.mu.Lock()
	cached, ok := m.cache[key]
	m.mu.Unlock()
	if ok && !m.requiresRefresh(cached) {
		return cached, nil
	}
	fresh, err := m.req.RequestToken(ctx, namespace, name, tr)
	if err != nil {
		switch {
		case !ok:
			return nil, &TokenRequestError{Namespace: namespace, Name: name, Err: err}
		case m.now().After(cached.Status.ExpirationTimestamp.Time):
			return nil, &TokenRequestError{Namespace: namespace, Name: name, Expired: true, Err: err}
		default:
			return cached, nil
		}
	}
	m.mu.Lock()
	m.cache[key] = fresh
	m.mu.Unlock()
	return fresh, nil
}

// requiresRefresh applies the kubelet's rule to a cached response.
func (m *Manager) requiresRefresh(tr *authenticationv1.TokenRequest) bool {
	if tr.Spec.ExpirationSeconds == nil {
		return false // as the kubelet: such a response is served until deleted
	}
	now := m.now()
	ttl := time.Duration(*tr.Spec.ExpirationSeconds) * time.Second
	exp := tr.Status.ExpirationTimestamp.Time
	iat := exp.Add(-ttl)
	jitter := m.jitter()
	if now.After(iat.Add(ManagerMaxAge - jitter)) {
		return true
	}
	// Refresh when less than 20% of the lifetime is left (integer seconds,
	// as the kubelet computes it).
	left := time.Duration(*tr.Spec.ExpirationSeconds*20/100) * time.Second
	return now.After(exp.Add(-left - jitter))
}

// DeleteForPod removes every cached token bound to the pod with this UID, as
// the kubelet does when the pod goes away.
func (m *Manager) DeleteForPod(podUID types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, tr := range m.cache {
		if ref := tr.Spec.BoundObjectRef; ref != nil && ref.UID == podUID {
			delete(m.cache, k)
		}
	}
}

// Cleanup removes expired entries; the kubelet runs it every minute.
func (m *Manager) Cleanup() {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, tr := range m.cache {
		if now.After(tr.Status.ExpirationTimestamp.Time) {
			delete(m.cache, k)
		}
	}
}

// Len returns the number of cached tokens.
func (m *Manager) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.cache)
}
