package kubeapi_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"log"
	"math/big"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/x509sa"
)

// Callers holding the Kubernetes API types turn a TokenRequestSpec into a
// Request.
func ExampleRequestFromSpec() {
	exp := int64(7200)
	req, err := kubeapi.RequestFromSpec(
		ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "u-1"},
		authenticationv1.TokenRequestSpec{
			Audiences:         []string{"vault"},
			ExpirationSeconds: &exp,
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "billing-7d4", UID: "p-9"},
		})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(req.Audiences, req.ExpirationSeconds, req.BoundObject.Kind, req.BoundObject.Name)
	// Output: [vault] 7200 Pod billing-7d4
}

func ExampleNewCertificateSigningRequest() {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, err := x509sa.CreateCSR(nil, key, x509sa.CSROptions{
		Subject: x509sa.Subject{ServiceAccount: ksa.ServiceAccount{Namespace: "shop", Name: "cart"}},
	})
	if err != nil {
		panic(err)
	}
	obj, err := kubeapi.NewCertificateSigningRequest(der, kubeapi.CertificateSigningRequestOptions{Lifetime: time.Hour})
	if err != nil {
		panic(err)
	}
	fmt.Println(obj.GenerateName, obj.Spec.SignerName, obj.Spec.Usages, *obj.Spec.ExpirationSeconds)
	// Output:
	// x509sa- kubernetes.io/kube-apiserver-client [digital signature client auth] 3600
}

func ExampleCheckCertificateSigningRequest() {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	sa := ksa.ServiceAccount{Namespace: "shop", Name: "cart"}
	der, _ := x509sa.CreateCSR(nil, key, x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: sa}})
	obj, _ := kubeapi.NewCertificateSigningRequest(der, kubeapi.CertificateSigningRequestOptions{})

	// kube-apiserver records the creator: here the service account itself.
	obj.Spec.Username = sa.Username()
	obj.Spec.Groups = append(sa.Groups(), "system:authenticated")
	_, err := kubeapi.CheckCertificateSigningRequest(obj, x509sa.MatchOptions{})
	fmt.Println("own identity:", err)

	// Someone else asking for the account's certificate.
	obj.Spec.Username = "system:serviceaccount:shop:intruder"
	_, err = kubeapi.CheckCertificateSigningRequest(obj, x509sa.MatchOptions{})
	var mismatch *x509sa.MismatchError
	fmt.Println("other requester:", errors.As(err, &mismatch), mismatch.Field)
	// Output:
	// own identity: <nil>
	// other requester: true username
}

// A pod-certificate signer reads a PodCertificateRequest, decides it and
// sets the status on the object, checked first.
func ExampleApplyPodCertDecision() {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	// The CA: any crypto.Signer with its certificate.
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "workload CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, _ := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	caCert, _ := x509.ParseCertificate(caDER)
	s, err := podcert.NewSigner(podcert.SignerConfig{SignerName: "example.com/workload", Key: caKey, Chain: []*x509.Certificate{caCert},
		Now: func() time.Time { return now }})
	if err != nil {
		panic(err)
	}

	// The kubelet's request: a key and an empty CSR signed with it.
	podKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	stub, _ := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, podKey)
	maxSeconds := int32(3 * 3600)
	pcr := &certificatesv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "req-x7k2p"},
		Spec: certificatesv1.PodCertificateRequestSpec{
			SignerName: "example.com/workload", PodName: "cart-0", PodUID: "pod-uid",
			ServiceAccountName: "cart", ServiceAccountUID: "sa-uid", NodeName: "node-1", NodeUID: "node-uid",
			MaxExpirationSeconds: &maxSeconds, StubPKCS10Request: stub,
		},
	}

	req, status := kubeapi.PodCertRequest(pcr)
	if status.Outcome() != 0 {
		return // decided already: the API server refuses any change
	}
	d, err := s.Decide(&req)
	if err != nil {
		panic(err)
	}
	if err := kubeapi.ApplyPodCertDecision(&d, pcr); err != nil {
		panic(err)
	}
	// clientset.CertificatesV1().PodCertificateRequests(pcr.Namespace).UpdateStatus(ctx, pcr, ...)
	cert, _ := x509sa.DecodeCertificate(d.Leaf)
	fmt.Println(pcr.Status.Conditions[0].Type, pcr.Status.Conditions[0].Reason)
	fmt.Println(cert.Subject.ServiceAccount.Username(), cert.Subject.PodName)
	fmt.Println(cert.SPIFFEID)
	fmt.Println(pcr.Status.NotBefore.UTC().Format(time.TimeOnly), pcr.Status.BeginRefreshAt.UTC().Format(time.TimeOnly), pcr.Status.NotAfter.UTC().Format(time.TimeOnly))

	// Annotations without a policy are refused.
	req.UnverifiedUserAnnotations = map[string]string{podcert.DefaultServeHostsKey: "cart.shop.svc"}
	d, _ = s.Decide(&req)
	fmt.Println(d.Outcome, d.Reason)
	// Output:
	// Issued Issued
	// system:serviceaccount:shop:cart cart-0
	// spiffe://cluster.local/ns/shop/sa/cart
	// 11:58:00 13:28:00 14:58:00
	// Denied InvalidUnverifiedUserAnnotations
}
