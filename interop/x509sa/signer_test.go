package x509sa_test

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	capi "k8s.io/kubernetes/pkg/apis/certificates"
	capiv1 "k8s.io/kubernetes/pkg/apis/certificates/v1"
	capivalidation "k8s.io/kubernetes/pkg/apis/certificates/validation"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/controller/certificates/authority"
	"k8s.io/kubernetes/pkg/controller/certificates/signer"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/x509sa"
)

// TestKubernetesSignerDropsUID: Kubernetes' own CA
// (authority.Sign, the kube-controller-manager signer's core) re-encodes the
// parsed subject and drops the UID attribute; x509sa's decoder then agrees
// with kube-apiserver that there is no UID. x509sa's Issuer copies the raw
// subject and kube-apiserver sees the UID.
func TestKubernetesSignerDropsUID(t *testing.T) {
	c := newCA(t, "p256-ca", t0)
	der, err := x509sa.CreateCSR(nil, testkeys.Generated("p256"), x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA}})
	require.NoError(t, err)

	kca := &authority.CertificateAuthority{Certificate: c.cert, PrivateKey: c.key}
	kder, err := kca.Sign(der, authority.PermissiveSigningPolicy{
		TTL: time.Hour, Usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth},
		Backdate: 5 * time.Minute, Short: 8 * time.Hour, Now: fixedClock(t0),
	})
	require.NoError(t, err)
	kleaf, err := x509.ParseCertificate(kder)
	require.NoError(t, err)

	resp, ok, err := kubeAuthenticate(c.pool, t0, kleaf)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Empty(t, resp.User.GetUID())
	got, err := ours(t, c.pool, t0, kleaf)
	require.NoError(t, err)
	requireSameUser(t, resp.User, got.UserInfo())

	is, err := x509sa.NewIssuer(x509sa.IssuerConfig{CA: c.cert, Key: c.key, Now: fixedClock(t0)})
	require.NoError(t, err)
	issued, err := is.Issue(x509sa.IssueRequest{CSR: der})
	require.NoError(t, err)
	resp, ok, err = kubeAuthenticate(c.pool, t0, issued.Leaf)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, testSA.UID, resp.User.GetUID())
}

// TestKubernetesValidatesCSRObjects: the objects
// kubeapi.NewCertificateSigningRequest builds pass the API server's create
// validation (request PEM, usages, signer name, expirationSeconds).
func TestKubernetesValidatesCSRObjects(t *testing.T) {
	sub := x509sa.Subject{ServiceAccount: testSA, PodName: "web-0"}
	tests := []struct {
		name string
		key  string
		csr  x509sa.CSROptions
		opts kubeapi.CertificateSigningRequestOptions
	}{
		{name: "client, zero options", key: "p256", csr: x509sa.CSROptions{Subject: sub}},
		{name: "client RSA, 10 minutes", key: "rsa2048", csr: x509sa.CSROptions{Subject: sub}, opts: kubeapi.CertificateSigningRequestOptions{Name: "web-0-client", Lifetime: 10 * time.Minute}},
		{name: "X509-SVID, own signer", key: "ed25519", csr: x509sa.CSROptions{Subject: sub, Usage: x509sa.ClientAndServerAuth, TrustDomain: "cluster.local", Hosts: []string{"web.ns1.svc", "10.0.0.7"}},
			opts: kubeapi.CertificateSigningRequestOptions{SignerName: "example.com/mesh", Lifetime: 24 * time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			der, err := x509sa.CreateCSR(nil, testkeys.Generated(tt.key), tt.csr)
			require.NoError(t, err)
			obj, err := kubeapi.NewCertificateSigningRequest(der, tt.opts)
			require.NoError(t, err)
			if obj.Name == "" {
				obj.Name = obj.GenerateName + "x7k2q" // the API server generates the name before validating
			}
			var internal capi.CertificateSigningRequest
			require.NoError(t, capiv1.Convert_v1_CertificateSigningRequest_To_certificates_CertificateSigningRequest(obj, &internal, nil))
			assert.Empty(t, capivalidation.ValidateCertificateSigningRequestCreate(&internal))
		})
	}
}

