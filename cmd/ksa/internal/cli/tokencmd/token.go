package tokencmd

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/keyflags"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/tokens"
)

func New(a *base.App) *cobra.Command {
	return base.Group("token", "Inspect, verify and mint service-account tokens",
		newInspectCmd(a), newVerifyCmd(a), newMintCmd(a))
}

// decodeHeader decodes a token's JOSE header without verifying anything.
func decodeHeader(tok string) (map[string]any, error) {
	head, _, ok := strings.Cut(tok, ".")
	if !ok {
		return nil, errors.New("not a compact JWT")
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(head)
	if err != nil {
		return nil, err
	}
	var h map[string]any
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, err
	}
	return h, nil
}

// binding is who a token names and what it is bound to.
type binding struct {
	Username       string `json:"username,omitempty"`
	Namespace      string `json:"namespace,omitempty"`
	ServiceAccount string `json:"service_account,omitempty"`
	UID            string `json:"service_account_uid,omitempty"`
	Pod            string `json:"pod,omitempty"`
	PodUID         string `json:"pod_uid,omitempty"`
	Node           string `json:"node,omitempty"`
	NodeUID        string `json:"node_uid,omitempty"`
	Secret         string `json:"secret,omitempty"`
	SecretUID      string `json:"secret_uid,omitempty"`
	CredentialID   string `json:"credential_id,omitempty"`
	// Webhook says what a token bound to a webhook configuration is for
	// (Kubernetes 1.37, alpha).
	Webhook string `json:"webhook,omitempty"`
}

func bindingOf(c *tokens.Claims) binding {
	id := c.Identity()
	b := binding{Namespace: id.ServiceAccount.Namespace, ServiceAccount: id.ServiceAccount.Name, UID: id.ServiceAccount.UID,
		Pod: id.Pod.Name, PodUID: id.Pod.UID, Node: id.Node.Name, NodeUID: id.Node.UID, CredentialID: id.CredentialID}
	if id.ServiceAccount.Namespace != "" && id.ServiceAccount.Name != "" {
		b.Username = id.ServiceAccount.Username()
	}
	if k := c.Kubernetes; k != nil && k.Secret != nil {
		b.Secret, b.SecretUID = k.Secret.Name, k.Secret.UID
	}
	if l := c.Legacy; l != nil {
		b.Secret = l.SecretName
	}
	b.Webhook = c.Kubernetes.DescribeWebhook()
	return b
}

// tokenReport is what inspect and verify print.
type tokenReport struct {
	Verified  bool            `json:"verified"`
	Note      string          `json:"note,omitempty"`
	Header    map[string]any  `json:"header,omitempty"`
	Issuer    string          `json:"iss"`
	Subject   string          `json:"sub"`
	Audience  []string        `json:"aud"`
	Accepted  []string        `json:"accepted_audiences,omitempty"`
	ID        string          `json:"jti,omitempty"`
	Binding   binding         `json:"binding"`
	IssuedAt  *base.TimeInfo  `json:"iat,omitempty"`
	NotBefore *base.TimeInfo  `json:"nbf,omitempty"`
	Expiry    *base.TimeInfo  `json:"exp,omitempty"`
	WarnAfter *base.TimeInfo  `json:"warnafter,omitempty"`
	Expired   bool            `json:"expired"`
	Stale     bool            `json:"stale"`
	Legacy    bool            `json:"legacy,omitempty"`
	Claims    json.RawMessage `json:"claims"`
}

func newTokenReport(c *tokens.Claims, now time.Time) *tokenReport {
	r := &tokenReport{Issuer: c.Issuer, Subject: c.Subject, Audience: c.Audience, ID: c.ID, Binding: bindingOf(c),
		IssuedAt: base.NewTimeInfo(c.IssuedAt, now), NotBefore: base.NewTimeInfo(c.NotBefore, now), Expiry: base.NewTimeInfo(c.Expiry, now),
		Legacy: c.Legacy != nil, Claims: c.AppendJSON(nil)}
	if r.Audience == nil {
		r.Audience = []string{}
	}
	r.Expired = !c.Expiry.IsZero() && !now.Before(c.Expiry)
	if c.Kubernetes != nil && !c.Kubernetes.WarnAfter.IsZero() {
		r.WarnAfter = base.NewTimeInfo(c.Kubernetes.WarnAfter, now)
		r.Stale = now.After(c.Kubernetes.WarnAfter)
	}
	return r
}

