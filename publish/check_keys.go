package publish

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/internal/httpget"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/tokens"
)

// keySet fetches and checks the key set.
func (c *checker) keySet(ctx context.Context, r *Report, md *oidc.ProviderMetadata) *jwks.Set {
	resp, f := c.get(ctx, md.JWKSURI, oidc.JWKSContentType+", application/json", jwks.DefaultFetchTimeout, jwks.DefaultMaxSetBytes)
	if f != nil {
		r.add(SeverityError, "jwks_uri", CodeKeySetUnreachable, fetchFix(f.Status, "publish the key set so that it is served at "+md.JWKSURI+", or name where it is in the discovery document"),
			"the key set "+md.JWKSURI+" cannot be fetched anonymously: "+describe(f))
		r.Findings[len(r.Findings)-1].Status = f.Status
		return nil
	}
	checkContentType(r, "jwks", resp.Header, []string{oidc.JWKSContentType, "application/json"}, oidc.JWKSContentType)
	checkCache(r, "jwks", resp.Header)
	if err := jwks.Audit(resp.Body); errors.Is(err, jwks.ErrPrivateMaterial) {
		r.add(SeverityError, "jwks", CodeKeySetPrivate, "delete the published key set now, make a new key, render and publish again: the key is compromised",
			"the key set publishes private key material: "+text(err))
		return nil
	}
	set, err := jwks.ParseSet(resp.Body, jwks.ParseOptions{})
	if err != nil {
		r.add(SeverityError, "jwks", CodeKeySetUnusable, "publish the key set oidc.Render writes, unchanged", "the key set is unusable: "+text(err))
		return nil
	}
	for _, s := range set.Skipped {
		r.add(SeverityWarning, "jwks", CodeKeySkipped, "publish RSA (2048 to 8192 bits) or ECDSA P-256/384/521 keys only", "a key is skipped by relying parties: "+text(s))
	}
	r.Keys = set.Keys
	if !slices.ContainsFunc(set.Keys, func(k jwks.Key) bool { return k.Algorithm == jwks.RS256 }) {
		r.add(SeverityError, "keys", CodeNoRS256, "sign with an RSA key for Azure workload identity: make one, then rotate to it (AWS and Google accept ECDSA too)",
			"no RS256 key: Entra ID accepts RS256 tokens only, so every exchange fails")
		return set
	}
	for _, k := range set.Keys {
		if k.Algorithm != jwks.RS256 {
			r.add(SeverityWarning, "keys", CodeKeyNotRS256, "sign with the RS256 key when the tokens go to Entra ID",
				"key "+k.KeyID+" is "+k.Algorithm+": Entra ID ignores it, so tokens it signs cannot be exchanged there")
		}
	}
	return set
}

// token holds the token to the expected claims and the key set.
func (c *checker) token(ctx context.Context, r *Report, set *jwks.Set) {
	raw, issuer := c.opts.Token, r.Issuer
	claims, err := tokens.ParseUnverified(raw)
	if err != nil {
		r.add(SeverityError, "token", CodeTokenUnparsable, "pass the service-account token alone (a compact JWT, as in the projected token file)", "the token does not parse: "+text(err))
		return
	}
	tf := &TokenFindings{Issuer: claims.Issuer, Subject: claims.Subject, Audience: claims.Audience, KeyID: headerKeyID(raw)}
	r.Token = tf
	c.claims(r, claims)
	if set == nil || claims.Issuer != issuer {
		return
	}
	src, err := jwks.NewStaticSource(set.Keys...)
	if err != nil {
		return
	}
	v, err := tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{issuer}, Keys: src, InsecureSkipAudienceCheck: true,
		AcceptMissingAudience: true, SkipObjectCheck: true, Leeway: tokens.DefaultLeeway, Now: c.opts.Now})
	if err != nil {
		return
	}
	_, err = v.Validate(ctx, raw)
	switch {
	case err == nil, errors.Is(err, tokens.ErrExpired):
		tf.Verified = true // expiry is checked after the signature
	case errors.Is(err, tokens.ErrUnknownKeyID):
		r.add(SeverityError, "token", CodeTokenUnknownKey, "publish the key that signs (kube-apiserver's --service-account-signing-key-file) with the others",
			"the token's kid "+quote(tf.KeyID)+" is not in the published key set")
	case errors.Is(err, tokens.ErrBadSignature):
		r.add(SeverityError, "token", CodeTokenBadSignature, "the token was not signed by the published key with its kid: check kube-apiserver's --service-account-signing-key-file",
			"the token's signature does not verify with the published key "+quote(tf.KeyID))
	default:
		r.add(SeverityError, "token", CodeTokenInvalid, "use a token kube-apiserver issued for this issuer", "the token does not validate: "+text(err))
	}
}