// TestSignerNameAgreesWithKubernetes: x509sa.CheckSignerName
// accepts what Kubernetes' ValidateSignerName accepts, except the signers
// that can never sign a service-account subject.
func TestSignerNameAgreesWithKubernetes(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	names := []string{
		"kubernetes.io/kube-apiserver-client", "example.com/my-signer", "example.com/a.b-c.d", "a.b/c",
		"", "an-invalid-signer-name", "an-invalid-signer-name.com/something/else", "example/signer",
		"example.com/something-", "example.com/", "/x", "example.com//", "Example.com/s", "example.com/S",
		long(64) + ".com/s", long(63) + ".com/s", "example.com/" + long(253), "example.com/" + long(254),
		strings.Repeat(long(62)+".", 4)[:250] + ".io/" + strings.Repeat(long(252)+".", 2)[:317],
		strings.Repeat(long(62)+".", 4)[:250] + ".io/" + strings.Repeat(long(252)+".", 2)[:318],
		strings.Repeat("a.", 127) + "io/s", "a..b/c", ".a.b/c", "a.b./c", "a.b/c.", "a.b/.c", "a_b.c/d",
	}
	refusedByUs := map[string]bool{
		"kubernetes.io/legacy-unknown":                true,
		"kubernetes.io/kube-apiserver-client-kubelet": true,
		"kubernetes.io/kubelet-serving":               true,
	}
	for n := range refusedByUs {
		names = append(names, n)
	}
	for _, name := range names {
		kubeOK := len(corevalidation.ValidateSignerName(field.NewPath("spec", "signerName"), name)) == 0
		err := x509sa.CheckSignerName(name)
		if refusedByUs[name] {
			assert.True(t, kubeOK, name)
			require.ErrorIs(t, err, x509sa.ErrInvalidSignerName, name)
			continue
		}
		assert.Equal(t, kubeOK, err == nil, "%q: kubernetes ok=%v, x509sa err=%v", name, kubeOK, err)
	}
}

// TestKubernetesCSRSigner runs kube-controller-manager's
// own kubernetes.io/kube-apiserver-client signer controller running against
// a fake API: the object x509sa builds is signed, and the certificate maps
// to the same user in kube-apiserver and x509sa; a server-auth request for
// that signer, which x509sa refuses to build or approve, fails there too.
func TestKubernetesCSRSigner(t *testing.T) {
	now := time.Now() // the controller signs with the real clock
	c := newCA(t, "p256-ca-signer", now)
	dir := t.TempDir()
	caFile, keyFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.cert.Raw}), 0o600))
	keyDER, err := x509.MarshalPKCS8PrivateKey(c.key)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	client := fake.NewClientset()
	factory := informers.NewSharedInformerFactory(client, 0)
	ctrl, err := signer.NewKubeAPIServerClientCSRSigningController(ctx, client, factory.Certificates().V1().CertificateSigningRequests(), caFile, keyFile, 24*time.Hour)
	require.NoError(t, err)
	factory.Start(ctx.Done())
	done := make(chan struct{})
	go func() { defer close(done); ctrl.Run(ctx, 1) }()
	defer func() { cancel(); <-done }()

	w, err := client.CertificatesV1().CertificateSigningRequests().Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	// waitFor returns the object once the signer has acted on it.
	waitFor := func(name string) *certificatesv1.CertificateSigningRequest {
		for {
			select {
			case ev := <-w.ResultChan():
				obj, ok := ev.Object.(*certificatesv1.CertificateSigningRequest)
				if !ok || obj.Name != name {
					continue
				}
				if len(obj.Status.Certificate) > 0 {
					return obj
				}
				for _, cond := range obj.Status.Conditions {
					if cond.Type == certificatesv1.CertificateFailed {
						return obj
					}
				}
			case <-ctx.Done():
				t.Fatalf("signer did not act on %s", name)
			}
		}
	}
	approve := func(obj *certificatesv1.CertificateSigningRequest) {
		obj.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "x509sa", LastUpdateTime: metav1.Now(),
		}}
		_, err := client.CertificatesV1().CertificateSigningRequests().Create(ctx, obj, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	sub := x509sa.Subject{ServiceAccount: testSA}

	// The client request x509sa builds, approved by x509sa's checks.
	der, err := x509sa.CreateCSR(nil, testkeys.Generated("p256"), x509sa.CSROptions{Subject: sub})
	require.NoError(t, err)
	obj, err := kubeapi.NewCertificateSigningRequest(der, kubeapi.CertificateSigningRequestOptions{Name: "client", Lifetime: time.Hour})
	require.NoError(t, err)
	obj.Spec.Username, obj.Spec.UID, obj.Spec.Groups = testSA.Username(), testSA.UID, append(testSA.Groups(), "system:authenticated")
	_, err = kubeapi.CheckCertificateSigningRequest(obj, x509sa.MatchOptions{})
	require.NoError(t, err)
	approve(obj)
	signed := waitFor("client")
	require.NotEmpty(t, signed.Status.Certificate)
	block, _ := pem.Decode(signed.Status.Certificate)
	require.NotNil(t, block)
	leaf, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	resp, ok, err := kubeAuthenticate(c.pool, now, leaf)
	require.NoError(t, err)
	require.True(t, ok)
	got, err := ours(t, c.pool, now, leaf)
	require.NoError(t, err)
	requireSameUser(t, resp.User, got.UserInfo())
	assert.Empty(t, got.Subject.ServiceAccount.UID, "the in-tree signer drops the UID")

	// A server-auth request for the client signer.
	der, err = x509sa.CreateCSR(nil, testkeys.Generated("p256"), x509sa.CSROptions{Subject: sub, Usage: x509sa.ServerAuth, Hosts: []string{"web.ns1.svc"}})
	require.NoError(t, err)
	_, err = kubeapi.NewCertificateSigningRequest(der, kubeapi.CertificateSigningRequestOptions{})
	require.ErrorIs(t, err, x509sa.ErrInvalidUsage)
	server := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "server"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: x509sa.EncodeCSRPEM(der), SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:   []certificatesv1.KeyUsage{"digital signature", "server auth"},
			Username: testSA.Username(), UID: testSA.UID, Groups: testSA.Groups(),
		},
	}
	_, err = kubeapi.CheckCertificateSigningRequest(server, x509sa.MatchOptions{AllowHost: func(string) bool { return true }})
	require.ErrorIs(t, err, x509sa.ErrInvalidUsage)
	approve(server)
	failed := waitFor("server")
	assert.Empty(t, failed.Status.Certificate)
	var reasons []string
	for _, cond := range failed.Status.Conditions {
		reasons = append(reasons, cond.Reason)
	}
	assert.Contains(t, reasons, "SignerValidationFailure")
}

