package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/tokens"
)

// azureAudience is the audience Entra ID federated credentials expect by
// default.
const azureAudience = "api://AzureADTokenExchange"

// Severities of a problem.
const (
	sevError   = "error"
	sevWarning = "warning"
)

// problem is one finding of a check, with its fix.
type problem struct {
	Severity string `json:"severity"`
	Check    string `json:"check"`
	Problem  string `json:"problem"`
	Fix      string `json:"fix"`
}

// tokenFindings is what a check learned about a token.
type tokenFindings struct {
	Issuer   string   `json:"iss"`
	Subject  string   `json:"sub"`
	Audience []string `json:"aud"`
	KeyID    string   `json:"kid,omitempty"`
	Verified bool     `json:"signature_verified"`
}

type checkResult struct {
	Issuer       string         `json:"issuer"`
	DiscoveryURL string         `json:"discovery_url"`
	JWKSURI      string         `json:"jwks_uri,omitempty"`
	Keys         []keyInfo      `json:"keys,omitempty"`
	Token        *tokenFindings `json:"token,omitempty"`
	Problems     []problem      `json:"problems"`
	OK           bool           `json:"ok"`
}

func (r *checkResult) add(sev, check, fix, format string, args ...any) {
	r.Problems = append(r.Problems, problem{Severity: sev, Check: check, Problem: fmt.Sprintf(format, args...), Fix: fix})
}

// checker fetches an issuer as a cloud relying party does.
type checker struct {
	client   *http.Client
	audience string
	subject  string
	token    string
	a        *app
}

// checkFlags are the settings of "ksa issuer check".
type checkFlags struct {
	caFile, tokenFile, audience, subject string
	format                               format
}