// printTokenReport writes a token report as text, every value taken from
// the token through termSafe.
func printTokenReport(w io.Writer, r *tokenReport) {
	if r.Verified {
		fmt.Fprintln(w, "VERIFIED: signature, issuer, audience and times checked")
	} else {
		fmt.Fprintln(w, "UNVERIFIED: decoded only; the signature was not checked, trust nothing below")
	}
	if len(r.Header) > 0 {
		fmt.Fprintf(w, "header:     alg %s, kid %s\n", headerText(r.Header["alg"]), headerText(r.Header["kid"]))
	}
	fmt.Fprintf(w, "issuer:     %s\nsubject:    %s\naudiences:  %s\n", base.TermSafe(r.Issuer), base.TermSafe(r.Subject), base.TermSafeAll(r.Audience, ", "))
	if len(r.Accepted) > 0 {
		fmt.Fprintf(w, "accepted:   %s\n", base.TermSafeAll(r.Accepted, ", "))
	}
	b := r.Binding
	for _, o := range []struct{ label, name, uid string }{
		{"user:      ", b.Username, b.UID},
		{"pod:       ", b.Pod, b.PodUID},
		{"node:      ", b.Node, b.NodeUID},
		{"secret:    ", b.Secret, b.SecretUID},
	} {
		if o.name != "" {
			fmt.Fprintf(w, "%s %s (uid %s)\n", o.label, base.TermSafe(o.name), base.TermSafe(o.uid))
		}
	}
	if b.Webhook != "" {
		fmt.Fprintf(w, "webhook:    %s\n", base.TermSafe(b.Webhook))
	}
	if r.ID != "" {
		fmt.Fprintf(w, "jti:        %s\n", base.TermSafe(r.ID))
	}
	for _, t := range []struct {
		name string
		t    *base.TimeInfo
	}{{"issued:    ", r.IssuedAt}, {"not before:", r.NotBefore}, {"expires:   ", r.Expiry}, {"warnafter: ", r.WarnAfter}} {
		if t.t != nil {
			fmt.Fprintf(w, "%s %s (%s)\n", t.name, t.t.Time.Format(time.RFC3339), t.t.Relative)
		}
	}
	state := "current"
	switch {
	case r.Expired:
		state = "EXPIRED"
	case r.Stale:
		state = "STALE (past warnafter: kube-apiserver still accepts it and reports it)"
	}
	fmt.Fprintf(w, "state:      %s\n", state)
	if r.Legacy {
		fmt.Fprintln(w, "legacy:     a Secret-based token without audience or expiry: replace it with a TokenRequest token")
	}
}

