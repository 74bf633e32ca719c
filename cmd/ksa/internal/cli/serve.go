package cli

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/ksa-go/ksa/credspec"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
)

// signalContext is canceled on SIGINT or SIGTERM.
func signalContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

func newWebhookCmd(a *app) *cobra.Command {
	var addr, certFile, keyFile, specsFile string
	var allowFlags []string
	var randomHostname, checkUser bool
	serve := &cobra.Command{
		Use:   "serve --credspecs FILE --allow USER=NAME[,NAME...]",
		Short: "Run the GMSA credential-spec admission webhook",
		Long: `Serve the GMSA admission webhook over https: /mutate inlines the contents of
the GMSACredentialSpec a pod names, /validate checks that the pod's service
account may use it and that inlined contents match, /health answers probes.

The objects come from --credspecs (YAML or JSON, several documents allowed)
and the access rules from --allow; a deployment that reads both from the
API server builds on the credspec package (see interop/credspec). Without
--tls-cert-file a self-signed certificate for localhost is made, and its
file named in the log. Stops on SIGINT or SIGTERM.`,
		Example: `  ksa webhook serve --credspecs webapp01.yaml --allow system:serviceaccount:web:frontend=webapp01
  ksa webhook serve --addr :8443 --tls-cert-file /tls/tls.crt --tls-key-file /tls/tls.key \
      --credspecs /config/credspecs.yaml --allow system:serviceaccount:web:frontend=webapp01`,
		Args: args(0, 0),
		RunE: run(func(cmd *cobra.Command, _ []string) error {
			if (certFile == "") != (keyFile == "") {
				return usage("give both --tls-cert-file and --tls-key-file, or neither", "--tls-cert-file and --tls-key-file go together")
			}
			allow := map[string][]string{}
			for _, v := range allowFlags {
				user, names, ok := strings.Cut(v, "=")
				if !ok || user == "" || names == "" {
					return usage("give --allow USER=NAME[,NAME...], e.g. system:serviceaccount:web:frontend=webapp01", "--allow %q is not USER=NAMES", v)
				}
				allow[user] = append(allow[user], strings.Split(names, ",")...)
			}
			data, err := readInput(specsFile, nil, 16<<20)
			if err != nil {
				return fail(err, "pass a readable YAML file of GMSACredentialSpec objects (ksa credspec generate writes one)", "reading --credspecs %s", specsFile)
			}
			objs, err := credspec.DecodeAll(strings.NewReader(string(data)))
			if err != nil {
				return fail(nil, "pass GMSACredentialSpec manifests (ksa credspec generate writes them)", "%s: %s", specsFile, libText(err))
			}
			src, err := credspec.NewStaticSource(objs...)
			if err != nil {
				return fail(nil, "give each object a distinct name", "%s: %s", specsFile, libText(err))
			}
			log := slog.New(slog.NewTextHandler(a.stderr, nil))
			authz := credspec.AuthorizerFunc(func(_ context.Context, r credspec.UseRequest) (credspec.Decision, error) {
				if slices.Contains(allow[r.User.Username], r.Name) {
					return credspec.Decision{Allowed: true}, nil
				}
				return credspec.Decision{Reason: "not in the --allow list"}, nil
			})
			exp, err := credspec.NewExpander(credspec.ExpanderConfig{Source: src, RandomHostname: randomHostname})
			if err != nil {
				return fail(err, "", "configuring the webhook")
			}
			val, err := credspec.NewValidator(credspec.ValidatorConfig{Source: src, Authorizer: authz, CheckRequestingUser: checkUser})
			if err != nil {
				return fail(err, "", "configuring the webhook")
			}
			h, err := credspec.NewHandler(credspec.HandlerConfig{Expander: exp, Validator: val,
				OnReview: func(o credspec.ReviewOutcome) {
					log.Info("review", "path", o.Path, "uid", o.UID, "operation", o.Operation, "namespace", o.Namespace,
						"allowed", o.Allowed, "patch", o.Patch, "error", o.Err)
				}})
			if err != nil {
				return fail(err, "", "configuring the webhook")
			}
			var tlsConfig *tls.Config
			if certFile != "" {
				certs, err := credspec.NewCertReloader(credspec.CertReloaderConfig{CertFile: certFile, KeyFile: keyFile,
					OnReload: func(err error) { log.Info("certificate reload", "error", err) }})
				if err != nil {
					return fail(err, "pass a PEM certificate and its key", "loading the TLS certificate")
				}
				tlsConfig = certs.TLSConfig()
			} else {
				cert, certPEM, err := selfSigned(a.now())
				if err != nil {
					return fail(err, "", "making a self-signed certificate")
				}
				dir, err := os.MkdirTemp("", "ksa-webhook-")
				if err != nil {
					return fail(err, "", "making a temporary directory")
				}
				defer os.RemoveAll(dir)
				if err := writeFile(filepath.Join(dir, "ca.crt"), certPEM, 0o644, true); err != nil {
					return fail(err, "", "writing the certificate")
				}
				log.Info("self-signed certificate", "file", filepath.Join(dir, "ca.crt"))
				tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fail(err, "choose a free --addr", "listening on %s", addr)
			}
			ctx, stop := signalContext(cmd)
			defer stop()
			srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(tls.NewListener(ln, tlsConfig)) }()
			log.Info("serving", "addr", ln.Addr().String(), "credspecs", src.Names())
			select {
			case err := <-errc:
				return fail(err, "", "serving")
			case <-ctx.Done():
			}
			shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return srv.Shutdown(shutdown)
		}),
	}
	fl := serve.Flags()
	fl.StringVar(&addr, "addr", "127.0.0.1:8443", "listen address")
	fl.StringVar(&certFile, "tls-cert-file", "", "PEM certificate file (reloaded when it changes; default: self-signed)")
	fl.StringVar(&keyFile, "tls-key-file", "", "PEM private key file of the certificate")
	fl.StringVar(&specsFile, "credspecs", "", "YAML or JSON file of GMSACredentialSpec objects (required)")
	fl.StringArrayVar(&allowFlags, "allow", nil, "USER=NAME[,NAME...]: let USER use these GMSACredentialSpecs (repeatable)")
	fl.BoolVar(&randomHostname, "random-hostname", false, "give GMSA pods without a hostname a random one")
	fl.BoolVar(&checkUser, "check-requesting-user", false, "also require the requesting user to be allowed to use the object")
	required(serve, "credspecs")
	return group("webhook", "The GMSA admission webhook", serve)
}