func newCheckCmd(a *app) *cobra.Command {
	f := &checkFlags{}
	cmd := &cobra.Command{
		Use:   "check ISSUER-URL [--audience A] [--subject S] [--token FILE]",
		Short: "Fetch an issuer as Entra ID, AWS and Google do, and report every problem with its fix",
		Long: `Fetch the issuer's discovery document and key set anonymously over https,
as Microsoft Entra ID, AWS and Google do, and report every problem found
with its fix:

  - the discovery document unreachable, not public, not JSON;
  - its issuer not exactly ISSUER-URL (a trailing slash counts: AADSTS700211);
  - jwks_uri missing, not https or unreachable;
  - content types other than application/json or application/jwk-set+json;
  - cache headers that make relying parties refetch constantly or hold keys
    past a rotation;
  - a key set with private material, unusable keys, or no RS256 key
    (Entra ID accepts RS256 only);
  - with --token: the token's iss, sub and aud against the federated
    credential's issuer (ISSUER-URL), subject (--subject) and audience
    (--audience), its expiry, and its signature against the published keys.

Exit status 1 when an error-level problem is found.`,
		Example: `  ksa issuer check https://oidcissuer.blob.core.windows.net/cluster-1/
  # a token against the federated credential it will be exchanged with:
  ksa issuer check https://oidc.example.com/cluster-1 --token token.jwt \
      --subject system:serviceaccount:prod:billing --audience api://AzureADTokenExchange
  ksa issuer check https://oidc.example.com/cluster-1 -o json`,
		Args: args(1, 1),
		RunE: run(func(cmd *cobra.Command, args []string) error { return f.run(a, cmd, args[0]) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.audience, "audience", azureAudience, "the federated credential's audience")
	fl.StringVar(&f.subject, "subject", "", "the federated credential's subject, e.g. system:serviceaccount:NS:NAME")
	fl.StringVar(&f.tokenFile, "token", "", "a token to check against the federated credential (- for standard input)")
	fl.StringVar(&f.caFile, "ca-file", "", "also trust these CA certificates (test setups: clouds trust public CAs only)")
	addOutputFlag(cmd, &f.format)
	return cmd
}

func (f *checkFlags) run(a *app, cmd *cobra.Command, issuer string) error {
	if err := firstError(
		onlyWith(cmd, "subject", f.tokenFile != "", "--token"),
		onlyWith(cmd, "audience", f.tokenFile != "", "--token"),
	); err != nil {
		return err
	}
	client, err := httpClient(f.caFile)
	if err != nil {
		return err
	}
	c := &checker{a: a, client: client, audience: f.audience, subject: f.subject}
	if f.tokenFile != "" {
		raw, err := readToken(f.tokenFile, a.stdin)
		if err != nil {
			return err
		}
		c.token = raw
	}
	res := c.check(cmd.Context(), issuer)
	if err := printData(a.stdout, f.format, res, func(w io.Writer) { printCheck(w, res) }); err != nil {
		return err
	}
	if !res.OK {
		n := 0
		for _, p := range res.Problems {
			if p.Severity == sevError {
				n++
			}
		}
		return fail(nil, "apply the fixes above, then check again", "%d problem(s) found with %s", n, issuer)
	}
	return nil
}

// check runs every check it can; a failed step stops the ones that need it.
func (c *checker) check(ctx context.Context, issuer string) *checkResult {
	if ctx == nil {
		ctx = context.Background()
	}
	res := &checkResult{Issuer: issuer, DiscoveryURL: oidc.DiscoveryURL(issuer), Problems: []problem{}}
	defer func() {
		res.OK = !slices.ContainsFunc(res.Problems, func(p problem) bool { return p.Severity == sevError })
	}()
	if !strings.HasPrefix(issuer, "https://") {
		res.add(sevError, "issuer", "serve the issuer over https with a publicly trusted certificate, and use that https:// URL as --service-account-issuer",
			"the issuer %q is not https: Entra ID, AWS and Google fetch https only", issuer)
		return res
	}
	var keys *jwks.Set
	if md := c.discovery(ctx, res); md != nil {
		keys = c.keySet(ctx, res, md)
	}
	if c.token != "" {
		c.checkToken(res, issuer, keys)
	}
	return res
}

// discovery fetches and checks the discovery document.
func (c *checker) discovery(ctx context.Context, res *checkResult) *oidc.ProviderMetadata {
	resp, f := get(ctx, getRequest{URL: res.DiscoveryURL, Client: c.client, Accept: "application/json",
		Timeout: oidc.DefaultDiscoveryTimeout, MaxBytes: oidc.MaxDiscoveryBytes})
	if f != nil {
		res.add(sevError, "discovery", fetchFix(f, "upload DIR/.well-known/openid-configuration (ksa issuer render) so that it is served at "+res.DiscoveryURL),
			"the discovery document %s cannot be fetched anonymously: %s", res.DiscoveryURL, f)
		return nil
	}
	checkContentType(res, "discovery", resp.Header, []string{oidc.DiscoveryContentType}, oidc.DiscoveryContentType)
	checkCache(res, "discovery", resp.Header)
	md, err := oidc.ParseMetadata(resp.Body)
	if err != nil {
		res.add(sevError, "discovery", "upload the document \"ksa issuer render\" writes, unchanged", "the discovery document does not parse: %s", libText(err))
		return nil
	}
	switch {
	case md.Issuer == res.Issuer:
	case strings.TrimSuffix(md.Issuer, "/") == strings.TrimSuffix(res.Issuer, "/"):
		res.add(sevError, "issuer", "make --service-account-issuer, the discovery document's issuer and every federated credential's issuer the same string, trailing slash included (render the documents again with --issuer "+quoted(md.Issuer)+", or check that URL)",
			"the discovery document's issuer %q differs from %q by a trailing slash: relying parties compare byte for byte (Entra ID: AADSTS700211)", md.Issuer, res.Issuer)
	default:
		res.add(sevError, "issuer", "render the documents for this URL (ksa issuer render with --issuer "+quoted(res.Issuer)+"), or check the issuer the document names",
			"the discovery document names the issuer %q, not %q", md.Issuer, res.Issuer)
	}
	res.JWKSURI = md.JWKSURI
	switch {
	case md.JWKSURI == "":
		res.add(sevError, "jwks_uri", "re-render the discovery document with ksa issuer render", "the discovery document has no jwks_uri")
		return nil
	case !strings.HasPrefix(md.JWKSURI, "https://"):
		res.add(sevError, "jwks_uri", "host the key set over https and render with --jwks-uri https://...", "jwks_uri %q is not https: clouds fetch keys over https only", md.JWKSURI)
		return nil
	}
	if !slices.Contains(md.SigningAlgs, jwks.RS256) {
		res.add(sevWarning, "discovery", "publish an RSA key (ksa issuer keygen, then render) for Azure workload identity",
			"id_token_signing_alg_values_supported %q lacks RS256, the only algorithm Entra ID accepts", md.SigningAlgs)
	}
	return md
}

// keySet fetches and checks the key set.
func (c *checker) keySet(ctx context.Context, res *checkResult, md *oidc.ProviderMetadata) *jwks.Set {
	resp, f := get(ctx, getRequest{URL: md.JWKSURI, Client: c.client, Accept: oidc.JWKSContentType + ", application/json",
		Timeout: jwks.DefaultFetchTimeout, MaxBytes: jwks.DefaultMaxSetBytes})
	if f != nil {
		res.add(sevError, "jwks_uri", fetchFix(f, "upload DIR/openid/v1/jwks (ksa issuer render) so that it is served at "+termSafe(md.JWKSURI)+", or render with the --jwks-uri where it is"),
			"the key set %s cannot be fetched anonymously: %s", termSafe(md.JWKSURI), f)
		return nil
	}
	checkContentType(res, "jwks", resp.Header, []string{oidc.JWKSContentType, "application/json"}, oidc.JWKSContentType)
	checkCache(res, "jwks", resp.Header)
	if err := jwks.Audit(resp.Body); errors.Is(err, jwks.ErrPrivateMaterial) {
		res.add(sevError, "jwks", "delete the published key set now, generate a new key (ksa issuer keygen), re-render and upload: the key is compromised",
			"the key set publishes private key material: %s", libText(err))
		return nil
	}
	set, err := jwks.ParseSet(resp.Body, jwks.ParseOptions{})
	if err != nil {
		res.add(sevError, "jwks", "upload the key set \"ksa issuer render\" writes, unchanged", "the key set is unusable: %s", libText(err))
		return nil
	}
	for _, s := range set.Skipped {
		res.add(sevWarning, "jwks", "publish RSA (2048 to 8192 bits) or ECDSA P-256/384/521 keys only", "a key is skipped by relying parties: %s", libText(s))
	}
	rs256 := false
	for _, k := range set.Keys {
		res.Keys = append(res.Keys, keyInfo{KeyID: k.KeyID, Algorithm: k.Algorithm, Type: keyType(k.Public)})
		if k.Algorithm == jwks.RS256 {
			rs256 = true
		}
	}
	switch {
	case !rs256:
		res.add(sevError, "keys", "sign with an RSA key for Azure workload identity: make one with ksa issuer keygen, then rotate to it with ksa issuer rotate (AWS and Google accept ECDSA too)",
			"no RS256 key: Entra ID accepts RS256 tokens only, so every exchange fails")
	default:
		for _, k := range set.Keys {
			if k.Algorithm != jwks.RS256 {
				res.add(sevWarning, "keys", "sign with the RS256 key when the tokens go to Entra ID",
					"key %s is %s: Entra ID ignores it, so tokens it signs cannot be exchanged there", termSafe(k.KeyID), k.Algorithm)
			}
		}
	}
	return set
}

// checkToken holds a token to the federated credential and the key set.
func (c *checker) checkToken(res *checkResult, issuer string, set *jwks.Set) {
	claims, err := tokens.ParseUnverified(c.token)
	if err != nil {
		res.add(sevError, "token", "pass the service-account token alone (a compact JWT, as in the projected token file)", "the token does not parse: %s", libText(err))
		return
	}
	tf := &tokenFindings{Issuer: claims.Issuer, Subject: claims.Subject, Audience: claims.Audience}
	if h, err := decodeHeader(c.token); err == nil {
		tf.KeyID, _ = h["kid"].(string)
	}
	res.Token = tf
	switch {
	case claims.Issuer == issuer:
	case strings.TrimSuffix(claims.Issuer, "/") == strings.TrimSuffix(issuer, "/"):
		res.add(sevError, "token", "give kube-apiserver --service-account-issuer and the federated credential the same issuer, trailing slash included",
			"the token's iss %q differs from the issuer %q by a trailing slash: Entra ID refuses it (AADSTS700211)", claims.Issuer, issuer)
	default:
		res.add(sevError, "token", "use a token of this cluster, or check the issuer the federated credential names",
			"the token's iss %q is not the issuer %q (Entra ID: AADSTS700211)", claims.Issuer, issuer)
	}
	if c.audience != "" && !slices.Contains(claims.Audience, c.audience) {
		res.add(sevError, "token", "request the token for "+strconv.Quote(c.audience)+" (serviceAccountToken.audience of the projected volume), or set the federated credential's audience to one of the token's",
			"the token's aud %q does not include the federated credential's audience %q (Entra ID: AADSTS700212)", claims.Audience, c.audience)
	}
	if c.subject != "" && claims.Subject != c.subject {
		res.add(sevError, "token", "set the federated credential's subject to "+strconv.Quote(claims.Subject)+", or use the token of service account "+strconv.Quote(c.subject),
			"the token's sub %q is not the federated credential's subject %q (Entra ID: AADSTS700213)", claims.Subject, c.subject)
	}
	now := c.a.now()
	if !claims.Expiry.IsZero() && !now.Before(claims.Expiry) {
		res.add(sevError, "token", "use a fresh token: the kubelet rotates projected tokens, read the file again before each exchange",
			"the token expired %s (Entra ID: AADSTS700024)", relTime(claims.Expiry, now))
	}
	if set == nil || claims.Issuer != issuer {
		return
	}
	src, err := jwks.NewStaticSource(set.Keys...)
	if err != nil {
		return
	}
	v, err := tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{issuer}, Keys: src, InsecureSkipAudienceCheck: true,
		AcceptMissingAudience: true, SkipObjectCheck: true, Leeway: tokens.DefaultLeeway, Now: c.a.now})
	if err != nil {
		return
	}
	_, err = v.Validate(context.Background(), c.token)
	switch {
	case err == nil, errors.Is(err, tokens.ErrExpired):
		tf.Verified = true // expiry is checked after the signature
	case errors.Is(err, tokens.ErrUnknownKeyID):
		res.add(sevError, "token", "publish the key that signs (give ksa issuer render the --key of kube-apiserver's --service-account-signing-key-file) and upload the documents",
			"the token's kid %q is not in the published key set", tf.KeyID)
	case errors.Is(err, tokens.ErrBadSignature):
		res.add(sevError, "token", "the token was not signed by the published key with its kid: check kube-apiserver's --service-account-signing-key-file",
			"the token's signature does not verify with the published key %q", tf.KeyID)
	default:
		res.add(sevError, "token", "use a token kube-apiserver issued for this issuer", "the token does not validate: %s", libText(err))
	}
}

