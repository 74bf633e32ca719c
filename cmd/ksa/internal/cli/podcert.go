package cli

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ksa-go/ksa/cmd/ksa/internal/podcertctl"
	"github.com/ksa-go/ksa/internal/errs"
	"github.com/ksa-go/ksa/podcert"
)

func newPodcertCmd(a *app) *cobra.Command {
	return group("podcert", "Sign pod certificates (PodCertificateRequests) for a signer name",
		newPodcertServeCmd(a), newPodcertRBACCmd(a))
}

// podcertFlags are the signer's settings.
type podcertFlags struct {
	signerName, caKey, caCert, trustDomain string
	maxLifetime                            time.Duration
	hosts                                  []string
	allowIPs, allowExtensions              bool
}

// policy admits serving DNS names matching a --allow-host pattern, IP
// addresses and subject extensions only when allowed; nil when nothing is
// (every annotation is then denied).
func (f *podcertFlags) policy() podcert.Policy {
	if len(f.hosts) == 0 && !f.allowIPs && !f.allowExtensions {
		return nil
	}
	patterns := f.hosts
	allowIPs, allowExt := f.allowIPs, f.allowExtensions
	return podcert.PolicyFunc(func(req *podcert.Request, asked podcert.Asked) error {
		if len(asked.IPAddresses) > 0 && !allowIPs {
			return fmt.Errorf("IP addresses are not admitted (--allow-ip-hosts)")
		}
		if len(asked.Extensions) > 0 && !allowExt {
			return fmt.Errorf("subject extensions are not admitted (--allow-extensions)")
		}
		for _, name := range asked.DNSNames {
			if !hostAdmitted(name, req, patterns) {
				return fmt.Errorf("DNS name %q matches no --allow-host pattern", name)
			}
		}
		return nil
	})
}

// hostAdmitted reports whether a DNS name (lower case, as podcert reads
// it) matches a pattern: {namespace}, {serviceaccount} and {pod} stand for
// the request's; a pattern starting with "." admits the names below it,
// any other only itself. A placeholder stands for one DNS label only: a
// pattern whose service account or pod name has a dot does not match, so
// that the account "checkout.shop" in another namespace cannot become
// "checkout.shop.svc.cluster.local" through "{serviceaccount}.svc.cluster.local".
func hostAdmitted(name string, req *podcert.Request, patterns []string) bool {
	expand := strings.NewReplacer("{namespace}", req.Namespace, "{serviceaccount}", req.ServiceAccountName, "{pod}", req.PodName)
	for _, p := range patterns {
		if (strings.Contains(p, "{serviceaccount}") && strings.Contains(req.ServiceAccountName, ".")) ||
			(strings.Contains(p, "{pod}") && strings.Contains(req.PodName, ".")) ||
			(strings.Contains(p, "{namespace}") && strings.Contains(req.Namespace, ".")) {
			continue
		}
		p = strings.ToLower(expand.Replace(p))
		if strings.HasPrefix(p, ".") {
			if strings.HasSuffix(name, p) && len(name) > len(p) {
				return true
			}
		} else if name == p {
			return true
		}
	}
	return false
}

// signer builds the podcert.Signer of the flags.
func (f *podcertFlags) signer(a *app) (*podcert.Signer, error) {
	key, err := loadSigningKey(f.caKey)
	if err != nil {
		return nil, err
	}
	data, err := readInput(f.caCert, nil, maxCertFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fail(nil, "check the path", "CA certificate file %s does not exist", f.caCert)
	case err != nil:
		return nil, fail(err, "pass a readable PEM certificate file", "reading %s", f.caCert)
	}
	var chain []*x509.Certificate
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fail(err, "pass the CA's PEM certificate, then its issuers", "%s holds a damaged certificate", f.caCert)
		}
		chain = append(chain, c)
	}
	if len(chain) == 0 {
		return nil, fail(nil, "pass the CA's PEM certificate, then its issuers", "%s holds no certificate", f.caCert)
	}
	cfg := podcert.Config{SignerName: f.signerName, CA: key, Chain: chain, TrustDomain: f.trustDomain,
		MaxLifetime: f.maxLifetime, Policy: f.policy()}
	if a.nowFlag != "" {
		cfg.Clock = a.now
	}
	s, err := podcert.New(cfg)
	if err != nil {
		return nil, fail(nil, "fix --signer-name, the CA files or --max-lifetime", "%s", errs.Text(err))
	}
	return s, nil
}

