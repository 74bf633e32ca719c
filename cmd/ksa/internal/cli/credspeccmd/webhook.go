package credspeccmd

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/admissionauth"
	"github.com/ksa-go/ksa/cmd/ksa/internal/atomicfile"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/keyflags"
	"github.com/ksa-go/ksa/credspec"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/tokens"
)

func NewWebhook(a *base.App) *cobra.Command {
	return base.Group("webhook", "The GMSA admission webhook", newWebhookServeCmd(a))
}

// webhookFlags are the settings of "ksa webhook serve".
type webhookFlags struct {
	addr, certFile, keyFile, specsFile string
	allow                              []string
	randomHostname, checkUser          bool
	// The caller's token (Kubernetes 1.37, alpha), off by default.
	requireToken, acceptToken                     bool
	tokenIssuer, tokenKeyFile, url, webhookConfig string
	tokenCallers                                  []string
}

func newWebhookServeCmd(a *base.App) *cobra.Command {
	f := &webhookFlags{}
	cmd := &cobra.Command{
		Use:   "serve --credspecs FILE --allow USER=NAME[,NAME...]",
		Short: "Run the GMSA credential-spec admission webhook",
		Long: `Serve the GMSA admission webhook over https: /mutate inlines the contents of
the GMSACredentialSpec a pod names, /validate checks that the pod's service
account may use it and that inlined contents match, /health answers probes,
/info serves the version as "ksa version -o json" prints it.

The objects come from --credspecs (YAML or JSON, several documents allowed)
and the access rules from --allow; a deployment that reads both from the
API server builds on the credspec package (see interop/credspec). Without
--tls-cert-file a self-signed certificate for localhost is made, and its
file named in the log. Stops on SIGINT or SIGTERM.`,
		Example: `  ksa webhook serve --credspecs webapp01.yaml --allow system:serviceaccount:web:frontend=webapp01
  ksa webhook serve --addr :8443 --tls-cert-file /tls/tls.crt --tls-key-file /tls/tls.key \
      --credspecs /config/credspecs.yaml --allow system:serviceaccount:web:frontend=webapp01`,
		Args: base.Args(0, 0),
		RunE: base.Run(func(cmd *cobra.Command, _ []string) error { return f.run(a, cmd) }),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8443", "listen address")
	fl.StringVar(&f.certFile, "tls-cert-file", "", "PEM certificate file (reloaded when it changes; default: self-signed)")
	fl.StringVar(&f.keyFile, "tls-key-file", "", "PEM private key file of the certificate")
	fl.StringVar(&f.specsFile, "credspecs", "", "YAML or JSON file of GMSACredentialSpec objects (required)")
	fl.StringArrayVar(&f.allow, "allow", nil, "USER=NAME[,NAME...]: let USER use these GMSACredentialSpecs (repeatable)")
	fl.BoolVar(&f.randomHostname, "random-hostname", false, "give GMSA pods without a hostname a random one")
	fl.BoolVar(&f.checkUser, "check-requesting-user", false, "also require the requesting user to be allowed to use the object")
	fl.BoolVar(&f.requireToken, "require-apiserver-token", false, "refuse callers without a token bound to --webhook-configuration (Kubernetes 1.37 alpha)")
	fl.BoolVar(&f.acceptToken, "accept-apiserver-token", false, "check a caller's token as --require-apiserver-token does when it sends one, and let callers without one through (while not every caller sends one)")
	fl.StringVar(&f.tokenIssuer, "token-issuer", "", "the callers' tokens' issuer (with --require-apiserver-token or --accept-apiserver-token)")
	fl.StringVar(&f.tokenKeyFile, "token-key-file", "", "PEM public keys of --token-issuer, as --service-account-key-file")
	fl.StringVar(&f.url, "webhook-url", "", "the webhook's https URL as registered, without path (e.g. https://gmsa-webhook.ksa-system.svc:443)")
	fl.StringVar(&f.webhookConfig, "webhook-configuration", "", "name of the webhook's Mutating- and ValidatingWebhookConfiguration")
	fl.StringArrayVar(&f.tokenCallers, "token-caller", nil, "system:serviceaccount:NS:NAME the callers' tokens are issued to (repeatable)")
	base.Required(cmd, "credspecs")
	return cmd
}

// manifestProblem says why a manifest stream does not decode, without the
// decoder's Go types ("cannot unmarshal string into Go struct field ...
// of type v1.ObjectMeta").
func manifestProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if where := strings.TrimPrefix(te.Field, "."); where != "" {
			return fmt.Sprintf("not a GMSACredentialSpec manifest: %s is a JSON %s, which it cannot be", base.Quoted(where), te.Value)
		}
		return fmt.Sprintf("not a GMSACredentialSpec manifest: a JSON %s where an object belongs", te.Value)
	}
	return base.BoundReason(ksa.ErrorText(err))
}