// checkContentType reports a Content-Type outside want.
func checkContentType(res *checkResult, what string, h http.Header, want []string, best string) {
	ct := h.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && slices.Contains(want, mt) {
		return
	}
	if ct == "" {
		ct = "none"
	}
	res.add(sevWarning, what, "set the object's Content-Type to "+best+" (az storage blob upload --content-type "+best+"; aws s3 cp --content-type "+best+")",
		"the %s is served with Content-Type %s: strict relying parties refuse it", documentName(what), termSafe(ct))
}

// checkCache reports Cache-Control that hurts rotation or load.
func checkCache(res *checkResult, what string, h http.Header) {
	cc := strings.ToLower(h.Get("Cache-Control"))
	const fix = "serve it with Cache-Control: public, max-age=3600 (as kube-apiserver does)"
	if cc == "" {
		res.add(sevWarning, what, fix, "the %s has no Cache-Control: each relying party picks its own cache time, so key rotations take effect at unknown times", documentName(what))
		return
	}
	for _, d := range strings.Split(cc, ",") {
		name, val, _ := strings.Cut(strings.TrimSpace(d), "=")
		switch name {
		case "no-store", "no-cache":
			res.add(sevWarning, what, fix, "the %s is served with Cache-Control %q: relying parties refetch it for every token", documentName(what), cc)
		case "max-age":
			n, err := strconv.Atoi(strings.Trim(val, `"`))
			switch {
			case err != nil:
				res.add(sevWarning, what, fix, "the %s has an unreadable max-age %q", documentName(what), val)
			case n == 0:
				res.add(sevWarning, what, fix, "the %s is served with max-age=0: relying parties refetch it for every token", documentName(what))
			case n > 86400:
				res.add(sevWarning, what, fix, "the %s may be cached for %s (max-age=%d): a new key stays unknown that long after a rotation", documentName(what), secs(int64(n)), n)
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

// fetchFix says how to fix a failed GET; notFound is the advice for a
// missing document.
func fetchFix(f *getFailure, notFound string) string {
	switch f.Status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return "make it publicly readable: anonymous blob access on the container, or for kube-apiserver itself bind the system:service-account-issuer-discovery ClusterRole to system:unauthenticated"
	case http.StatusNotFound:
		return notFound
	case 0:
		return "make the host reachable from the internet over https with a publicly trusted certificate"
	}
	return "make it answer 200 with the document"
}

// printCheck writes a check result as text, every value taken from a
// server or a token through termSafe, every problem and fix as one safe
// line.
func printCheck(w io.Writer, res *checkResult) {
	fmt.Fprintf(w, "issuer:    %s\ndiscovery: %s\n", termSafe(res.Issuer), termSafe(res.DiscoveryURL))
	if res.JWKSURI != "" {
		fmt.Fprintf(w, "jwks_uri:  %s\n", termSafe(res.JWKSURI))
	}
	for _, k := range res.Keys {
		fmt.Fprintf(w, "key:       %s %s %s\n", termSafe(k.KeyID), termSafe(k.Algorithm), k.Type)
	}
	if t := res.Token; t != nil {
		fmt.Fprintf(w, "token:     iss %s, sub %s, aud %s, signature verified: %t\n", termSafe(t.Issuer), termSafe(t.Subject), termSafeAll(t.Audience, ","), t.Verified)
	}
	if len(res.Problems) == 0 {
		fmt.Fprintln(w, "\nno problems found: Entra ID, AWS and Google can fetch this issuer")
		return
	}
	fmt.Fprintln(w)
	for _, p := range res.Problems {
		fmt.Fprintf(w, "%s [%s]: %s\n  fix: %s\n", p.Severity, p.Check, oneLine(p.Problem), oneLine(p.Fix))
	}
}
