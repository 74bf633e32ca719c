package oidc

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ksa-go/ksa/internal/httpget"
	"github.com/ksa-go/ksa/internal/jsonx"
)

// Limits of discovery.
const (
	// DefaultDiscoveryTimeout bounds a discovery request.
	DefaultDiscoveryTimeout = 10 * time.Second
	// MaxDiscoveryBytes bounds a discovery document: 64 KiB, far above the
	// few hundred bytes issuers serve.
	MaxDiscoveryBytes = 64 << 10
)

// ProviderMetadata is what a relying party reads from a discovery document.
type ProviderMetadata struct {
	Issuer        string
	JWKSURI       string
	ResponseTypes []string
	SubjectTypes  []string
	// SigningAlgs is id_token_signing_alg_values_supported.
	SigningAlgs []string
}

// DiscoveryConfig configures [Discover].
type DiscoveryConfig struct {
	// Issuer is the issuer URL; its discovery document is fetched from
	// Issuer (trailing slash removed) + DiscoveryPath, and must name exactly
	// this issuer. Required.
	Issuer string
	// Client sends the request; nil means a new http.Client (Timeout bounds
	// the request). Pass a client trusting the cluster CA for in-cluster
	// discovery.
	Client *http.Client
	// BearerToken, when set, supplies credentials for each request:
	// Kubernetes serves discovery to authenticated callers only by default.
	// A pod passes a function that reads its projected token, so rotation
	// is followed.
	BearerToken func(ctx context.Context) (string, error)
	// Timeout bounds the request; zero means DefaultDiscoveryTimeout.
	Timeout time.Duration
	// InsecureAllowHTTP accepts an http:// issuer, jwks_uri and redirects.
	// Never set it outside tests: over http anyone on the path can replace
	// the keys, and bearer credentials travel in clear text.
	InsecureAllowHTTP bool
}

// Discover fetches and checks an issuer's discovery document: status 200,
// at most MaxDiscoveryBytes of strict JSON, issuer exactly equal to the one
// asked for (a *IssuerMismatchError otherwise, carrying both), and an https
// jwks_uri. The request carries ctx and is bounded by the timeout. Errors
// match [ErrDiscovery] or [ErrIssuerMismatch].
func Discover(ctx context.Context, cfg DiscoveryConfig) (*ProviderMetadata, error) {
	if cfg.Issuer == "" {
		return nil, configError("DiscoveryConfig.Issuer", "is required", nil)
	}
	if !hasScheme(cfg.Issuer, "https") && !(cfg.InsecureAllowHTTP && hasScheme(cfg.Issuer, "http")) {
		return nil, configError("DiscoveryConfig.Issuer", fmt.Sprintf("%q is not an https URL (InsecureAllowHTTP allows http in tests)", cfg.Issuer), nil)
	}
	return discover(ctx, cfg, DiscoveryURL(cfg.Issuer))
}

// discover fetches the discovery document at docURL and checks it as
// Discover says; its issuer must be cfg.Issuer, unless that is empty (the
// document is then trusted for its issuer: it came from the API server).
func discover(ctx context.Context, cfg DiscoveryConfig, docURL string) (*ProviderMetadata, error) {
	fail := func(status int, reason string, err error) (*ProviderMetadata, error) {
		return nil, &DiscoveryError{URL: docURL, Status: status, Reason: reason, Err: err}
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultDiscoveryTimeout
	}
	resp, failure := httpget.Do(ctx, httpget.Request{
		URL: docURL, Client: cfg.Client, Accept: "application/json",
		Bearer: cfg.BearerToken, Timeout: timeout, MaxBytes: MaxDiscoveryBytes, AllowHTTP: cfg.InsecureAllowHTTP,
	})
	if failure != nil {
		return fail(failure.Status, failure.Reason, failure.Err)
	}
	body := resp.Body
	md, err := ParseMetadata(body)
	if err != nil {
		return fail(resp.Status, "", err)
	}
	if cfg.Issuer != "" && md.Issuer != cfg.Issuer {
		return nil, &IssuerMismatchError{Expected: cfg.Issuer, Discovered: md.Issuer}
	}
	switch {
	case md.JWKSURI == "":
		return fail(resp.Status, "document has no jwks_uri", nil)
	case hasScheme(md.JWKSURI, "https"):
	case cfg.InsecureAllowHTTP && hasScheme(md.JWKSURI, "http"):
	default:
		return fail(resp.Status, fmt.Sprintf("jwks_uri %q is not https", md.JWKSURI), nil)
	}
	return md, nil
}

// ParseMetadata reads a discovery document strictly: at most
// MaxDiscoveryBytes of strict JSON (no member twice, valid UTF-8, bounded
// nesting), an object whose issuer and jwks_uri, when present, are strings
// and whose *_supported members are arrays of strings; other members are
// skipped. It does not check what the values say (Discover does). The error
// matches [ErrMalformedDocument] and names the member at fault, if
// one is.
func ParseMetadata(doc []byte) (*ProviderMetadata, error) {
	if len(doc) > MaxDiscoveryBytes {
		return nil, documentError("", fmt.Sprintf("%d bytes, over the %d-byte limit", len(doc), MaxDiscoveryBytes), nil)
	}
	md := &ProviderMetadata{}
	r := jsonx.NewReader(doc, 0)
	obj, err := r.Object()
	if err != nil {
		return nil, documentError("", "not a JSON object", err)
	}
	var seen jsonx.Names
	for {
		name, ok, err := obj.Next()
		if err != nil {
			return nil, documentError("", "not strict JSON", err)
		}
		if !ok {
			break
		}
		member := string(name)
		if !seen.Add(name) {
			return nil, documentError(member, "appears twice", nil)
		}
		switch member {
		case "issuer":
			md.Issuer, err = r.String()
		case "jwks_uri":
			md.JWKSURI, err = r.String()
		case "response_types_supported":
			md.ResponseTypes, err = readStrings(&r)
		case "subject_types_supported":
			md.SubjectTypes, err = readStrings(&r)
		case "id_token_signing_alg_values_supported":
			md.SigningAlgs, err = readStrings(&r)
		default:
			err = r.Skip()
		}
		if err != nil {
			return nil, documentError(member, "cannot be read", err)
		}
	}
	if err := r.End(); err != nil {
		return nil, documentError("", "not strict JSON", err)
	}
	return md, nil
}

func readStrings(r *jsonx.Reader) ([]string, error) {
	arr, err := r.Array()
	if err != nil {
		return nil, err
	}
	var out []string
	for {
		more, err := arr.Next()
		if err != nil || !more {
			return out, err
		}
		s, err := r.String()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
}

// hasScheme reports whether raw is an absolute URL with the scheme (any
// case) and a host.
func hasScheme(raw, scheme string) bool {
	u, err := url.Parse(raw)
	return err == nil && strings.EqualFold(u.Scheme, scheme) && u.Host != ""
}

// sameOrigin reports whether two URLs have the same scheme and host.
func sameOrigin(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	return err1 == nil && err2 == nil && strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host)
}