// claims holds the token's claims to the issuer, the audience and the
// subject expected, and the clock.
func (c *checker) claims(r *Report, claims *tokens.Claims) {
	issuer := r.Issuer
	switch {
	case claims.Issuer == issuer:
	case strings.TrimSuffix(claims.Issuer, "/") == strings.TrimSuffix(issuer, "/"):
		r.add(SeverityError, "token", CodeTokenIssuerSlash, "give kube-apiserver --service-account-issuer and the federated credential the same issuer, trailing slash included",
			"the token's iss "+quote(claims.Issuer)+" differs from the issuer "+quote(issuer)+" by a trailing slash: Entra ID refuses it (AADSTS700211)")
	default:
		r.add(SeverityError, "token", CodeTokenIssuer, "use a token of this cluster, or check the issuer the federated credential names",
			"the token's iss "+quote(claims.Issuer)+" is not the issuer "+quote(issuer)+" (Entra ID: AADSTS700211)")
	}
	if a := c.opts.Audience; a != "" && !slices.Contains(claims.Audience, a) {
		r.add(SeverityError, "token", CodeTokenAudience, "request the token for "+quote(a)+" (serviceAccountToken.audience of the projected volume), or set the federated credential's audience to one of the token's",
			"the token's aud "+quoteAll(claims.Audience)+" does not include the federated credential's audience "+quote(a)+" (Entra ID: AADSTS700212)")
	}
	if s := c.opts.Subject; s != "" && claims.Subject != s {
		r.add(SeverityError, "token", CodeTokenSubject, "set the federated credential's subject to "+quote(claims.Subject)+", or use the token of service account "+quote(s),
			"the token's sub "+quote(claims.Subject)+" is not the federated credential's subject "+quote(s)+" (Entra ID: AADSTS700213)")
	}
	if now := c.opts.Now(); !claims.Expiry.IsZero() && !now.Before(claims.Expiry) {
		r.add(SeverityError, "token", CodeTokenExpired, "use a fresh token: the kubelet rotates projected tokens, read the file again before each exchange",
			"the token expired "+span(now.Sub(claims.Expiry))+" ago (Entra ID: AADSTS700024)")
	}
}

// headerKeyID returns the kid of a compact JWT's header, "" when it has
// none or the header does not decode.
func headerKeyID(token string) string {
	head, _, _ := strings.Cut(token, ".")
	b, err := base64.RawURLEncoding.Strict().DecodeString(head)
	if err != nil {
		return ""
	}
	var h struct {
		KeyID string `json:"kid"`
	}
	if json.Unmarshal(b, &h) != nil {
		return ""
	}
	return h.KeyID
}

// checkContentType reports a Content-Type outside want.
func checkContentType(r *Report, what string, h http.Header, want []string, best string) {
	ct := h.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && slices.Contains(want, mt) {
		return
	}
	if ct == "" {
		ct = "none"
	}
	r.add(SeverityWarning, what, CodeContentType, "set the object's Content-Type to "+best+" (az storage blob upload --content-type "+best+"; aws s3 cp --content-type "+best+")",
		"the "+documentName(what)+" is served with Content-Type "+ct+": strict relying parties refuse it")
}

// checkCache reports Cache-Control that hurts rotation or load.
func checkCache(r *Report, what string, h http.Header) {
	cc := strings.ToLower(h.Get("Cache-Control"))
	const fix = "serve it with Cache-Control: public, max-age=3600 (as kube-apiserver does)"
	warn := func(problem string) { r.add(SeverityWarning, what, CodeCacheControl, fix, problem) }
	if cc == "" {
		warn("the " + documentName(what) + " has no Cache-Control: each relying party picks its own cache time, so key rotations take effect at unknown times")
		return
	}
	for _, d := range strings.Split(cc, ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
		switch name {
		case "no-store", "no-cache":
			warn("the " + documentName(what) + " is served with Cache-Control " + quote(cc) + ": relying parties refetch it for every token")
		case "max-age":
			n, err := strconv.Atoi(strings.Trim(val, `"`))
			switch {
			case err != nil:
				warn("the " + documentName(what) + " has an unreadable max-age " + quote(val))
			case n == 0:
				warn("the " + documentName(what) + " is served with max-age=0: relying parties refetch it for every token")
			case n > 86400:
				warn(fmt.Sprintf("the %s may be cached for %s (max-age=%d): a new key stays unknown that long after a rotation", documentName(what), span(time.Duration(n)*time.Second), n))
			}
		}
	}
}

func documentName(what string) string {
	if what == "jwks" {
		return "key set"
	}
	return "discovery document"
}

// get performs a GET as a relying party does: anonymous, bounded, status
// 200 only, redirects to https only.
func (c *checker) get(ctx context.Context, url, accept string, timeout time.Duration, max int) (*httpget.Response, *httpget.Failure) {
	return httpget.Do(ctx, httpget.Request{URL: url, Client: c.opts.HTTPClient, Accept: accept, Timeout: timeout, MaxBytes: max})
}

// describe says why a GET failed.
func describe(f *httpget.Failure) string {
	var te *httpget.TimeoutError
	switch {
	case errors.As(f.Err, &te):
		return te.Error()
	case f.Err == nil:
		return f.Reason
	case f.Reason == "":
		return text(f.Err)
	}
	return f.Reason + ": " + text(f.Err)
}

// text is an error's message without this module's package prefix.
func text(err error) string { return errs.Text(err) }

// quoteAll quotes a list as Go does.
func quoteAll(s []string) string { return fmt.Sprintf("%q", s) }

// span writes a duration in whole days, hours, minutes and seconds:
// "2d", "1h2m1s", "0s".
func span(d time.Duration) string {
	n := int64(d / time.Second)
	var b strings.Builder
	for _, u := range []struct {
		s string
		n int64
	}{{"d", 86400}, {"h", 3600}, {"m", 60}, {"s", 1}} {
		if n >= u.n || (u.n == 1 && b.Len() == 0) {
			b.WriteString(strconv.FormatInt(n/u.n, 10) + u.s)
			n %= u.n
		}
	}
	return b.String()
}