// TestPodCertificateStatusValidation: certificates and
// timing from x509sa.Issuer, set as an Issued PodCertificateRequest status,
// pass kube-apiserver's status validation, with the x509sa request as the
// stub PKCS#10 request.
func TestPodCertificateStatusValidation(t *testing.T) {
	c := newCA(t, "p256-ca", t0)
	maxJitter := func(n time.Duration) time.Duration { return n - 1 }
	tests := []struct {
		name    string
		maxExp  int32
		opts    x509sa.IssuerConfig
		wantErr string // substring of Kubernetes' error, for the negative case
	}{
		{name: "24h default, kubernetes.io cap", maxExp: 86400},
		{name: "1h minimum", maxExp: 3600},
		{name: "91 days, full jitter", maxExp: 7862400, opts: x509sa.IssuerConfig{MaxLifetime: 91 * 24 * time.Hour, Jitter: maxJitter}},
		{name: "1h, full jitter", maxExp: 3600, opts: x509sa.IssuerConfig{Jitter: maxJitter}},
		{name: "backdating 5 minutes breaks it", maxExp: 3600, opts: x509sa.IssuerConfig{Backdate: 5 * time.Minute}, wantErr: "within 5 minutes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Now = fixedClock(t0)
			opts.CA, opts.Key = c.cert, c.key
			is, err := x509sa.NewIssuer(opts)
			require.NoError(t, err)
			der, err := x509sa.CreateCSR(nil, testkeys.Generated("ed25519"), x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA, PodName: "web-0"}})
			require.NoError(t, err)
			issued, err := is.Issue(x509sa.IssueRequest{CSR: der, MaxLifetime: time.Duration(tt.maxExp) * time.Second})
			require.NoError(t, err)

			meta := metav1.ObjectMeta{Name: "req-1", Namespace: "ns1", UID: "pcr-uid", ResourceVersion: "1", CreationTimestamp: metav1.NewTime(t0)}
			old := &capi.PodCertificateRequest{ObjectMeta: meta, Spec: capi.PodCertificateRequestSpec{
				SignerName: "example.com/pods", PodName: "web-0", PodUID: "pod-uid",
				ServiceAccountName: testSA.Name, ServiceAccountUID: "8f1c2a9e-uid", NodeName: "node-1", NodeUID: "node-uid",
				MaxExpirationSeconds: &tt.maxExp, StubPKCS10Request: der,
			}}
			updated := old.DeepCopy()
			nb, na, br := metav1.NewTime(issued.NotBefore), metav1.NewTime(issued.NotAfter), metav1.NewTime(issued.BeginRefreshAt)
			updated.Status = capi.PodCertificateRequestStatus{
				Conditions: []metav1.Condition{{
					Type: capi.PodCertificateRequestConditionTypeIssued, Status: metav1.ConditionTrue,
					Reason: "Issued", LastTransitionTime: metav1.NewTime(t0),
				}},
				CertificateChain: string(issued.ChainPEM),
				NotBefore:        &nb, NotAfter: &na, BeginRefreshAt: &br,
			}
			errs := capivalidation.ValidatePodCertificateRequestStatusUpdate(updated, old, testingclock.NewFakePassiveClock(t0))
			if tt.wantErr != "" {
				require.NotEmpty(t, errs)
				assert.Contains(t, errs.ToAggregate().Error(), tt.wantErr)
				return
			}
			assert.Empty(t, errs)
		})
	}
}