func newPodcertServeCmd(a *app) *cobra.Command {
	var f podcertFlags
	var kubeconfig, apiVersion, bundle string
	var noBundle bool
	var workers, burst int
	var qps float32
	cmd := &cobra.Command{
		Use:   "serve --signer-name NAME --ca-key FILE --ca-cert FILE",
		Short: "Issue, deny or fail the PodCertificateRequests of a signer name",
		Long: `Watch the PodCertificateRequests naming --signer-name and decide each:
check the request (its stub CSR or proof of possession, the key type), then
issue a certificate from the CA of --ca-key and --ca-cert (the CA first,
then its issuers) carrying the pod's service-account identity, the SPIFFE
ID and the serving hosts asked for through the pod's annotations when an
--allow-host pattern admits them; refused requests are Denied or Failed with
the API's reasons. Every status is checked as kube-apiserver checks it
before it is written. The CA's root is published as a ClusterTrustBundle.

The identity needs the RBAC "ksa podcert rbac" prints. Connects with
--kubeconfig, $KUBECONFIG or the pod's in-cluster configuration.
Stops on SIGINT or SIGTERM.`,
		Example: `  ksa podcert serve --signer-name example.com/pods --ca-key ca.key --ca-cert ca.crt
  ksa podcert serve --signer-name example.com/pods --ca-key ca.key --ca-cert ca.crt --allow-host '{serviceaccount}.{namespace}.svc'`,
		Args: args(0, 0),
		RunE: run(func(cmd *cobra.Command, _ []string) error {
			s, err := f.signer(a)
			if err != nil {
				return err
			}
			rules := clientcmd.NewDefaultClientConfigLoadingRules()
			rules.ExplicitPath = kubeconfig
			rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
			if err != nil {
				return fail(err, "pass --kubeconfig, set $KUBECONFIG, or run in a pod", "loading the cluster's configuration")
			}
			rc.UserAgent = "ksa-podcert"
			rc.QPS, rc.Burst = qps, burst
			cs, err := podcertctl.NewRESTClient(rc)
			if err != nil {
				return fail(err, "", "configuring the client")
			}
			ctl, err := podcertctl.New(podcertctl.Config{Client: cs, Signer: s, APIVersion: apiVersion,
				TrustBundleName: bundle, NoTrustBundle: noBundle, Workers: workers,
				Log: slog.New(slog.NewTextHandler(a.stderr, nil))})
			if err != nil {
				return usage("see 'ksa podcert serve --help'", "%s", errs.Text(err))
			}
			ctx, stop := signalContext(cmd)
			defer stop()
			if err := ctl.Run(ctx); err != nil {
				return fail(nil, "grant the RBAC \"ksa podcert rbac\" prints, and enable the PodCertificateRequest API (GA in 1.37)", "%s", errs.Text(err))
			}
			st := ctl.Stats()
			fmt.Fprintf(a.stderr, "stopped: %d issued, %d denied, %d failed\n", st.Issued, st.Denied, st.Failed)
			return nil
		}),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.signerName, "signer-name", "", "signer name the requests name, e.g. example.com/pods (required)")
	fl.StringVar(&f.caKey, "ca-key", "", "PEM private key of the issuing CA (RSA or ECDSA; required)")
	fl.StringVar(&f.caCert, "ca-cert", "", "PEM certificate of the issuing CA, then its issuers (required)")
	fl.StringVar(&f.trustDomain, "trust-domain", "", "SPIFFE trust domain of the URI SAN (default "+podcert.DefaultTrustDomain+")")
	fl.DurationVar(&f.maxLifetime, "max-lifetime", 0, "longest certificate lifetime (default 24h)")
	fl.StringArrayVar(&f.hosts, "allow-host", nil, "admit a serving DNS name equal to this pattern, or below it when it starts with \".\"; {namespace}, {serviceaccount} and {pod} are the request's, one DNS label each (repeatable)")
	fl.BoolVar(&f.allowIPs, "allow-ip-hosts", false, "admit serving IP addresses")
	fl.BoolVar(&f.allowExtensions, "allow-extensions", false, "admit subject extensions")
	fl.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, ~/.kube/config or in-cluster)")
	fl.StringVar(&apiVersion, "api-version", "", "certificates.k8s.io version: v1 or v1beta1 (default: discovered)")
	fl.StringVar(&bundle, "trust-bundle", "", "ClusterTrustBundle to publish the CA in (default <signer name with : for />:primary-bundle)")
	fl.BoolVar(&noBundle, "no-trust-bundle", false, "do not publish the CA")
	fl.Float32Var(&qps, "kube-api-qps", 50, "requests per second to kube-apiserver (client-side limit)")
	fl.IntVar(&burst, "kube-api-burst", 100, "burst of requests to kube-apiserver above --kube-api-qps")
	fl.IntVar(&workers, "workers", 0, fmt.Sprintf("requests decided at once (default %d)", podcertctl.DefaultWorkers))
	required(cmd, "signer-name", "ca-key", "ca-cert")
	return cmd
}

func newPodcertRBACCmd(a *app) *cobra.Command {
	var cfg podcertctl.RBACConfig
	cmd := &cobra.Command{
		Use:   "rbac --signer-name NAME --namespace NS --service-account NAME",
		Short: "Print the RBAC the signer needs, as YAML for kubectl apply",
		Long: `Print the ServiceAccount, ClusterRole and ClusterRoleBinding that
"ksa podcert serve" needs and no more: read and watch PodCertificateRequests,
update their status, the sign and attest verbs on --signer-name, and create
and update its ClusterTrustBundle.`,
		Example: `  ksa podcert rbac --signer-name example.com/pods --namespace ksa-system --service-account podcert-signer | kubectl apply -f -`,
		Args:    args(0, 0),
		RunE: run(func(cmd *cobra.Command, _ []string) error {
			out, err := podcertctl.Manifests(cfg)
			if err != nil {
				return usage("see 'ksa podcert rbac --help'", "%s", errs.Text(err))
			}
			_, err = a.stdout.Write(out)
			return err
		}),
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.SignerName, "signer-name", "", "signer name (required)")
	fl.StringVar(&cfg.Namespace, "namespace", "", "namespace the signer runs in (required)")
	fl.StringVar(&cfg.ServiceAccount, "service-account", "", "service account the signer runs as (required)")
	fl.StringVar(&cfg.TrustBundleName, "trust-bundle", "", "ClusterTrustBundle it publishes (default <signer name with : for />:primary-bundle)")
	required(cmd, "signer-name", "namespace", "service-account")
	return cmd
}
