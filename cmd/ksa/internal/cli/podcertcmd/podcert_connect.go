package podcertcmd

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
)

// clusterConfig loads the rest.Config of "ksa podcert serve": --kubeconfig,
// $KUBECONFIG, ~/.kube/config or the pod's in-cluster configuration. With
// none of them, the error says so in the command's words (client-go's own
// text points to a variable it no longer reads).
func clusterConfig(kubeconfig string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	switch {
	case clientcmd.IsEmptyConfig(err):
		return nil, base.Fail(nil, "pass --kubeconfig FILE (or set $KUBECONFIG) naming the cluster, or run the command in a pod of it",
			"no cluster to connect to: no --kubeconfig, no $KUBECONFIG, no ~/.kube/config, and not in a pod")
	case err != nil:
		return nil, base.Fail(err, "pass --kubeconfig FILE (or set $KUBECONFIG) of a readable kubeconfig, or run the command in a pod", "loading the cluster's configuration")
	}
	return rc, nil
}

// slogWarnings logs the warnings kube-apiserver sends (deprecations) as
// the command's log lines, not client-go's.
type slogWarnings struct{ log *slog.Logger }

func (w slogWarnings) HandleWarningHeader(code int, agent, text string) {
	if code == 299 && text != "" {
		w.log.Warn("kube-apiserver warns", "warning", text)
	}
}

// connectError explains why the controller could not start, with the fix
// of its cause: kube-apiserver unreachable or untrusted at server (the
// address the configuration names), the credentials refused, the RBAC
// missing, the API not served.
func connectError(err error, server string) error {
	var (
		ue       *url.Error
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
	)
	switch {
	case errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &hostname):
		return base.Fail(nil, "check certificate-authority-data and server of the cluster in --kubeconfig (or $KUBECONFIG)",
			"kube-apiserver at %s presented a certificate this configuration does not trust", server)
	case errors.As(err, &ue):
		return base.Fail(ue.Err, "check the server address in --kubeconfig (or $KUBECONFIG), and that kube-apiserver runs and is reachable from here",
			"kube-apiserver at %s does not answer", server)
	case apierrors.IsUnauthorized(err):
		return base.Fail(nil, "check the credentials of the user in --kubeconfig (or the pod's service account token)", "%s", ksa.ErrorText(err))
	case apierrors.IsForbidden(err):
		return base.Fail(nil, "grant the RBAC that ksa podcert rbac prints to the identity of --kubeconfig (or the pod's service account)", "%s", ksa.ErrorText(err))
	case apierrors.IsNotFound(err):
		return base.Fail(nil, "enable the PodCertificateRequest API: GA in Kubernetes 1.37; in 1.35 and 1.36 the certificates.k8s.io/v1beta1 API and the PodCertificateRequest feature gate",
			"%s", ksa.ErrorText(err))
	}
	return base.Fail(nil, "grant the RBAC that ksa podcert rbac prints, and enable the PodCertificateRequest API (GA in 1.37)", "%s", ksa.ErrorText(err))
}
