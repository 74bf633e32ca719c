package publish

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
)

// Severity is how bad a [Finding] is.
type Severity string

// The severities of a finding.
const (
	// SeverityError: relying parties cannot use the issuer (or the token).
	SeverityError Severity = "error"
	// SeverityWarning: they can, with a risk the finding names.
	SeverityWarning Severity = "warning"
)

// Finding is one problem a [Check] found, with its fix.
type Finding struct {
	Severity Severity
	// Check is the part checked: "issuer", "discovery", "jwks_uri",
	// "jwks", "keys" or "token".
	Check string
	// Code names the finding, one of the Code constants: a caller that
	// words fixes its own way keys them on it.
	Code string
	// Problem says what is wrong, naming the URL or value at fault (text
	// from servers and tokens as it came: escape it before printing it to
	// a terminal).
	Problem string
	// Fix says how to put it right, in plain words.
	Fix string
	// Status is the HTTP status of a fetch that failed (0: no answer).
	Status int
}

// The codes of the findings.
const (
	CodeIssuerNotHTTPS       = "issuer-not-https"
	CodeDiscoveryUnreachable = "discovery-unreachable"
	CodeDiscoveryUnparsable  = "discovery-unparsable"
	CodeIssuerTrailingSlash  = "issuer-trailing-slash"
	CodeIssuerMismatch       = "issuer-mismatch"
	CodeJWKSURIMissing       = "jwks-uri-missing"
	CodeJWKSURINotHTTPS      = "jwks-uri-not-https"
	CodeDiscoveryNoRS256     = "discovery-no-rs256"
	CodeKeySetUnreachable    = "jwks-unreachable"
	CodeKeySetPrivate        = "jwks-private"
	CodeKeySetUnusable       = "jwks-unusable"
	CodeKeySkipped           = "key-skipped"
	CodeNoRS256              = "no-rs256"
	CodeKeyNotRS256          = "key-not-rs256"
	CodeContentType          = "content-type"
	CodeCacheControl         = "cache-control"
	CodeTokenUnparsable      = "token-unparsable"
	CodeTokenIssuerSlash     = "token-iss-trailing-slash"
	CodeTokenIssuer          = "token-iss"
	CodeTokenAudience        = "token-aud"
	CodeTokenSubject         = "token-sub"
	CodeTokenExpired         = "token-expired"
	CodeTokenUnknownKey      = "token-kid-unknown"
	CodeTokenBadSignature    = "token-bad-signature"
	CodeTokenInvalid         = "token-invalid"
)

// EntraAudience is the audience Entra ID federated credentials expect by
// default.
const EntraAudience = "api://AzureADTokenExchange"

// CheckOptions are the settings of one [Check]. The zero value checks the
// issuer's documents with a default client.
type CheckOptions struct {
	// HTTPClient fetches the documents; nil means a client of its own.
	// Every fetch is anonymous, bounded in time and size, and follows at
	// most 3 redirects, to https only.
	HTTPClient *http.Client
	// Token, when set, is a token checked against the issuer, Audience
	// and Subject, and against the published keys.
	Token string
	// Audience is the audience the token must hold (a federated
	// credential's, EntraAudience for Entra ID); empty: not checked.
	Audience string
	// Subject is the subject the token must have; empty: not checked.
	Subject string
	// Now is the clock of the token's expiry; nil means time.Now.
	Now func() time.Time
}

// TokenFindings is what a check learned about the token.
type TokenFindings struct {
	Issuer, Subject string
	Audience        []string
	KeyID           string
	// Verified: the signature verifies with a published key.
	Verified bool
}

// Report is what a [Check] found.
type Report struct {
	// Issuer is the issuer checked; DiscoveryURL where its discovery
	// document was fetched.
	Issuer, DiscoveryURL string
	// DiscoveredIssuer and JWKSURI are what the discovery document
	// names, when it parsed.
	DiscoveredIssuer, JWKSURI string
	// Keys are the usable keys of the key set.
	Keys []jwks.Key
	// Token is what the token holds, when one was checked and parsed.
	Token *TokenFindings
	// Findings are the problems, in the order found.
	Findings []Finding
}

// OK reports whether no finding is an error.
func (r *Report) OK() bool { return r.Errors() == 0 }

// Errors returns the number of findings of SeverityError.
func (r *Report) Errors() int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == SeverityError {
			n++
		}
	}
	return n
}

func (r *Report) add(sev Severity, check, code, fix, problem string) {
	r.Findings = append(r.Findings, Finding{Severity: sev, Check: check, Code: code, Problem: problem, Fix: fix})
}

