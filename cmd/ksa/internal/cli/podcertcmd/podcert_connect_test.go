package podcertcmd

import (
	"bytes"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
)

// TestConnectError: each reason the controller cannot start gets its own
// fix; only a refusal of the RBAC says to grant it.
func TestConnectError(t *testing.T) {
	const server = "https://127.0.0.1:6443"
	refused := &url.Error{Op: "Get", URL: server + "/apis", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	untrusted := &url.Error{Op: "Get", URL: server + "/apis", Err: x509.UnknownAuthorityError{}}
	pcr := schema.GroupResource{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}
	for _, tc := range []struct {
		name      string
		err       error
		what, fix string
	}{
		{name: "unreachable", err: fmt.Errorf("podcertctl: discovering: %w", refused),
			what: "kube-apiserver at " + server + " does not answer", fix: "check the server address in --kubeconfig"},
		{name: "untrusted", err: fmt.Errorf("podcertctl: discovering: %w", untrusted),
			what: "kube-apiserver at " + server + " presented a certificate this configuration does not trust", fix: "check certificate-authority-data"},
		{name: "unauthorized", err: apierrors.NewUnauthorized("bad token"), fix: "check the credentials"},
		{name: "forbidden", err: apierrors.NewForbidden(pcr, "", errors.New("no RBAC")), fix: "grant the RBAC that ksa podcert rbac prints"},
		{name: "not served", err: apierrors.NewNotFound(pcr, ""), fix: "enable the PodCertificateRequest API"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e *base.Error
			assert.ErrorAs(t, connectError(tc.err, server), &e)
			assert.Contains(t, e.What, tc.what)
			assert.Contains(t, e.Fix, tc.fix)
			if tc.name != "forbidden" {
				assert.NotContains(t, e.Fix, "RBAC")
			}
		})
	}
}

// kube-apiserver's warnings are lines of the command's log.
func TestSlogWarnings(t *testing.T) {
	var b bytes.Buffer
	w := slogWarnings{slog.New(slog.NewTextHandler(&b, nil))}
	w.HandleWarningHeader(299, "-", "certificates.k8s.io/v1beta1 is deprecated")
	w.HandleWarningHeader(199, "-", "not a warning of the API")
	assert.Contains(t, b.String(), `level=WARN msg="kube-apiserver warns" warning="certificates.k8s.io/v1beta1 is deprecated"`)
	assert.NotContains(t, b.String(), "not a warning")
}
