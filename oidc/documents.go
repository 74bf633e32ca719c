package oidc

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/ksa-go/ksa/internal/jsonx"
	"github.com/ksa-go/ksa/jwks"
)

// The paths kube-apiserver serves discovery on.
const (
	DiscoveryPath = "/.well-known/openid-configuration"
	JWKSPath      = "/openid/v1/jwks"
)

// DiscoveryURL returns where an issuer's discovery document lives, as every
// relying party (kube-apiserver's JWT authenticator, go-oidc, Entra ID)
// builds it: the issuer without one trailing slash, then DiscoveryPath.
func DiscoveryURL(issuer string) string { return trimSlash(issuer) + DiscoveryPath }

// JWKSURL returns the jwks_uri of a self-hosted issuer whose key set lives
// beside its discovery document (the blob-hosted layout of WriteStatic):
// the issuer without one trailing slash, then JWKSPath. An Azure-style
// issuer "https://host/tenant/id/" gives "https://host/tenant/id/openid/v1/jwks",
// where issuer + JWKSPath would give a double slash.
func JWKSURL(issuer string) string { return trimSlash(issuer) + JWKSPath }

// trimSlash removes one trailing slash.
func trimSlash(s string) string { return strings.TrimSuffix(s, "/") }

// IssuerConfig describes a service-account issuer's published metadata, as
// kube-apiserver's flags do.
type IssuerConfig struct {
	// Issuer is the issuer URL (the first --service-account-issuer): https,
	// no query, no fragment; a path is allowed. Required.
	Issuer string
	// JWKSURI is the published jwks_uri (--service-account-jwks-uri); it
	// must be https. When empty it is built from ExternalAddress.
	JWKSURI string
	// ExternalAddress is host[:port] of the API server, used for
	// https://<ExternalAddress>/openid/v1/jwks when JWKSURI is empty.
	ExternalAddress string
}

// Documents are the two rendered documents of an issuer.
type Documents struct {
	// Discovery is the OpenID provider configuration, served at
	// DiscoveryPath.
	Discovery []byte
	// JWKS is the key set, served at jwks_uri.
	JWKS []byte
	// JWKSURI is the jwks_uri the discovery document names.
	JWKSURI string
}

// resolve validates the config as Kubernetes' NewOpenIDMetadataProvider does,
// in its order and with its messages, and returns the jwks_uri.
func (c IssuerConfig) resolve() (string, error) {
	if c.Issuer == "" {
		return "", issuerError("Issuer", "is empty", nil)
	}
	if c.JWKSURI == "" && c.ExternalAddress == "" {
		return "", issuerError("JWKSURI", "or ExternalAddress, or both, must be set", nil)
	}
	iss, err := url.Parse(c.Issuer)
	if err != nil {
		return "", issuerError("Issuer", "does not parse", err)
	}
	if iss.Scheme != "https" {
		return "", issuerError("Issuer", "must use the https scheme, got: "+c.Issuer, nil)
	}
	if iss.RawQuery != "" {
		return "", issuerError("Issuer", "may not include a query, got: "+c.Issuer, nil)
	}
	if iss.Fragment != "" {
		return "", issuerError("Issuer", "may not include a fragment, got: "+c.Issuer, nil)
	}
	if c.JWKSURI != "" {
		u, err := url.Parse(c.JWKSURI)
		if err != nil {
			return "", issuerError("JWKSURI", "does not parse", err)
		}
		if u.Scheme != "https" {
			return "", issuerError("JWKSURI", "requires the https scheme, parsed as: "+u.String(), nil)
		}
		return c.JWKSURI, nil
	}
	u := &url.URL{Scheme: "https", Host: c.ExternalAddress, Path: JWKSPath}
	built := u.String()
	parsed, err := url.Parse(built)
	if err == nil && (parsed.Scheme != u.Scheme || parsed.Host != u.Host || parsed.Path != u.Path) {
		err = fmt.Errorf("got %v, expected %v", parsed, u)
	}
	if err != nil {
		return "", issuerError("ExternalAddress", fmt.Sprintf("%q does not make a valid jwks_uri", c.ExternalAddress), err)
	}
	return built, nil
}

// Render renders an issuer's discovery document and JWKS exactly as
// kube-apiserver does for the same issuer, jwks_uri and (RSA and ECDSA)
// keys; Ed25519 keys, which kube-apiserver cannot use, are published as
// OKP/EdDSA JWKs: the document's
// members are issuer, jwks_uri, response_types_supported ["id_token"],
// subject_types_supported ["public"] and
// id_token_signing_alg_values_supported (the keys' algorithms, sorted, no
// duplicates); the key set is [jwks.MarshalSet] of the keys not marked
// ExcludeFromDiscovery. Errors are *ksa.ConfigError: a field of
// IssuerConfig for an issuer Kubernetes refuses ("oidc.IssuerConfig.Issuer",
// ...), "oidc.keys" matching jwks.ErrNoKeys when no key is published or
// jwks.ErrUnsupportedKey for a key that cannot be.
func Render(cfg IssuerConfig, keys []jwks.Key) (*Documents, error) {
	jwksURI, err := cfg.resolve()
	if err != nil {
		return nil, err
	}
	published := make([]jwks.Key, 0, len(keys))
	for _, k := range keys {
		if !k.ExcludeFromDiscovery {
			published = append(published, k)
		}
	}
	if len(published) == 0 {
		return nil, configError("keys", "publish none (each is verify-only, or there are none)", jwks.ErrNoKeys)
	}
	set, err := jwks.MarshalSet(published)
	if err != nil {
		return nil, configError("keys", "cannot be published", err)
	}
	var algs []string
	for _, k := range published {
		alg := k.Algorithm
		if alg == "" {
			alg, _ = jwks.AlgorithmFor(k.Public)
		}
		if !slices.Contains(algs, alg) {
			algs = append(algs, alg)
		}
	}
	slices.Sort(algs)

	d := make([]byte, 0, 256)
	d = append(d, `{"issuer":`...)
	d = jsonx.AppendString(d, cfg.Issuer)
	d = append(d, `,"jwks_uri":`...)
	d = jsonx.AppendString(d, jwksURI)
	d = append(d, `,"response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":`...)
	d = jsonx.AppendStrings(d, algs)
	d = append(d, '}')
	return &Documents{Discovery: d, JWKS: set, JWKSURI: jwksURI}, nil
}