// headerText writes a header member as text: a string through termSafe,
// anything else (a number, an object an attacker put there) as compact
// JSON through termSafe.
func headerText(v any) string {
	if s, ok := v.(string); ok {
		return base.TermSafe(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return base.TermSafe(string(b))
}

// inspectFlags are the settings of "ksa token inspect".
type inspectFlags struct {
	format base.Format
}

func newInspectCmd(a *base.App) *cobra.Command {
	f := &inspectFlags{}
	cmd := &cobra.Command{
		Use:   "inspect [FILE|-]",
		Short: "Decode a token without verifying it: header, claims, binding, times",
		Long: `Decode a service-account token and show its header, claims, the service
account, pod, node, secret or webhook configuration (Kubernetes 1.37
alpha) it is bound to, and its times relative to now
(expired, stale past warnafter). Nothing is verified: the output says so.
Use "ksa token verify" to check a token. Reads standard input without FILE.`,
		Example: `  ksa token inspect /var/run/secrets/tokens/vault-token
  kubectl create token default | ksa token inspect -
  ksa token inspect token.jwt -o json`,
		Args: base.Args(0, 1),
		RunE: base.Run(func(cmd *cobra.Command, args []string) error { return f.run(a, args) }),
	}
	base.AddOutputFlag(cmd, &f.format)
	return cmd
}

func (f *inspectFlags) run(a *base.App, args []string) error {
	name := "-"
	if len(args) > 0 {
		name = args[0]
	}
	tok, err := base.ReadToken(name, a.Stdin)
	if err != nil {
		return err
	}
	claims, err := tokens.ParseUnverified(tok)
	if err != nil {
		return base.Fail(err, "pass the token alone, a compact JWT of three base64url parts", "%s is not a token", base.InputName(name))
	}
	r := newTokenReport(claims, a.Now())
	r.Note = "UNVERIFIED: decoded only, the signature was not checked"
	r.Header, _ = decodeHeader(tok)
	return base.PrintData(a.Stdout, f.format, r, func(w io.Writer) { printTokenReport(w, r) })
}

// verifyFlags are the settings of "ksa token verify".
type verifyFlags struct {
	issuers, audiences []string
	caFile             string
	// tokenFile is the FILE argument, for the fixes.
	tokenFile string
	format    base.Format
}

func newVerifyCmd(a *base.App) *cobra.Command {
	f := &verifyFlags{}
	cmd := &cobra.Command{
		Use:   "verify --issuer URL --audience A [FILE|-]",
		Short: "Verify a token through its issuer's discovery document and key set",
		Long: `Verify a service-account token as a relying party that knows only the
issuer URL: discover the issuer (anonymously, over https), fetch its key set,
and check the issuer, key, signature, audience and times. Bound objects (pod,
secret, node) are not checked: outside the cluster a token stays valid until
it expires. Reads standard input without FILE. Exit status 1 when the token
is refused.`,
		Example: `  ksa token verify --issuer https://oidc.example.com/cluster-1 --audience vault token.jwt
  kubectl create token billing --audience vault | \
      ksa token verify --issuer https://oidc.example.com/cluster-1 --audience vault -o json`,
		Args: base.Args(0, 1),
		RunE: base.Run(func(cmd *cobra.Command, args []string) error { return f.run(a, cmd, args) }),
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.issuers, "issuer", nil, "accepted issuer URL (repeatable; required)")
	fl.StringArrayVar(&f.audiences, "audience", nil, "accepted audience (repeatable; required)")
	fl.StringVar(&f.caFile, "ca-file", "", "also trust these CA certificates (test setups)")
	base.AddOutputFlag(cmd, &f.format)
	base.Required(cmd, "issuer", "audience")
	return cmd
}

func (f *verifyFlags) run(a *base.App, cmd *cobra.Command, args []string) error {
	name := "-"
	if len(args) > 0 {
		name = args[0]
	}
	f.tokenFile = name
	tok, err := base.ReadToken(name, a.Stdin)
	if err != nil {
		return err
	}
	for _, iss := range f.issuers {
		if err := base.CheckIssuerURL(iss); err != nil {
			return err
		}
	}
	client, err := base.HTTPClient(f.caFile)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	v, err := oidc.NewVerifier(ctx, oidc.VerifierConfig{Issuers: f.issuers, Audiences: f.audiences, Client: client, Now: a.Now})
	if err != nil {
		return f.verifierError(err)
	}
	res, err := v.Verify(ctx, tok)
	if err != nil {
		return f.verifyError(err, tok)
	}
	r := newTokenReport(res.Claims, a.Now())
	r.Verified = true
	r.Accepted = res.Audiences
	r.Header = map[string]any{"alg": res.Algorithm, "kid": res.KeyID}
	return base.PrintData(a.Stdout, f.format, r, func(w io.Writer) { printTokenReport(w, r) })
}

// checkCommand is the issuer check that diagnoses an issuer a token did not
// verify against, with the token when it came from a file.
func (f *verifyFlags) checkCommand(issuer string) string {
	args := []string{"ksa", "issuer", "check", issuer}
	if f.caFile != "" {
		args = append(args, "--ca-file", f.caFile)
	}
	if f.tokenFile != "" && f.tokenFile != "-" {
		args = append(args, "--token", f.tokenFile)
	}
	return base.CommandLine(args...)
}

// verifierError explains a failed discovery.
func (f *verifyFlags) verifierError(err error) error {
	var mm *oidc.IssuerMismatchError
	switch {
	case errors.As(err, &mm) && strings.TrimSuffix(mm.Expected, "/") == strings.TrimSuffix(mm.Discovered, "/"):
		return base.Fail(nil, "pass --issuer exactly as the discovery document says it, trailing slash included: "+mm.Discovered,
			"the issuer %q differs from the discovery document's %q by a trailing slash", mm.Expected, mm.Discovered)
	case errors.As(err, &mm):
		return base.Fail(nil, "pass the issuer the token and the discovery document name", "the discovery document names the issuer %q, not %q", mm.Discovered, mm.Expected)
	case errors.Is(err, oidc.ErrDiscovery):
		return base.Fail(err, "check the issuer URL, then run \""+f.checkCommand(f.issuers[0])+"\" for a full diagnosis", "discovery failed")
	}
	return base.ConfigError(err, base.FlagFor{"VerifierConfig.Issuers": "--issuer", "VerifierConfig.Audiences": "--audience",
		"DiscoveryConfig.Issuer": "--issuer", "VerifierConfig.Client": "--ca-file"}, "ksa token verify")
}

// verifyError explains a refused token.
func (f *verifyFlags) verifyError(err error, tok string) error {
	issuers, audiences := f.issuers, f.audiences
	claims, _ := tokens.ParseUnverified(tok)
	issuer := issuers[0]
	if claims != nil && slices.Contains(issuers, claims.Issuer) {
		issuer = claims.Issuer
	}
	switch {
	case errors.Is(err, tokens.ErrUnknownIssuer) && claims != nil:
		return base.Fail(nil, "verify it against its own issuer, or use a token of "+strings.Join(issuers, ", "),
			"the token's issuer %q is not %s", claims.Issuer, quoteAll(issuers))
	case errors.Is(err, tokens.ErrAudienceMismatch) && claims != nil:
		return base.Fail(nil, "request the token for one of the accepted audiences (kubectl create token --audience, or the projected volume's audience)",
			"the token's audiences %s do not include %s", quoteAll(claims.Audience), quoteAll(audiences))
	case errors.Is(err, tokens.ErrExpired):
		return base.Fail(err, "use a fresh token", "the token is refused")
	case errors.Is(err, tokens.ErrUnknownKeyID):
		return base.Fail(err, "publish the signing key in the issuer's key set (ksa issuer render) and upload it; \""+f.checkCommand(issuer)+"\" shows what is published", "the token is refused")
	case errors.Is(err, tokens.ErrMalformed), errors.Is(err, tokens.ErrTooLarge):
		return base.Fail(err, "pass the token alone, a compact JWT", "the token is refused")
	}
	return base.Fail(err, "run \""+f.checkCommand(issuer)+"\" for a diagnosis", "the token is refused")
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = base.Quoted(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

type mintResult struct {
	Token               string          `json:"token"`
	ExpirationTimestamp time.Time       `json:"expiration_timestamp"`
	Warnings            []string        `json:"warnings,omitempty"`
	Claims              json.RawMessage `json:"claims"`
}

// mintFlags are the settings of "ksa token mint".
type mintFlags struct {
	issuer, File, out, jti     string
	sa                         ksa.ServiceAccount
	audiences                  []string
	lifetime                   time.Duration
	pod, podUID, node, nodeUID string
	force                      bool
	format                     base.Format
}

func newMintCmd(a *base.App) *cobra.Command {
	f := &mintFlags{}
	cmd := &cobra.Command{
		Use:   "mint --issuer URL --signing-key FILE --namespace NS --service-account NAME --uid UID",
		Short: "Mint a service-account token from a signing key (test clusters)",
		Long: `Mint a service-account token as kube-apiserver's TokenRequest would with the
same key and issuer: its lifetime rules (10 minutes to 2^32 seconds, one hour
by default), audiences and pod binding. For test clusters and relying-party
tests: anyone with the key can impersonate every service account.`,
		Example: `  ksa token mint --issuer https://oidc.example.com/cluster-1 --signing-key sa.key \
      --namespace prod --service-account billing --uid 7a3c1a8e-1c5e-4d55-9d0e-2f3b4c5d6e7f \
      --audience api://AzureADTokenExchange > token.jwt
  ksa token mint --issuer https://oidc.example.com/cluster-1 --signing-key sa.key \
      --namespace prod --service-account billing --uid 7a3c1a8e-1c5e-4d55-9d0e-2f3b4c5d6e7f \
      --pod billing-0 --pod-uid 0c0e5c4e-8a4b-4cf4-9e55-7b8e3f7f6a10 --duration 10m -o json`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error { return f.run(a, cmd) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.issuer, "issuer", "", "issuer URL, the tokens' iss (required)")
	fl.StringVar(&f.File, "signing-key", "", "private key file, or the URI of a key in a key store (required)")
	fl.StringVar(&f.sa.Namespace, "namespace", "", "service account namespace (required)")
	fl.StringVar(&f.sa.Name, "service-account", "", "service account name (required)")
	fl.StringVar(&f.sa.UID, "uid", "", "service account UID (required; kubectl get sa NAME -o jsonpath='{.metadata.uid}')")
	fl.StringArrayVar(&f.audiences, "audience", nil, "audience (repeatable; default: the issuer, as kube-apiserver's --api-audiences)")
	fl.DurationVar(&f.lifetime, "duration", time.Hour, "token lifetime, 10m to 2^32 s")
	fl.StringVar(&f.pod, "pod", "", "bind the token to this pod")
	fl.StringVar(&f.podUID, "pod-uid", "", "the pod's UID (required with --pod)")
	fl.StringVar(&f.node, "node", "", "the node the pod runs on")
	fl.StringVar(&f.nodeUID, "node-uid", "", "the node's UID")
	fl.StringVar(&f.out, "out", "", "write the token to this file (mode 0600) instead of standard output; an existing file is not replaced without --force")
	fl.BoolVar(&f.force, "force", false, "let --out replace an existing file (never one holding a private key, nor the --signing-key file)")
	fl.StringVar(&f.jti, "jti", "", "token ID (for tests; default a random UUID)")
	_ = fl.MarkHidden("jti")
	base.AddOutputFlag(cmd, &f.format)
	base.Required(cmd, "issuer", "signing-key", "namespace", "service-account", "uid")
	return cmd
}

func (f *mintFlags) run(a *base.App, cmd *cobra.Command) error {
	if err := base.FirstError(
		base.OnlyWith(cmd, "pod-uid", f.pod != "", "--pod"),
		base.OnlyWith(cmd, "node", f.pod != "", "--pod"),
		base.OnlyWith(cmd, "node-uid", f.node != "", "--node"),
		base.OnlyWith(cmd, "force", f.out != "", "--out"),
	); err != nil {
		return err
	}
	if err := base.CheckIssuerURL(f.issuer); err != nil {
		return err
	}
	if err := base.CheckNames(f.sa.Namespace, f.sa.Name, f.pod); err != nil {
		return err
	}
	signer, err := keyflags.LoadSigner(a, cmd.Context(), f.File, "--signing-key")
	if err != nil {
		return err
	}
	if err := keyflags.ForAPIServer(f.File, signer.Public()); err != nil {
		return err
	}
	cfg := tokens.MinterConfig{Issuer: f.issuer, Signer: signer, Now: a.Now}
	if f.jti != "" {
		jti := f.jti
		cfg.NewJTI = func() string { return jti }
	}
	m, err := tokens.NewMinter(cfg)
	if err != nil {
		return mintError(err)
	}
	req := tokens.Request{ServiceAccount: f.sa, Audiences: f.audiences, ExpirationSeconds: int64(f.lifetime / time.Second)}
	if f.pod != "" || f.podUID != "" {
		req.BoundObject = &tokens.BoundObject{Kind: tokens.BoundPod, Name: f.pod, UID: f.podUID}
		if f.node != "" {
			req.Node = &ksa.ObjectRef{Name: f.node, UID: f.nodeUID}
		}
	}
	tok, err := m.Mint(context.Background(), req)
	if err != nil {
		return mintError(err)
	}
	res := mintResult{Token: tok.Raw, ExpirationTimestamp: tok.ExpirationTimestamp.UTC(), Warnings: tok.Warnings, Claims: tok.Claims.AppendJSON(nil)}
	if f.out != "" {
		if err := a.WriteOutputs(base.Output{Path: f.out, Data: []byte(tok.Raw + "\n"), Perm: 0o600, Flag: "--out", Replace: base.Forced(f.force)}); err != nil {
			return err
		}
	}
	return base.PrintData(a.Stdout, f.format, res, func(w io.Writer) {
		if f.out == "" {
			fmt.Fprintln(w, tok.Raw)
		} else {
			fmt.Fprintf(w, "wrote %s (expires %s)\n", f.out, res.ExpirationTimestamp.Format(time.RFC3339))
		}
		for _, warn := range tok.Warnings {
			fmt.Fprintf(a.Stderr, "warning: %s\n", base.OneLine(warn))
		}
	})
}
