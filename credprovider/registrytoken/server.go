package registrytoken

import (
	"context"
	"crypto"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ksa-go/ksa/credprovider"
	"github.com/ksa-go/ksa/internal/jws"
	"github.com/ksa-go/ksa/jwks"
)

// Defaults and bounds of a [Config].
const (
	// DefaultLifetime is how long an issued registry token lives when
	// Config.Lifetime is zero: the five minutes a registry client is
	// expected to refresh within.
	DefaultLifetime = 5 * time.Minute
	// MaxLifetime bounds Config.Lifetime.
	MaxLifetime = time.Hour
	// MinLifetime is the least Config.Lifetime: the registry accepts a
	// token for a minute past its exp anyway.
	MinLifetime = time.Minute
)

// Config configures a [Server]. Its zero value is refused by [New]; a
// Config with no Rules is valid and grants nothing (every scoped request
// is denied).
type Config struct {
	// Issuer is the "iss" of the registry tokens: the registry's
	// auth.token.issuer. Required.
	Issuer string
	// Service is the registry's name, the "service" parameter of token
	// requests and the "aud" of the tokens: its auth.token.service.
	// Required.
	Service string
	// Signer signs the registry tokens (ECDSA, RSA or Ed25519). Required.
	Signer crypto.Signer
	// KeyID is the "kid" header of the tokens; empty means the RFC 7638
	// thumbprint of Signer's public key, the key ID the registry computes
	// for a key of its rootcertbundle. A JWKS given to the registry must
	// use the same ID ([Server.JWKS] writes it).
	KeyID string
	// Check verifies the service-account token: Verify and Audience are
	// required, the pod binding is required unless
	// InsecureSkipPodBinding (credprovider.TokenCheck).
	Check credprovider.TokenCheck
	// Username, when set, is the only Basic username accepted (the
	// credential provider's configured username); empty accepts any.
	Username string
	// Rules say which service account may do what on which repositories.
	Rules []Rule
	// Lifetime of the registry tokens, between MinLifetime and
	// MaxLifetime; zero means DefaultLifetime. A token never outlives the
	// service-account token it was issued for.
	Lifetime time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Server issues registry tokens for service-account tokens. It is safe for
// concurrent use and is an http.Handler (ServeHTTP).
type Server struct {
	cfg   Config
	alg   string
	kid   string
	pub   crypto.PublicKey
	rules []Rule
}

// New validates cfg and returns its Server. A refusal is a *ksa.ConfigError.
func New(cfg Config) (*Server, error) {
	switch {
	case cfg.Issuer == "":
		return nil, configError("Config.Issuer", "is required: the registry's auth.token.issuer")
	case cfg.Service == "":
		return nil, configError("Config.Service", "is required: the registry's auth.token.service")
	case cfg.Signer == nil:
		return nil, configError("Config.Signer", "is required")
	case cfg.Check.Verify == nil:
		return nil, configError("Config.Check.Verify", "is required")
	case cfg.Check.Audience == "":
		return nil, configError("Config.Check.Audience", "is required")
	case cfg.Lifetime != 0 && (cfg.Lifetime < MinLifetime || cfg.Lifetime > MaxLifetime):
		return nil, configError("Config.Lifetime", fmt.Sprintf("is not between %v and %v", MinLifetime, MaxLifetime))
	}
	for i, r := range cfg.Rules {
		if err := r.validate(i); err != nil {
			return nil, err
		}
	}
	pub := cfg.Signer.Public()
	alg, err := jwks.AlgorithmFor(pub)
	if err != nil {
		return nil, configCause("Config.Signer", "is not a key registry tokens can be signed with", err)
	}
	kid := cfg.KeyID
	if kid == "" {
		if kid, err = jwks.Thumbprint(pub); err != nil {
			return nil, configCause("Config.Signer", "is not a key registry tokens can be signed with", err)
		}
	}
	if cfg.Lifetime == 0 {
		cfg.Lifetime = DefaultLifetime
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	rules := make([]Rule, len(cfg.Rules))
	for i, r := range cfg.Rules {
		r.Repositories = append([]string(nil), r.Repositories...)
		r.Actions = append([]string(nil), r.Actions...)
		rules[i] = r
	}
	return &Server{cfg: cfg, alg: alg, kid: kid, pub: pub, rules: rules}, nil
}

// KeyID returns the "kid" of the tokens s signs.
func (s *Server) KeyID() string { return s.kid }

// JWKS returns the key set a registry verifies s's tokens with (its
// auth.token.jwks file): s's public key under s's key ID.
func (s *Server) JWKS() ([]byte, error) {
	k, err := jwks.NewKeyWithID(s.pub, s.kid)
	if err != nil {
		return nil, wrap(ErrIssue, "encoding the public key", err)
	}
	return jwks.MarshalSet([]jwks.Key{k})
}

// Token is an issued registry token.
type Token struct {
	// Raw is the compact JWT.
	Raw string
	// Subject is the "sub": the service account's user name,
	// system:serviceaccount:NAMESPACE:NAME.
	Subject string
	// Access is what the token grants.
	Access []Access
	// IssuedAt and Expiry are its iat and exp.
	IssuedAt, Expiry time.Time
}

// Request is a token request, already read from HTTP.
type Request struct {
	// ServiceAccountToken is the pod's token (the Basic password or the
	// Bearer token).
	ServiceAccountToken string
	// Service is the "service" parameter; it must equal Config.Service.
	Service string
	// Scopes are the parsed "scope" parameters; none asks for a token that
	// grants nothing (docker login).
	Scopes []Scope
}

// Issue verifies req's token, applies the rules and signs a registry token.
// A request whose scopes get no action at all is refused with ErrDenied; one
// granted some of what it asked gets a token for that part, as the registry
// token protocol wants (the registry then refuses the rest).
func (s *Server) Issue(ctx context.Context, req Request) (*Token, error) {
	if req.Service != s.cfg.Service {
		return nil, wrap(ErrBadRequest, "the service parameter names another registry", nil)
	}
	if req.ServiceAccountToken == "" {
		return nil, ErrUnauthenticated
	}
	res, err := credprovider.CheckToken(ctx, &credprovider.Request{ServiceAccountToken: req.ServiceAccountToken}, s.cfg.Check)
	if err != nil {
		return nil, wrap(ErrTokenRefused, "", err)
	}
	sa := res.Identity.ServiceAccount
	access := grant(s.rules, sa, req.Scopes)
	if len(req.Scopes) > 0 && len(access) == 0 {
		return nil, wrap(ErrDenied, fmt.Sprintf("no rule grants %s the scopes asked", res.UserInfo().Username), nil)
	}
	now := s.cfg.Now().Truncate(time.Second)
	exp := now.Add(s.cfg.Lifetime)
	if res.Claims != nil && !res.Claims.Expiry.IsZero() && res.Claims.Expiry.Before(exp) {
		exp = res.Claims.Expiry
	}
	if !exp.After(now) {
		// The verifier's leeway let through a token already past its exp:
		// a registry token would be born expired.
		return nil, wrap(ErrTokenRefused, "the service account token has expired", nil)
	}
	tok := &Token{Subject: res.UserInfo().Username, Access: access, IssuedAt: now, Expiry: exp}
	if tok.Raw, err = s.sign(tok); err != nil {
		return nil, err
	}
	return tok, nil
}

type header struct {
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	Typ string `json:"typ"`
}

type claims struct {
	Issuer    string   `json:"iss"`
	Subject   string   `json:"sub"`
	Audience  []string `json:"aud"`
	Expiry    int64    `json:"exp"`
	NotBefore int64    `json:"nbf"`
	IssuedAt  int64    `json:"iat"`
	ID        string   `json:"jti"`
	Access    []Access `json:"access"`
}

func (s *Server) sign(t *Token) (string, error) {
	access := t.Access
	if access == nil {
		access = []Access{}
	}
	h, err := json.Marshal(header{Alg: s.alg, Kid: s.kid, Typ: "JWT"})
	if err != nil {
		return "", wrap(ErrIssue, "encoding the header", err)
	}
	c, err := json.Marshal(claims{
		Issuer: s.cfg.Issuer, Subject: t.Subject, Audience: []string{s.cfg.Service},
		Expiry: t.Expiry.Unix(), NotBefore: t.IssuedAt.Unix(), IssuedAt: t.IssuedAt.Unix(),
		ID: rand.Text(), Access: access,
	})
	if err != nil {
		return "", wrap(ErrIssue, "encoding the claims", err)
	}
	input := b64(h) + "." + b64(c)
	sig, err := jws.Sign(s.alg, s.cfg.Signer, []byte(input))
	if err != nil {
		return "", wrap(ErrIssue, "signing", err)
	}
	return input + "." + b64(sig), nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