// allowList parses --allow: which GMSACredentialSpecs each user may use.
func (f *webhookFlags) allowList() (map[string][]string, error) {
	allow := map[string][]string{}
	for _, v := range f.allow {
		user, names, ok := strings.Cut(v, "=")
		if !ok || user == "" || names == "" {
			return nil, base.Usage("give --allow USER=NAME[,NAME...], e.g. system:serviceaccount:web:frontend=webapp01", "--allow %q is not USER=NAMES", v)
		}
		allow[user] = append(allow[user], strings.Split(names, ",")...)
	}
	return allow, nil
}

// handler builds the webhook's handler over the objects of --credspecs.
func (f *webhookFlags) handler(a *base.App, log *slog.Logger, allow map[string][]string, cfg credspec.HandlerConfig) (http.Handler, *credspec.StaticSource, error) {
	data, err := base.ReadInput(f.specsFile, nil, 16<<20)
	if err != nil {
		return nil, nil, base.Fail(err, "pass --credspecs a readable YAML file of GMSACredentialSpec objects (ksa credspec generate writes one)", "reading --credspecs %s", f.specsFile)
	}
	objs, err := credspec.DecodeAll(strings.NewReader(string(data)))
	if err != nil {
		return nil, nil, base.Fail(nil, "pass --credspecs GMSACredentialSpec manifests (ksa credspec generate writes them)", "%s: %s", f.specsFile, manifestProblem(err))
	}
	src, err := credspec.NewStaticSource(objs...)
	if err != nil {
		return nil, nil, base.Fail(nil, "give each object of --credspecs a distinct name", "%s: %s", f.specsFile, base.BoundReason(ksa.ErrorText(err)))
	}
	authz := credspec.AuthorizerFunc(func(_ context.Context, r credspec.UseRequest) (credspec.Decision, error) {
		if slices.Contains(allow[r.User.Username], r.Name) {
			return credspec.Decision{Allowed: true}, nil
		}
		return credspec.Decision{Reason: "not in the --allow list"}, nil
	})
	exp, err := credspec.NewExpander(credspec.ExpanderConfig{Source: src, RandomHostname: f.randomHostname})
	if err != nil {
		return nil, nil, base.Fail(err, base.BugFix, "configuring the webhook")
	}
	val, err := credspec.NewValidator(credspec.ValidatorConfig{Source: src, Authorizer: authz, CheckRequestingUser: f.checkUser})
	if err != nil {
		return nil, nil, base.Fail(err, base.BugFix, "configuring the webhook")
	}
	cfg.Expander, cfg.Validator = exp, val
	cfg.OnReview = func(o credspec.ReviewOutcome) {
		log.Info("review", "path", o.Path, "uid", o.UID, "operation", o.Operation, "namespace", o.Namespace,
			"allowed", o.Allowed, "patch", o.Patch, "error", o.Err)
	}
	h, err := credspec.NewHandler(cfg)
	if err != nil {
		return nil, nil, base.Fail(err, base.BugFix, "configuring the webhook")
	}
	return h, src, nil
}

// tlsConfig returns the server's TLS configuration: the certificate of
// --tls-cert-file (reloaded), or a self-signed one whose file is logged;
// cleanup removes that file.
func (f *webhookFlags) tlsConfig(a *base.App, log *slog.Logger) (cfg *tls.Config, cleanup func(), err error) {
	if f.certFile != "" {
		certs, err := podcert.NewSource(podcert.SourceConfig{KeyPath: f.keyFile, ChainPath: f.certFile, AnyCertificate: true,
			OnReload: func(err error) { log.Info("certificate reload", "error", err) }})
		if err != nil {
			if _, ok := base.AsConfigProblem(err); ok {
				return nil, nil, base.ConfigError(err, base.FlagFor{"SourceConfig.ChainPath": "--tls-cert-file", "SourceConfig.KeyPath": "--tls-key-file",
					"SourceConfig": "--tls-cert-file and --tls-key-file"}, "ksa webhook serve")
			}
			return nil, nil, base.Fail(err, "pass --tls-cert-file a PEM certificate and --tls-key-file its private key", "loading the TLS certificate")
		}
		return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.GetCertificate}, func() {}, nil
	}
	cert, certPEM, err := podcert.SelfSigned(podcert.SelfSignedConfig{CommonName: "ksa-webhook", Now: a.Now})
	if err != nil {
		return nil, nil, base.Fail(err, "pass --tls-cert-file and --tls-key-file", "making a self-signed certificate")
	}
	dir, err := os.MkdirTemp("", "ksa-webhook-")
	if err != nil {
		return nil, nil, base.Fail(err, "set $TMPDIR to a writable directory, or pass --tls-cert-file and --tls-key-file", "making a temporary directory")
	}
	cleanup = func() { os.RemoveAll(dir) }
	if err := atomicfile.Write(filepath.Join(dir, "ca.crt"), certPEM, 0o644, true); err != nil {
		cleanup()
		return nil, nil, base.Fail(err, "set $TMPDIR to a writable directory, or pass --tls-cert-file and --tls-key-file", "writing the certificate")
	}
	log.Info("self-signed certificate", "file", filepath.Join(dir, "ca.crt"))
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}, cleanup, nil
}

