package credprovcmd

import (
	"context"
	"errors"

	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/credprovider"
	"github.com/ksa-go/ksa/credprovider/tokenexchange"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

// The backends of "ksa credential-provider run".
const (
	backendPassThrough = "pass-through"
	backendExchange    = "exchange"
)

// credProviderFlags are the flags of "ksa credential-provider run", which the
// kubelet passes from its CredentialProviderConfig's args.
type credProviderFlags struct {
	backend  string
	username string
	cacheFor time.Duration
	cacheKey string
	timeout  time.Duration
	// the offline check of the pod's token
	issuers  []string
	keysFile string
	audience string
	// the exchange
	tokenURL         string
	exchangeAudience string
	resource         string
	scopes           []string
	caFile           string
}

// New returns "ksa credential-provider" and its subcommands.
func New(a *base.App) *cobra.Command {
	return base.Group("credential-provider", "The kubelet's image credential provider, with the pod's own token",
		newCredentialProviderRunCmd(a), newCredentialProviderConfigCmd(a))
}

func newCredentialProviderRunCmd(a *base.App) *cobra.Command {
	f := &credProviderFlags{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run as the kubelet's image credential provider, with the pod's own token",
		Long: `Answer the kubelet's image credential provider request
(credentialprovider.kubelet.k8s.io/v1) read on standard input, with the
service-account token the kubelet sends for the pod being started
(tokenAttributes in the kubelet's CredentialProviderConfig; "ksa
credential-provider config" prints one):

  --backend pass-through   the pod's token is the registry password, for
                           registries that verify service-account tokens
                           (tokenAttributes.cacheType must be Token);
  --backend exchange       the token is exchanged at an OAuth 2.0 token
                           endpoint (RFC 8693, --token-url) for the
                           registry's own token.

With --issuer and --keys the token is first verified offline (signature,
issuer, --audience, expiry, bound to a pod) and never leaves the node when it
fails. The kubelet keeps the answer for at most --cache, never past the
credential's or the token's expiry. On failure one line goes to standard
error, nothing to standard output, and the exit status is 1.`,
		Example: `  # the kubelet runs it with the args of its config, the request on standard input
  ksa credential-provider run --username k8s
  ksa credential-provider run --backend exchange --token-url https://registry.example/oauth2/exchange \
      --issuer https://oidc.example.com/cluster-1 --keys sa.pub --audience registry.example`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error { return f.run(a, cmd) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.backend, "backend", backendPassThrough, "pass-through or exchange")
	fl.StringVar(&f.username, "username", "ksa", "the registry username sent with the token")
	fl.DurationVar(&f.cacheFor, "cache", time.Hour, "the longest the kubelet may keep a credential (0: not cached)")
	fl.StringVar(&f.cacheKey, "cache-key", string(credprovider.CacheImage), "what the kubelet keys the credential by: Image, Registry or Global")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Second, "bound on the whole answer (the kubelet kills a plugin after 1m)")
	fl.StringArrayVar(&f.issuers, "issuer", nil, "verify the token offline: an accepted issuer (repeatable; needs --keys and --audience)")
	fl.StringVar(&f.keysFile, "keys", "", "the issuer's public keys: a JWKS or PEM file")
	fl.StringVar(&f.audience, "audience", "", "the audience the token must name (tokenAttributes.serviceAccountTokenAudience)")
	fl.StringVar(&f.tokenURL, "token-url", "", "exchange: the RFC 8693 token endpoint (https)")
	fl.StringVar(&f.exchangeAudience, "exchange-audience", "", "exchange: the audience parameter sent")
	fl.StringVar(&f.resource, "exchange-resource", "", "exchange: the resource parameter sent")
	fl.StringArrayVar(&f.scopes, "scope", nil, "exchange: a scope to ask for (repeatable)")
	fl.StringVar(&f.caFile, "ca-file", "", "exchange: also trust these CA certificates")
	return cmd
}

func (f *credProviderFlags) run(a *base.App, cmd *cobra.Command) error {
	p, err := f.provider(a)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	if err := credprovider.Run(ctx, a.Stdin, a.Stdout, p); err != nil {
		return base.Fail(err, credProviderFix(err), "credential-provider run")
	}
	return nil
}

// provider checks the flags and builds the provider they ask for.
func (f *credProviderFlags) provider(a *base.App) (credprovider.Provider, error) {
	keyType := credprovider.CacheKeyType(f.cacheKey)
	switch {
	case f.backend != backendPassThrough && f.backend != backendExchange:
		return nil, base.Usage("give --backend pass-through or --backend exchange", "--backend %q is not a backend", base.TermSafe(f.backend))
	case !slices.Contains([]credprovider.CacheKeyType{credprovider.CacheImage, credprovider.CacheRegistry, credprovider.CacheGlobal}, keyType):
		return nil, base.Usage("give --cache-key Image, Registry or Global", "--cache-key %q is not a cache key type", base.TermSafe(f.cacheKey))
	case f.cacheFor < 0:
		return nil, base.Usage("give --cache 0 (not cached) or a positive duration", "--cache %s is negative", f.cacheFor)
	case f.timeout <= 0 || f.timeout >= time.Minute:
		return nil, base.Usage("give --timeout under 1m, the kubelet's own limit, e.g. --timeout 30s", "--timeout %s is not between 0 and 1m", f.timeout)
	case len(f.issuers) > 0 && (f.keysFile == "" || f.audience == ""):
		return nil, base.Usage("give --keys FILE and --audience with --issuer", "--issuer needs --keys and --audience")
	case len(f.issuers) == 0 && (f.keysFile != "" || f.audience != ""):
		return nil, base.Usage("give --issuer URL with --keys and --audience", "--keys and --audience verify the token only with --issuer")
	case f.backend == backendExchange && f.tokenURL == "":
		return nil, base.Usage("give --token-url https://... with --backend exchange", "--backend exchange needs --token-url")
	case f.backend == backendPassThrough && (f.tokenURL != "" || f.exchangeAudience != "" || f.resource != "" || len(f.scopes) > 0 || f.caFile != ""):
		return nil, base.Usage("add --backend exchange, or drop the exchange flags", "--token-url, --exchange-audience, --exchange-resource, --scope and --ca-file are for --backend exchange")
	}
	cache := credprovider.Cache{For: f.cacheFor, KeyType: keyType}
	check, err := f.check(a)
	if err != nil {
		return nil, err
	}
	if f.backend == backendPassThrough {
		return credprovider.ProviderFunc(func(ctx context.Context, req *credprovider.Request) (*credprovider.Response, error) {
			if check != nil {
				if _, err := credprovider.CheckToken(ctx, req, *check); err != nil {
					return nil, err
				}
			}
			return credprovider.PassThrough(req, f.username, cache, a.Now)
		}), nil
	}
	client, err := f.client()
	if err != nil {
		return nil, err
	}
	ex, err := tokenexchange.New(tokenexchange.Config{
		TokenURL: f.tokenURL, Audience: f.exchangeAudience, Resource: f.resource, Scopes: f.scopes,
		Client: client, Now: a.Now,
	})
	if err != nil {
		return nil, base.Fail(err, "give --token-url as https://host/path", "--token-url %s", base.TermSafe(redactURL(f.tokenURL)))
	}
	return tokenexchange.Provider(tokenexchange.ProviderConfig{Exchanger: ex, Check: check, Username: f.username, Cache: cache, Now: a.Now})
}

// client is the exchange's HTTP client: bounded by --timeout, with
// --ca-file's CAs.
func (f *credProviderFlags) client() (*http.Client, error) {
	c, err := base.HTTPClient(f.caFile)
	if err != nil {
		return nil, err
	}
	c.Timeout = f.timeout
	return c, nil
}

// check is the offline check of --issuer, --keys and --audience; nil
// without --issuer.
func (f *credProviderFlags) check(a *base.App) (*credprovider.TokenCheck, error) {
	if len(f.issuers) == 0 {
		return nil, nil
	}
	data, err := os.ReadFile(f.keysFile)
	if err != nil {
		return nil, base.Fail(err, "give --keys a readable JWKS or PEM file of the issuer's public keys", "reading --keys")
	}
	var keys []jwks.Key
	if strings.HasPrefix(strings.TrimSpace(string(data)), "{") {
		set, err := jwks.ParseSet(data, jwks.ParseOptions{})
		if err != nil {
			return nil, base.Fail(err, "give --keys the issuer's key set (its jwks_uri document) or its PEM public keys", "--keys %s", f.keysFile)
		}
		keys = set.Keys
	} else {
		pubs, err := jwks.ParsePublicKeysPEM(data)
		if err != nil {
			return nil, base.Fail(err, "give --keys the issuer's key set (its jwks_uri document) or its PEM public keys", "--keys %s", f.keysFile)
		}
		for _, pub := range pubs {
			k, err := jwks.NewKey(pub)
			if err != nil {
				return nil, base.Fail(err, "give --keys RSA, ECDSA or Ed25519 public keys", "--keys %s", f.keysFile)
			}
			keys = append(keys, k)
		}
	}
	src, err := jwks.NewStaticSource(keys...)
	if err != nil {
		return nil, base.Fail(err, "give --keys the issuer's key set (its jwks_uri document) or its PEM public keys", "--keys %s", f.keysFile)
	}
	v, err := tokens.NewValidator(tokens.ValidatorConfig{
		Issuers: f.issuers, Keys: src, Audiences: []string{f.audience}, SkipObjectCheck: true, Now: a.Now,
	})
	if err != nil {
		return nil, base.Fail(err, "give each --issuer once, as --service-account-issuer says it", "--issuer")
	}
	return &credprovider.TokenCheck{Verify: v.ValidateFor, Audience: f.audience}, nil
}

// credProviderFix is the fix for a failed answer, in the flags' and the
// kubelet config's words.
func credProviderFix(err error) string {
	switch {
	case errors.Is(err, credprovider.ErrMalformedRequest), errors.Is(err, credprovider.ErrRequestTooLarge):
		return "let the kubelet run it, with apiVersion " + credprovider.APIVersion + " in its CredentialProviderConfig"
	case errors.Is(err, credprovider.ErrNoToken):
		return "set tokenAttributes in the kubelet's CredentialProviderConfig (see 'ksa credential-provider config --help')"
	case errors.Is(err, credprovider.ErrTokenRefused):
		return "check --issuer and --keys against the cluster's issuer, and --audience against tokenAttributes.serviceAccountTokenAudience"
	case errors.Is(err, tokenexchange.ErrRefused):
		return "make the token endpoint (--token-url) trust the cluster's issuer and this service account, or correct --exchange-audience and --scope"
	case errors.Is(err, tokenexchange.ErrBadResponse):
		return "point --token-url at an RFC 8693 token endpoint"
	case errors.Is(err, tokenexchange.ErrExchangeFailed):
		return "check that --token-url answers from this node within --timeout"
	case errors.Is(err, credprovider.ErrInvalidResponse):
		return "check the token's and the registry credential's lifetime, and --cache-key"
	}
	return "see 'ksa credential-provider run --help'"
}

// redactURL drops a URL's user information, query and fragment for
// messages.
func redactURL(s string) string {
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	if scheme, rest, ok := strings.Cut(s, "://"); ok {
		if at := strings.LastIndex(strings.SplitN(rest, "/", 2)[0], "@"); at >= 0 {
			return scheme + "://" + rest[at+1:]
		}
	}
	return s
}
