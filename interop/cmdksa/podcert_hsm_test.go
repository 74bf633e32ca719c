package cmdksa

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/keystore/keystoretest"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/x509sa"
)

// TestPodCertificateSignerHSM runs "ksa podcert serve" with its CA key on
// a PKCS #11 token (SoftHSM2), named by --ca-key's reference: a request is
// issued, kube-apiserver accepts the status, and the certificate
// authenticates to kube-apiserver as the pod's service account.
func TestPodCertificateSignerHSM(t *testing.T) {
	eachVersion(t, func(t *testing.T, version, bin, work string) {
		hsm := keystoretest.StartSoftHSM(t)
		caCert, caKey := podCA(t)
		require.NoError(t, hsm.Import(caKey, "ca01", "pods-ca"))
		writePEM(t, filepath.Join(work, "ca.crt"), "CERTIFICATE", caCert.Raw)

		cp, pcrs, kubeconfig := podcertPlane(t, version, bin, work, caCert)
		stopSigner, _ := startSigner(t, bin, work, "serve", "--signer-name", podSigner, "--ca-key", hsm.Ref("ca01", ""), "--ca-cert", "ca.crt",
			"--kubeconfig", kubeconfig)

		node := newNode(t, cp)
		ns := cp.Namespace(t)
		cart := newPod(t, cp, ns, "cart", node)
		cartKey := newKey(t)
		name := pcrs.create(t, node, cart, stubCSR(t, cartKey, ""), nil)
		st := pcrs.wait(t, ns, name)
		require.Equal(t, podcert.Issued, st.Outcome(), "%+v", st.Conditions)
		leaf := firstCert(t, st.CertificateChain)
		require.NoError(t, leaf.CheckSignatureFrom(caCert), "signed by the CA key on the token")

		dec, err := x509sa.DecodeCertificate(leaf)
		require.NoError(t, err)
		got := whoAmICert(t, cp, st.CertificateChain, cartKey)
		assert.Equal(t, "system:serviceaccount:"+ns+":cart", got.Username)
		assert.Equal(t, dec.UserInfo().UID, got.UID)

		out := lastLines(stopSigner(), 3)
		assert.Contains(t, out, "stopped: 1 issued, 0 denied, 0 failed")
		assert.NotContains(t, out, hsm.PIN)
	})
}