// callers builds the verifiers of the callers' tokens that
// --require-apiserver-token or --accept-apiserver-token asks for: issuer
// and keys of the flags, checked offline, for --webhook-url's two paths.
func (f *webhookFlags) callers(a *base.App, cmd *cobra.Command) (mutate, validate *admissionauth.Verifier, err error) {
	flag, mode := "--require-apiserver-token", admissionauth.Require
	if f.acceptToken {
		flag, mode = "--accept-apiserver-token", admissionauth.Accept
	}
	if f.tokenIssuer == "" || f.tokenKeyFile == "" || f.url == "" || f.webhookConfig == "" || len(f.tokenCallers) == 0 {
		return nil, nil, base.Usage("give --token-issuer, --token-key-file, --webhook-url, --webhook-configuration and --token-caller with it",
			"%s needs the tokens' issuer, keys, webhook and callers", flag)
	}
	var sas []ksa.ServiceAccount
	for _, c := range f.tokenCallers {
		sa, err := ksa.ParseUsername(c)
		if err != nil {
			return nil, nil, base.Usage("give --token-caller system:serviceaccount:NAMESPACE:NAME", "--token-caller %s is not a service account", base.Quoted(c))
		}
		sas = append(sas, sa)
	}
	kf, err := keyflags.Load(a, cmd.Context(), f.tokenKeyFile, "--token-key-file")
	if err != nil {
		return nil, nil, err
	}
	keys, err := jwks.NewStaticSource(kf.Keys...)
	if err != nil {
		return nil, nil, base.Fail(err, keyflags.Fix, "--token-key-file %s", kf.Path)
	}
	v, err := tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{f.tokenIssuer}, Keys: keys,
		Audiences: []string{f.url + credspec.MutatePath, f.url + credspec.ValidatePath}, SkipObjectCheck: true,
		Cache: &tokens.CacheConfig{}, Now: a.Now})
	if err != nil {
		return nil, nil, base.ConfigError(err, base.FlagFor{"ValidatorConfig.Issuers": "--token-issuer"}, "ksa webhook serve")
	}
	mutate, validate, err = credspec.CallersConfig{Tokens: v.ValidateFor, URL: f.url, Configuration: f.webhookConfig, ServiceAccounts: sas, Mode: mode}.Verifiers()
	if err != nil {
		return nil, nil, base.ConfigError(err, base.FlagFor{"CallersConfig.URL": "--webhook-url", "Config.Audience": "--webhook-url",
			"Config.Configurations": "--webhook-configuration", "Config.ServiceAccounts": "--token-caller"}, "ksa webhook serve")
	}
	return mutate, validate, nil
}

func (f *webhookFlags) run(a *base.App, cmd *cobra.Command) error {
	if (f.certFile == "") != (f.keyFile == "") {
		return base.Usage("give both --tls-cert-file and --tls-key-file, or neither", "--tls-cert-file and --tls-key-file go together")
	}
	allow, err := f.allowList()
	if err != nil {
		return err
	}
	var cfg credspec.HandlerConfig
	if f.requireToken && f.acceptToken {
		return base.Usage("give --require-apiserver-token to refuse callers without a token, or --accept-apiserver-token to let them through",
			"--require-apiserver-token and --accept-apiserver-token exclude each other")
	}
	if f.requireToken || f.acceptToken {
		if cfg.MutateCallers, cfg.ValidateCallers, err = f.callers(a, cmd); err != nil {
			return err
		}
	}
	log := slog.New(slog.NewTextHandler(a.Stderr, nil))
	h, src, err := f.handler(a, log, allow, cfg)
	if err != nil {
		return err
	}
	tlsConfig, cleanup, err := f.tlsConfig(a, log)
	if err != nil {
		return err
	}
	defer cleanup()
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return base.Fail(err, "choose a free --addr", "listening on %s", f.addr)
	}
	ctx, stop := base.SignalContext(cmd)
	defer stop()
	mux := http.NewServeMux()
	mux.Handle("/info", base.InfoHandler(base.ReadVersion(a.BuildInfo)))
	mux.Handle("/", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(tls.NewListener(ln, tlsConfig)) }()
	log.Info("serving", "addr", ln.Addr().String(), "credspecs", src.Names())
	select {
	case err := <-errc:
		return base.Fail(err, "check --addr and the certificate (--tls-cert-file), then start the webhook again", "serving")
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}
