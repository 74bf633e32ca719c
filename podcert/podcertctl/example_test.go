package podcertctl_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcertctl"
	"github.com/ksa-go/ksa/podcert/podcertctl/clientgo"
)

// The controller in a program of one's own: its clientset (client-go's
// fake here, kubernetes.NewForConfig's in a cluster; the fake serves no
// discovery, so the API version is given), its clock, and an
// Observe hook that says when a request is decided. It publishes the CA as
// a ClusterTrustBundle, issues the kubelet's request and writes the
// status.
func Example() {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	// The CA: any crypto.Signer with its certificate.
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "workload CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	caCert, _ := x509.ParseCertificate(caDER)
	signer, err := podcert.NewSigner(podcert.SignerConfig{SignerName: "example.com/workload", Key: caKey,
		Chain: []*x509.Certificate{caCert}, Now: clock})
	if err != nil {
		panic(err)
	}

	// The kubelet's request: a key and an empty CSR signed with it.
	podKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	stub, _ := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, podKey)
	maxSeconds := int32(3 * 3600)
	pcr := &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "req-x7k2p"},
		Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/workload",
			PodName: "cart-0", PodUID: "pod-uid", ServiceAccountName: "cart", ServiceAccountUID: "sa-uid",
			NodeName: "node-1", NodeUID: "node-uid", MaxExpirationSeconds: &maxSeconds, StubPKCS10Request: stub}}
	cs := fake.NewClientset(pcr)

	client, err := clientgo.New(cs)
	if err != nil {
		panic(err)
	}
	decided := make(chan podcertctl.Event, 1)
	ctl, err := podcertctl.New(podcertctl.Config{Client: client, Signer: signer, CAKey: caKey, APIVersion: podcertctl.V1, Now: clock,
		Observe: func(e podcertctl.Event) {
			if e.Kind == podcertctl.Decided {
				decided <- e
			}
		}})
	if err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ctl.Run(ctx) }()
	e := <-decided
	stop()
	if err := <-done; err != nil {
		panic(err)
	}

	got, _ := cs.CertificatesV1().PodCertificateRequests("shop").Get(context.Background(), "req-x7k2p", metav1.GetOptions{})
	fmt.Println(e.Namespace, e.Name, e.Decision.Outcome)
	for _, c := range got.Status.Conditions {
		fmt.Println(c.Type, c.Status, c.Reason)
	}
	block, _ := pem.Decode([]byte(got.Status.CertificateChain))
	leaf, _ := x509.ParseCertificate(block.Bytes)
	fmt.Println(leaf.URIs[0], leaf.CheckSignatureFrom(caCert) == nil)
	fmt.Println(got.Status.NotBefore.UTC().Format(time.TimeOnly), got.Status.NotAfter.UTC().Format(time.TimeOnly))
	bundle, _ := cs.CertificatesV1().ClusterTrustBundles().Get(context.Background(), "example.com:workload:primary-bundle", metav1.GetOptions{})
	fmt.Println(bundle.Spec.TrustBundle == string(signer.TrustBundle()), bundle.Labels[podcertctl.CanaryingLabel])
	// Output:
	// shop req-x7k2p Issued
	// Issued True Issued
	// spiffe://cluster.local/ns/shop/sa/cart true
	// 11:58:00 14:58:00
	// true live
}

// The rules of the controller's ClusterRole, as data for a role of one's
// own; Objects and Manifests give the whole RBAC.
func ExampleRules() {
	rules, err := podcertctl.Rules(podcertctl.RBACConfig{SignerName: "example.com/workload"})
	if err != nil {
		panic(err)
	}
	for _, r := range rules {
		fmt.Println(r.Resources, r.ResourceNames, r.Verbs)
	}
	// Output:
	// [podcertificaterequests] [] [get list watch]
	// [podcertificaterequests/status] [] [update]
	// [signers] [example.com/workload] [sign attest]
	// [clustertrustbundles] [] [create]
	// [clustertrustbundles] [example.com:workload:primary-bundle] [get update]
}