// selfSigned returns a one-day ECDSA certificate for localhost and its PEM.
func selfSigned(now time.Time) (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "ksa-webhook"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

func newSignerCmd(a *app) *cobra.Command {
	var socket, primary string
	var others []string
	var lifetime time.Duration
	serve := &cobra.Command{
		Use:   "serve --socket PATH --key FILE [--verify-key FILE...]",
		Short: "Run the external JWT signer kube-apiserver signs tokens through",
		Long: `Serve kube-apiserver's ExternalJWTSigner API (v1 and v1alpha1) on a Unix
socket, signing with the private key of --key (RSA or ECDSA); every
--previous-key is published for verification only, for the tokens it signed
before a rotation. kube-apiserver runs with
--service-account-signing-endpoint=PATH in place of its key flags, and
caps token lifetimes at --max-token-lifetime. Every signature is verified
before it is returned. Stops on SIGINT or SIGTERM.`,
		Example: `  ksa signer serve --socket /run/ksa/signer.sock --key sa.key
  ksa signer serve --socket /run/ksa/signer.sock --key sa-2.key --previous-key sa.key --max-token-lifetime 24h`,
		Args: args(0, 0),
		RunE: run(func(cmd *cobra.Command, _ []string) error {
			signer, err := loadSigningKey(primary)
			if err != nil {
				return err
			}
			k, err := jwks.NewKey(signer)
			if err != nil {
				return keyFileError(primary, err)
			}
			keys := []extsigner.RingKey{{Key: k, Signer: signer, Role: extsigner.RolePrimary}}
			for _, p := range others {
				kf, err := loadKeyFile(p)
				if err != nil {
					return err
				}
				for _, pk := range kf.Keys {
					keys = append(keys, extsigner.RingKey{Key: pk, Signer: kf.Signer, Role: extsigner.RolePrevious, Since: a.now()})
				}
			}
			ring, err := extsigner.NewRing(extsigner.RingConfig{Keys: keys, MaxTokenLifetime: lifetime})
			if err != nil {
				return fail(nil, "fix the keys or --max-token-lifetime", "%s", libText(err))
			}
			srv, err := extsigner.NewServer(extsigner.ServerConfig{Ring: ring})
			if err != nil {
				return fail(err, "", "configuring the signer")
			}
			l, err := extsigner.Listen(extsigner.ListenConfig{Address: socket})
			if err != nil {
				return fail(nil, "choose a --socket path in a writable directory that no live signer uses", "listening on %s: %s", socket, libText(err))
			}
			ctx, stop := signalContext(cmd)
			defer stop()
			go func() {
				<-ctx.Done()
				srv.GracefulStop()
			}()
			fmt.Fprintf(a.stderr, "signing with %s (kid %s) on %s\n", primary, k.KeyID, socket)
			if err := srv.Serve(l); err != nil && ctx.Err() == nil {
				return fail(err, "", "serving")
			}
			return nil
		}),
	}
	fl := serve.Flags()
	fl.StringVar(&socket, "socket", "", "Unix socket path (kube-apiserver's --service-account-signing-endpoint; required)")
	fl.StringVar(&primary, "key", "", "PEM private key that signs (required)")
	fl.StringArrayVar(&others, "previous-key", nil, "PEM key file still published for verification (repeatable)")
	fl.DurationVar(&lifetime, "max-token-lifetime", 0, "longest token lifetime kube-apiserver may ask for (default: the signer's default)")
	required(serve, "socket", "key")
	return group("signer", "The external JWT signer for kube-apiserver", serve)
}