// Check fetches an issuer as Microsoft Entra ID, AWS and Google do
// (anonymously, over https) and reports every problem with its fix: the
// discovery document unreachable, not JSON, naming another issuer (a
// trailing slash counts) or no https jwks_uri; content types and cache
// headers relying parties refuse or suffer from; a key set with private
// material, unusable keys or no RS256 key (Entra ID accepts RS256 only);
// and with opts.Token, the token's iss, sub, aud and expiry and its
// signature against the published keys. A failed step stops the steps
// that need it. Check never fails: what it could not fetch is a finding.
func Check(ctx context.Context, issuer string, opts CheckOptions) *Report {
	c := &checker{opts: opts}
	if c.opts.Now == nil {
		c.opts.Now = time.Now
	}
	r := &Report{Issuer: issuer, DiscoveryURL: oidc.DiscoveryURL(issuer), Findings: []Finding{}}
	if !strings.HasPrefix(issuer, "https://") {
		r.add(SeverityError, "issuer", CodeIssuerNotHTTPS, "serve the issuer over https with a publicly trusted certificate, and use that https:// URL as --service-account-issuer",
			"the issuer "+quote(issuer)+" is not https: Entra ID, AWS and Google fetch https only")
		return r
	}
	var keys *jwks.Set
	if md := c.discovery(ctx, r); md != nil {
		keys = c.keySet(ctx, r, md)
	}
	if opts.Token != "" {
		c.token(ctx, r, keys)
	}
	return r
}

// checker is one Check.
type checker struct {
	opts CheckOptions
}

// discovery fetches and checks the discovery document.
func (c *checker) discovery(ctx context.Context, r *Report) *oidc.ProviderMetadata {
	resp, f := c.get(ctx, r.DiscoveryURL, "application/json", oidc.DefaultDiscoveryTimeout, oidc.MaxDiscoveryBytes)
	if f != nil {
		r.add(SeverityError, "discovery", CodeDiscoveryUnreachable, fetchFix(f.Status, "publish the discovery document so that it is served at "+r.DiscoveryURL),
			"the discovery document "+r.DiscoveryURL+" cannot be fetched anonymously: "+describe(f))
		r.Findings[len(r.Findings)-1].Status = f.Status
		return nil
	}
	checkContentType(r, "discovery", resp.Header, []string{oidc.DiscoveryContentType}, oidc.DiscoveryContentType)
	checkCache(r, "discovery", resp.Header)
	md, err := oidc.ParseMetadata(resp.Body)
	if err != nil {
		r.add(SeverityError, "discovery", CodeDiscoveryUnparsable, "publish the document oidc.Render writes, unchanged", "the discovery document does not parse: "+text(err))
		return nil
	}
	r.DiscoveredIssuer, r.JWKSURI = md.Issuer, md.JWKSURI
	switch {
	case md.Issuer == r.Issuer:
	case strings.TrimSuffix(md.Issuer, "/") == strings.TrimSuffix(r.Issuer, "/"):
		r.add(SeverityError, "issuer", CodeIssuerTrailingSlash, "make --service-account-issuer, the discovery document's issuer and every federated credential's issuer the same string, trailing slash included (render the documents again for issuer "+quote(md.Issuer)+", or check that URL)",
			"the discovery document's issuer "+quote(md.Issuer)+" differs from "+quote(r.Issuer)+" by a trailing slash: relying parties compare byte for byte (Entra ID: AADSTS700211)")
	default:
		r.add(SeverityError, "issuer", CodeIssuerMismatch, "render the documents for issuer "+quote(r.Issuer)+", or check the issuer the document names",
			"the discovery document names the issuer "+quote(md.Issuer)+", not "+quote(r.Issuer))
	}
	switch {
	case md.JWKSURI == "":
		r.add(SeverityError, "jwks_uri", CodeJWKSURIMissing, "render the discovery document again, with its jwks_uri", "the discovery document has no jwks_uri")
		return nil
	case !strings.HasPrefix(md.JWKSURI, "https://"):
		r.add(SeverityError, "jwks_uri", CodeJWKSURINotHTTPS, "host the key set over https and name that URL in the discovery document", "jwks_uri "+quote(md.JWKSURI)+" is not https: clouds fetch keys over https only")
		return nil
	}
	if !slices.Contains(md.SigningAlgs, jwks.RS256) {
		r.add(SeverityWarning, "discovery", CodeDiscoveryNoRS256, "publish an RSA key for Azure workload identity",
			"id_token_signing_alg_values_supported "+quoteAll(md.SigningAlgs)+" lacks RS256, the only algorithm Entra ID accepts")
	}
	return md
}

// fetchFix says how to fix a failed GET of status; notFound is the
// advice for a missing document.
func fetchFix(status int, notFound string) string {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return "make it publicly readable: anonymous blob access on the container, or for kube-apiserver itself bind the system:service-account-issuer-discovery ClusterRole to system:unauthenticated"
	case http.StatusNotFound:
		return notFound
	case 0:
		return "make the host reachable from the internet over https with a publicly trusted certificate"
	}
	return "make it answer 200 with the document"
}
