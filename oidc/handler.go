package oidc

import (
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ksa-go/ksa/jwks"
)

// DefaultMaxAge is the Cache-Control max-age kube-apiserver sends with both
// documents for static keys: one hour.
const DefaultMaxAge = time.Hour

// Content types kube-apiserver serves the documents with.
const (
	DiscoveryContentType = "application/json"
	JWKSContentType      = "application/jwk-set+json"
)

// HandlerConfig configures a [Handler].
type HandlerConfig struct {
	// Issuer, JWKSURI and ExternalAddress are IssuerConfig's: the issuer
	// URL (required) and where the key set is published.
	Issuer          string
	JWKSURI         string
	ExternalAddress string
	// MaxAge is sent as Cache-Control: public, max-age=<seconds>; zero
	// means DefaultMaxAge.
	MaxAge time.Duration
	// Keys are the keys the documents publish at first (see [Render]):
	// at least one not ExcludeFromDiscovery. SetKeys replaces them.
	Keys []jwks.Key
}

// Handler serves an issuer's discovery document and JWKS as kube-apiserver
// does: DiscoveryPath and JWKSPath, with or without a trailing slash (query
// strings are ignored, anything else is 404), Kubernetes' content types and
// Cache-Control, and bytes rendered once per key change. Unlike
// kube-apiserver it also answers HEAD (for CDN and load-balancer checks) and
// sends X-Content-Type-Options: nosniff; other methods are 405. SetKeys
// swaps both documents atomically, so keys rotate without a restart; a
// failed render keeps the previous documents. It is safe for concurrent use.
//
// The documents are served at these paths from the root: for an issuer with
// a path, mount the handler under it with http.StripPrefix, e.g.
// mux.Handle("/cluster-1/", http.StripPrefix("/cluster-1", h)), and point
// jwks_uri there.
type Handler struct {
	cfg     IssuerConfig
	control string
	docs    atomic.Pointer[Documents]
}

// NewHandler renders the documents for cfg.Keys (see [Render]) and returns
// a handler serving them.
func NewHandler(cfg HandlerConfig) (*Handler, error) {
	if cfg.MaxAge < 0 {
		return nil, configError("HandlerConfig.MaxAge", "is negative", nil)
	}
	maxAge := cfg.MaxAge
	if maxAge == 0 {
		maxAge = DefaultMaxAge
	}
	issuer := IssuerConfig{Issuer: cfg.Issuer, JWKSURI: cfg.JWKSURI, ExternalAddress: cfg.ExternalAddress}
	h := &Handler{cfg: issuer, control: "public, max-age=" + strconv.FormatInt(int64(maxAge/time.Second), 10)}
	if err := h.SetKeys(cfg.Keys); err != nil {
		return nil, err
	}
	return h, nil
}

// SetKeys re-renders both documents for a new key set and swaps them in
// atomically. On error the handler keeps serving the previous documents.
func (h *Handler) SetKeys(keys []jwks.Key) error {
	docs, err := Render(h.cfg, slices.Clone(keys))
	if err != nil {
		return err
	}
	h.docs.Store(docs)
	return nil
}

// Documents returns the documents being served. Callers MUST NOT modify
// them.
func (h *Handler) Documents() *Documents { return h.docs.Load() }

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	docs := h.docs.Load()
	var body []byte
	var contentType string
	// Both paths with and without a trailing slash, as kube-apiserver
	// serves them (and its RBAC role grants).
	switch r.URL.Path {
	case DiscoveryPath, DiscoveryPath + "/":
		body, contentType = docs.Discovery, DiscoveryContentType
	case JWKSPath, JWKSPath + "/":
		body, contentType = docs.JWKS, JWKSContentType
	default:
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", contentType)
	hdr.Set("Cache-Control", h.control)
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(body)
	}
}
