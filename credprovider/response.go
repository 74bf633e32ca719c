package credprovider

import (
	"encoding/json"
	"io"
	"strings"
	"time"
)

// CacheKeyType says what the kubelet keys a cached credential by: the
// image, its registry or every image the provider matches. The kubelet
// adds the service account's namespace, name, UID and annotations to the
// key whenever the request carried a token (and the token's hash under
// tokenAttributes.cacheType "Token"), so no key type shares a credential
// across service accounts.
type CacheKeyType string

// The cache key types of the protocol.
const (
	// CacheImage keys the credential by the image as the pod names it.
	CacheImage CacheKeyType = "Image"
	// CacheRegistry keys it by the image's registry host (and port).
	CacheRegistry CacheKeyType = "Registry"
	// CacheGlobal keys it by the provider alone.
	CacheGlobal CacheKeyType = "Global"
)

func (t CacheKeyType) valid() bool {
	return t == CacheImage || t == CacheRegistry || t == CacheGlobal
}

// AuthConfig is a registry credential: the username and password the
// container runtime sends to the registry.
type AuthConfig struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// Response is the CredentialProviderResponse a plugin writes: build it
// with [Respond] or [PassThrough], which hold the cache to the
// credential's life.
type Response struct {
	// CacheKeyType is what the kubelet keys the cached credentials by.
	CacheKeyType CacheKeyType
	// CacheDuration is how long the kubelet may keep the credentials;
	// zero means not at all. Respond always sets it, so that the
	// provider's defaultCacheDuration, which knows nothing of the
	// credential's life, never applies.
	CacheDuration time.Duration
	// Auth maps image patterns (matchImages syntax: a registry host,
	// optionally a port and a path prefix) to credentials.
	Auth map[string]AuthConfig
}

// responseJSON is the wire form of a Response.
type responseJSON struct {
	APIVersion    string                `json:"apiVersion"`
	Kind          string                `json:"kind"`
	CacheKeyType  CacheKeyType          `json:"cacheKeyType"`
	CacheDuration string                `json:"cacheDuration"`
	Auth          map[string]AuthConfig `json:"auth,omitempty"`
}

// Encode writes resp to w as the kubelet reads it: apiVersion and kind,
// cacheDuration always present (Go's duration syntax, as metav1.Duration
// writes it), then a newline. A response with an unknown key type or a
// negative duration is refused with [ErrInvalidResponse] and nothing is
// written.
func (resp *Response) Encode(w io.Writer) error {
	if resp == nil || !resp.CacheKeyType.valid() {
		return invalidResponse("cacheKeyType must be Image, Registry or Global")
	}
	if resp.CacheDuration < 0 {
		return invalidResponse("cacheDuration is negative (%s)", resp.CacheDuration)
	}
	data, err := json.Marshal(responseJSON{
		APIVersion:    APIVersion,
		Kind:          ResponseKind,
		CacheKeyType:  resp.CacheKeyType,
		CacheDuration: resp.CacheDuration.String(),
		Auth:          resp.Auth,
	})
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// Credential is what a provider obtained for a request.
type Credential struct {
	// Username and Password are sent to the registry; Password is
	// required.
	Username string
	Password string
	// Expiry is when the registry stops accepting the credential; zero
	// when the provider does not know. The kubelet keeps it no longer.
	Expiry time.Time
}

// Cache is how a provider asks the kubelet to keep a credential. Its zero
// value asks for no caching: the plugin runs on every pull.
type Cache struct {
	// For is the longest the kubelet may keep the credential; zero: not
	// at all. Respond shortens it to the credential's Expiry and, when
	// the request carried a token, to the token's expiry (or its
	// warnafter time, when kube-apiserver extended the token's life).
	For time.Duration
	// KeyType is what the kubelet keys the credential by; empty means
	// CacheImage, the narrowest.
	KeyType CacheKeyType
}

// Respond builds the response that gives cred for req's image: the
// credential is keyed by the image's registry host, and cached as c asks
// but never beyond the credential's expiry nor, for a request that
// carried a token, beyond the token's (a credential obtained with the
// pod's token must not outlive it). now is the clock (nil: time.Now).
//
// A credential that has expired, a token without exp, an empty password or
// an unknown key type is refused with [ErrInvalidResponse].
func Respond(req *Request, cred Credential, c Cache, now func() time.Time) (*Response, error) {
	if req == nil || req.Image == "" {
		return nil, invalidResponse("no request image to answer for")
	}
	if cred.Password == "" {
		return nil, invalidResponse("the credential has no password")
	}
	keyType := c.KeyType
	if keyType == "" {
		keyType = CacheImage
	}
	if !keyType.valid() {
		return nil, invalidResponse("cache key type %q is not Image, Registry or Global", keyType)
	}
	if c.For < 0 {
		return nil, invalidResponse("cache duration is negative (%s)", c.For)
	}
	if now == nil {
		now = time.Now
	}
	t := now()
	limit := cred.Expiry
	if req.ServiceAccountToken != "" {
		end, err := tokenEnd(req.ServiceAccountToken)
		if err != nil {
			return nil, err
		}
		if limit.IsZero() || end.Before(limit) {
			limit = end
		}
	}
	d := c.For
	if !limit.IsZero() {
		left := limit.Sub(t)
		if left <= 0 {
			return nil, invalidResponse("the credential expired at %s", limit.UTC().Format(time.RFC3339))
		}
		d = min(d, left.Truncate(time.Second))
	}
	return &Response{
		CacheKeyType:  keyType,
		CacheDuration: d,
		Auth:          map[string]AuthConfig{Registry(req.Image): {Username: cred.Username, Password: cred.Password}},
	}, nil
}

// PassThrough answers req with the pod's own token as the registry
// password, for registries that verify service-account tokens themselves,
// under username. The kubelet accepts such an answer only from a provider
// whose tokenAttributes.cacheType is "Token" (it refuses the token as a
// password otherwise); it then caches per token, and Respond's rule keeps
// the answer no longer than the token lives. A request without a token is
// refused with [ErrNoToken].
func PassThrough(req *Request, username string, c Cache, now func() time.Time) (*Response, error) {
	if req == nil || req.ServiceAccountToken == "" {
		return nil, ErrNoToken
	}
	return Respond(req, Credential{Username: username, Password: req.ServiceAccountToken}, c, now)
}

// Registry returns the registry part of an image as the kubelet computes
// it for CacheRegistry: everything before the first slash
// ("registry.example:5000" for "registry.example:5000/team/app:v1").
func Registry(image string) string {
	host, _, _ := strings.Cut(image, "/")
	return host
}
