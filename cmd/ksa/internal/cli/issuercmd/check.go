package issuercmd

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/keyflags"
	"github.com/ksa-go/ksa/publish"
)

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
	// report is the library's, for what the command adds to it.
	report *publish.Report
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
	a        *base.App
}

// checkFlags are the settings of "ksa issuer check".
type checkFlags struct {
	caFile, tokenFile, audience, subject string
	format                               base.Format
}

func newCheckCmd(a *base.App) *cobra.Command {
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
		Args: base.Args(1, 1),
		RunE: base.Run(func(cmd *cobra.Command, args []string) error { return f.run(a, cmd, args[0]) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.audience, "audience", publish.EntraAudience, "the federated credential's audience")
	fl.StringVar(&f.subject, "subject", "", "the federated credential's subject, e.g. system:serviceaccount:NS:NAME")
	fl.StringVar(&f.tokenFile, "token", "", "a token to check against the federated credential (- for standard input)")
	fl.StringVar(&f.caFile, "ca-file", "", "also trust these CA certificates (test setups: clouds trust public CAs only)")
	base.AddOutputFlag(cmd, &f.format)
	return cmd
}

func (f *checkFlags) run(a *base.App, cmd *cobra.Command, issuer string) error {
	if err := base.FirstError(
		base.OnlyWith(cmd, "subject", f.tokenFile != "", "--token"),
		base.OnlyWith(cmd, "audience", f.tokenFile != "", "--token"),
	); err != nil {
		return err
	}
	client, err := base.HTTPClient(f.caFile)
	if err != nil {
		return err
	}
	c := &checker{a: a, client: client, audience: f.audience, subject: f.subject}
	if f.tokenFile != "" {
		raw, err := base.ReadToken(f.tokenFile, a.Stdin)
		if err != nil {
			return err
		}
		c.token = raw
	}
	res := c.check(cmd.Context(), issuer)
	if err := base.PrintData(a.Stdout, f.format, res, func(w io.Writer) { printCheck(w, res) }); err != nil {
		return err
	}
	if !res.OK {
		return base.Fail(nil, "apply the fixes above, then check again", "%d problem(s) found with %s", errorCount(res), issuer)
	}
	return nil
}

// check runs every check it can, through the library's, with the
// fixes in the command's words.
func (c *checker) check(ctx context.Context, issuer string) *checkResult {
	if ctx == nil {
		ctx = context.Background()
	}
	rep := publish.Check(ctx, issuer, publish.CheckOptions{HTTPClient: c.client, Token: c.token, Audience: c.audience, Subject: c.subject, Now: c.a.Now})
	res := &checkResult{Issuer: rep.Issuer, DiscoveryURL: rep.DiscoveryURL, JWKSURI: rep.JWKSURI, Problems: []problem{}, report: rep}
	for _, k := range rep.Keys {
		res.Keys = append(res.Keys, keyInfo{KeyID: k.KeyID, Algorithm: k.Algorithm, Type: keyflags.KeyType(k.Public)})
	}
	if t := rep.Token; t != nil {
		res.Token = &tokenFindings{Issuer: t.Issuer, Subject: t.Subject, Audience: t.Audience, KeyID: t.KeyID, Verified: t.Verified}
	}
	for _, f := range rep.Findings {
		res.Problems = append(res.Problems, problem{Severity: string(f.Severity), Check: f.Check, Problem: f.Problem, Fix: checkFix(rep, f)})
	}
	res.OK = rep.OK()
	return res
}

// checkFix is a finding's fix in the command's words: its commands and
// flags where the library says what to do in general.
func checkFix(rep *publish.Report, f publish.Finding) string {
	switch f.Code {
	case publish.CodeDiscoveryUnreachable:
		if f.Status == http.StatusNotFound {
			return "upload DIR/.well-known/openid-configuration (ksa issuer render) so that it is served at " + rep.DiscoveryURL
		}
	case publish.CodeKeySetUnreachable:
		if f.Status == http.StatusNotFound {
			return "upload DIR/openid/v1/jwks (ksa issuer render) so that it is served at " + base.TermSafe(rep.JWKSURI) + ", or render with the --jwks-uri where it is"
		}
	case publish.CodeDiscoveryUnparsable:
		return "upload the document \"ksa issuer render\" writes, unchanged"
	case publish.CodeIssuerTrailingSlash:
		return "make --service-account-issuer, the discovery document's issuer and every federated credential's issuer the same string, trailing slash included (render the documents again with --issuer " + base.Quoted(rep.DiscoveredIssuer) + ", or check that URL)"
	case publish.CodeIssuerMismatch:
		return "render the documents for this URL (ksa issuer render with --issuer " + base.Quoted(rep.Issuer) + "), or check the issuer the document names"
	case publish.CodeJWKSURIMissing:
		return "re-render the discovery document with ksa issuer render"
	case publish.CodeJWKSURINotHTTPS:
		return "host the key set over https and render with --jwks-uri https://..."
	case publish.CodeDiscoveryNoRS256:
		return "publish an RSA key (ksa issuer keygen, then render) for Azure workload identity"
	case publish.CodeKeySetPrivate:
		return "delete the published key set now, generate a new key (ksa issuer keygen), re-render and upload: the key is compromised"
	case publish.CodeKeySetUnusable:
		return "upload the key set \"ksa issuer render\" writes, unchanged"
	case publish.CodeNoRS256:
		return "sign with an RSA key for Azure workload identity: make one with ksa issuer keygen, then rotate to it with ksa issuer rotate (AWS and Google accept ECDSA too)"
	case publish.CodeTokenUnknownKey:
		return "publish the key that signs (give ksa issuer render the --key of kube-apiserver's --service-account-signing-key-file) and upload the documents"
	}
	return f.Fix
}

// printCheck writes a check result as text, every value taken from a
// server or a token through termSafe, every problem and fix as one safe
// line.
func printCheck(w io.Writer, res *checkResult) {
	fmt.Fprintf(w, "issuer:    %s\ndiscovery: %s\n", base.TermSafe(res.Issuer), base.TermSafe(res.DiscoveryURL))
	if res.JWKSURI != "" {
		fmt.Fprintf(w, "jwks_uri:  %s\n", base.TermSafe(res.JWKSURI))
	}
	for _, k := range res.Keys {
		fmt.Fprintf(w, "key:       %s %s %s\n", base.TermSafe(k.KeyID), base.TermSafe(k.Algorithm), k.Type)
	}
	if t := res.Token; t != nil {
		fmt.Fprintf(w, "token:     iss %s, sub %s, aud %s, signature verified: %t\n", base.TermSafe(t.Issuer), base.TermSafe(t.Subject), base.TermSafeAll(t.Audience, ","), t.Verified)
	}
	if len(res.Problems) == 0 {
		fmt.Fprintln(w, "\nno problems found: Entra ID, AWS and Google can fetch this issuer")
		return
	}
	fmt.Fprintln(w)
	for _, p := range res.Problems {
		fmt.Fprintf(w, "%s [%s]: %s\n  fix: %s\n", p.Severity, p.Check, base.OneLine(p.Problem), base.OneLine(p.Fix))
	}
}
