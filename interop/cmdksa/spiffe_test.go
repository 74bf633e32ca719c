package cmdksa

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/spiffe/go-spiffe/v2/spiffeid"
	"github.com/spiffe/go-spiffe/v2/svid/x509svid"
	gospiffe "github.com/spiffe/go-spiffe/v2/workloadapi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcerttest"
)

// TestSpiffeSidecar runs the pod-certificate path to SPIFFE software on
// real kube-apiservers (1.37: certificates.k8s.io/v1; 1.36: v1beta1
// behind the feature gate): a PodCertificateRequest created with the
// node's credentials is issued by "ksa podcert serve" (running with the
// RBAC "ksa podcert rbac" prints), the key, the chain and the published
// ClusterTrustBundle are written in the kubelet's layout, and "ksa spiffe
// serve" serves them to go-spiffe's X509Source: an X509-SVID of
// spiffe://cluster.local/ns/<namespace>/sa/cart that the bundle
// verifies. The certificate of a second request, swapped in as the
// kubelet refreshes, reaches the source.
func TestSpiffeSidecar(t *testing.T) {
	eachVersion(t, func(t *testing.T, version, bin, work string) {
		caCert, caKey := podCA(t)
		writePEM(t, filepath.Join(work, "ca.crt"), "CERTIFICATE", caCert.Raw)
		keyDER, err := x509.MarshalPKCS8PrivateKey(caKey)
		require.NoError(t, err)
		writePEM(t, filepath.Join(work, "ca.key"), "PRIVATE KEY", keyDER)
		cp, pcrs, kubeconfig := podcertPlane(t, version, bin, work)
		startSigner(t, bin, work, "serve", "--signer-name", podSigner, "--ca-key", "ca.key", "--ca-cert", "ca.crt", "--kubeconfig", kubeconfig)

		node := newNode(t, cp)
		ns := cp.Namespace(t)
		cart := newPod(t, cp, ns, "cart", node)
		mount, err := podcerttest.NewMount(t.TempDir())
		require.NoError(t, err)
		// kubelet issues a request as the node and mounts the answer with
		// the published trust bundle, in one swap.
		kubelet := func() *x509.Certificate {
			key := newKey(t)
			st := pcrs.wait(t, ns, pcrs.create(t, node, cart, stubCSR(t, key, ""), nil))
			require.Equal(t, podcert.Issued, st.Outcome(), "%+v", st.Conditions)
			der, err := x509.MarshalPKCS8PrivateKey(key)
			require.NoError(t, err)
			bundle := append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), st.CertificateChain...)
			require.NoError(t, mount.Write(map[string][]byte{"credentialbundle.pem": bundle, "ca.pem": []byte(pcrs.trustBundle(t))}))
			return firstCert(t, st.CertificateChain)
		}
		leaf := kubelet()

		addr := "unix://" + filepath.Join(t.TempDir(), "api.sock")
		sidecar := exec.Command(bin, "spiffe", "serve", "--credential-bundle", mount.Path("credentialbundle.pem"),
			"--trust-bundle", podcert.DefaultTrustDomain+"="+mount.Path("ca.pem"), "--socket", addr)
		var logs lockedBuffer
		sidecar.Stdout, sidecar.Stderr = &logs, &logs
		require.NoError(t, sidecar.Start())
		t.Cleanup(func() {
			_ = sidecar.Process.Signal(syscall.SIGTERM)
			assert.NoError(t, sidecar.Wait(), "ksa spiffe serve: %s", lastLines(logs.String(), 20))
		})

		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute) // a guard
		defer cancel()
		src, err := gospiffe.NewX509Source(ctx, gospiffe.WithClientOptions(gospiffe.WithAddr(addr)))
		require.NoError(t, err, "ksa spiffe serve: %s", lastLines(logs.String(), 20))
		defer src.Close()
		svid, err := src.GetX509SVID()
		require.NoError(t, err)
		assert.Equal(t, "spiffe://cluster.local/ns/"+ns+"/sa/cart", svid.ID.String())
		assert.Equal(t, leaf.Raw, svid.Certificates[0].Raw)
		bundle, err := src.GetX509BundleForTrustDomain(spiffeid.RequireTrustDomainFromString(podcert.DefaultTrustDomain))
		require.NoError(t, err)
		assert.True(t, bundle.HasX509Authority(caCert), "the published ClusterTrustBundle")
		_, _, err = x509svid.Verify(svid.Certificates, bundle)
		require.NoError(t, err)

		// The kubelet's refresh.
		next := kubelet()
		for {
			svid, err := src.GetX509SVID()
			require.NoError(t, err)
			if svid.Certificates[0].Equal(next) {
				break
			}
			require.NoError(t, src.WaitUntilUpdated(ctx), "ksa spiffe serve: %s", lastLines(logs.String(), 20))
		}
		t.Logf("%s: %s served to go-spiffe, then its refresh", version, svid.ID)
	})
}
