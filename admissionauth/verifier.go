package admissionauth

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/tokens"
)

// DefaultMaxRequestBytes bounds the AdmissionReview body by default: 7 MiB,
// room for an UPDATE review carrying two objects of up to 3 MiB (the API
// server's own request-body limit) and the review around them.
const DefaultMaxRequestBytes = 7 << 20

// Mode says what the verifier does with a request that carries no token.
type Mode int

const (
	// Require refuses a request without a token ([ErrNoToken]). The zero
	// value: a webhook that verifies tokens refuses callers without one.
	Require Mode = iota
	// Accept lets a request without an Authorization header through,
	// unauthenticated, while the feature is alpha and kube-apiservers may
	// not send tokens; a token that is present is verified all the same,
	// and refused if it fails.
	Accept
)

// String returns "require" or "accept".
func (m Mode) String() string {
	switch m {
	case Require:
		return "require"
	case Accept:
		return "accept"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// TokenCheck validates a token for the given audiences: its signature,
// issuer and times, and with an ObjectGetter its live objects. The method
// values (*tokens.Validator).ValidateFor and (*oidc.Verifier).VerifyFor are
// TokenChecks.
type TokenCheck func(ctx context.Context, token string, audiences []string) (*tokens.Result, error)

// Configuration names a webhook configuration this webhook is registered
// in: a token must be bound to one of them.
type Configuration struct {
	// Kind is tokens.BoundValidatingWebhookConfiguration or
	// tokens.BoundMutatingWebhookConfiguration.
	Kind tokens.BoundKind
	// Name is the configuration's metadata.name.
	Name string
}

// Config configures a [Verifier]. Every field but Mode and MaxRequestBytes
// is required: there is no default caller, audience or configuration.
type Config struct {
	// Tokens validates the token (signature, issuer, expiry, and live
	// objects if its validator has an ObjectGetter), always for the one
	// audience below, whatever its own audiences.
	Tokens TokenCheck
	// Audience is this webhook's URL as registered in its configuration:
	// clientConfig.url verbatim, or [ServiceAudience] of its
	// clientConfig.service. Tokens for any other audience are refused.
	Audience string
	// Configurations are the webhook configurations this webhook is
	// registered in.
	Configurations []Configuration
	// ServiceAccounts are the service accounts whose tokens may call the
	// webhook (namespace and name; the UID too when set). Kubernetes
	// v1.37.2 has no account of its own for kube-apiserver (KEP-6060
	// proposes kube-system/webhook-auth): name the one the caller's tokens
	// are issued to.
	ServiceAccounts []ksa.ServiceAccount
	// Mode is Require (the zero value) or Accept.
	Mode Mode
	// MaxRequestBytes bounds the body VerifyRequest and Handler read; zero
	// means DefaultMaxRequestBytes.
	MaxRequestBytes int64
}

// Verifier verifies that a request to an admission webhook comes from a
// caller holding a token minted for this webhook and this review. It is
// safe for concurrent use.
type Verifier struct {
	check    TokenCheck
	aud      []string
	configs  []Configuration
	accounts []ksa.ServiceAccount
	mode     Mode
	maxBody  int64
}

// New checks the config and returns a Verifier. Errors are *ksa.ConfigError.
func New(cfg Config) (*Verifier, error) {
	switch {
	case cfg.Tokens == nil:
		return nil, configError("Config.Tokens", "is required")
	case !strings.HasPrefix(cfg.Audience, "https://"):
		return nil, configError("Config.Audience", fmt.Sprintf("%q is not the https URL of the webhook", cfg.Audience))
	case len(cfg.Configurations) == 0:
		return nil, configError("Config.Configurations", "is required")
	case len(cfg.ServiceAccounts) == 0:
		return nil, configError("Config.ServiceAccounts", "is required")
	case cfg.Mode != Require && cfg.Mode != Accept:
		return nil, configError("Config.Mode", fmt.Sprintf("%d is neither Require nor Accept", int(cfg.Mode)))
	case cfg.MaxRequestBytes < 0:
		return nil, configError("Config.MaxRequestBytes", "is negative")
	}
	for _, c := range cfg.Configurations {
		if !c.Kind.IsWebhook() {
			return nil, configError("Config.Configurations", fmt.Sprintf("kind %q is not a webhook configuration", c.Kind))
		}
		if !ksa.IsObjectName(c.Name) {
			return nil, configError("Config.Configurations", fmt.Sprintf("%q is not a configuration name", c.Name))
		}
	}
	for _, sa := range cfg.ServiceAccounts {
		if err := sa.Check(); err != nil {
			return nil, &ksa.ConfigError{Field: prefix + ".Config.ServiceAccounts", Reason: "holds an invalid service account", Err: err}
		}
	}
	v := &Verifier{
		check:    cfg.Tokens,
		aud:      []string{cfg.Audience},
		configs:  slices.Clone(cfg.Configurations),
		accounts: slices.Clone(cfg.ServiceAccounts),
		mode:     cfg.Mode,
		maxBody:  cfg.MaxRequestBytes,
	}
	if v.maxBody == 0 {
		v.maxBody = DefaultMaxRequestBytes
	}
	return v, nil
}

// Result is what a verified request proves.
type Result struct {
	// Authenticated is false only in Accept mode for a request without a
	// token; every other field is then zero.
	Authenticated bool
	// Token is the validated token: its service account, claims, issuer
	// and key. Callers must not modify it.
	Token *tokens.Result
	// Configuration is the webhook configuration the token is bound to.
	Configuration Configuration
	// ConfigurationUID is its UID as the token names it.
	ConfigurationUID string
	// APIGroup is the group the token was attested for ("*" for all).
	APIGroup string
	// Review is the AdmissionReview the request carries.
	Review Review
}

// Verify checks a request's Authorization header value against the review
// it carries: the Bearer token valid for this webhook's audience, bound to
// one of its configurations, issued to an accepted service account, and
// attested for the review's API group ("*" or the very group). In Accept
// mode an empty header yields an unauthenticated Result.
func (v *Verifier) Verify(ctx context.Context, authorization string, review Review) (*Result, error) {
	if authorization == "" {
		if v.mode == Accept {
			return &Result{Review: review}, nil
		}
		return nil, errs.Wrap(prefix, ErrNoToken, "no Authorization header: the caller sent no token", nil)
	}
	tok, err := bearer(authorization)
	if err != nil {
		return nil, err
	}
	res, err := v.check(ctx, tok, v.aud)
	if err != nil {
		return nil, tokenError(err)
	}
	k := res.Claims.Kubernetes
	kind, ref, ok := k.WebhookBinding()
	if !ok {
		return nil, errs.Wrap(prefix, ErrNotWebhookToken, fmt.Sprintf("token of %s is bound to no webhook configuration", res.Identity.ServiceAccount.Username()), nil)
	}
	bound := Configuration{Kind: kind, Name: ref.Name}
	if !slices.Contains(v.configs, bound) {
		return nil, &BindingError{Kind: kind, Name: ref.Name, Accepted: slices.Clone(v.configs)}
	}
	sa := res.Identity.ServiceAccount
	if !v.acceptsAccount(sa) {
		return nil, errs.Wrap(prefix, ErrServiceAccount, fmt.Sprintf("token of %s, not of an accepted caller", sa.Username()), nil)
	}
	group, ok := k.AdmissionReviewAPIGroup()
	if !ok || (group != tokens.AllAPIGroups && group != review.Group) {
		return nil, errs.Wrap(prefix, ErrAPIGroup, fmt.Sprintf("token attested for API group %q, the review is about group %q", group, review.Group), nil)
	}
	return &Result{
		Authenticated:    true,
		Token:            res,
		Configuration:    bound,
		ConfigurationUID: ref.UID,
		APIGroup:         group,
		Review:           review,
	}, nil
}

func (v *Verifier) acceptsAccount(sa ksa.ServiceAccount) bool {
	for _, a := range v.accounts {
		if a.Namespace == sa.Namespace && a.Name == sa.Name && (a.UID == "" || a.UID == sa.UID) {
			return true
		}
	}
	return false
}

// bearer takes the token out of an Authorization header value: the scheme
// Bearer in any case, one space or more, a token without spaces.
func bearer(h string) (string, error) {
	const scheme = "bearer "
	bad := func(reason string) (string, error) {
		return "", errs.Wrap(prefix, ErrAuthorization, "authorization header "+reason, nil)
	}
	if len(h) <= len(scheme) || !strings.EqualFold(h[:len(scheme)], scheme) {
		return bad("does not use the Bearer scheme")
	}
	tok := strings.TrimLeft(h[len(scheme):], " ")
	switch {
	case tok == "":
		return bad("has an empty token")
	case strings.ContainsAny(tok, " \t,"):
		return bad("holds more than a token")
	}
	return tok, nil
}

// Mode returns the verifier's mode.
func (v *Verifier) Mode() Mode { return v.mode }

// Audience returns the audience tokens must name.
func (v *Verifier) Audience() string { return v.aud[0] }
