package podcert_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/podcerttest"
	"github.com/ksa-go/ksa/x509sa"
)

// A signer decides a request the kubelet made; the status it sets is
// checked before it goes onto the object (kubeapi converts and applies it).
func ExampleSigner_Decide() {
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
	req := podcert.Request{
		Namespace: "shop", Name: "req-x7k2p",
		SignerName: "example.com/workload", PodName: "cart-0", PodUID: "pod-uid",
		ServiceAccountName: "cart", ServiceAccountUID: "sa-uid", NodeName: "node-1", NodeUID: "node-uid",
		MaxExpirationSeconds: 3 * 3600, StubPKCS10Request: stub,
	}

	d, err := s.Decide(&req)
	if err != nil {
		panic(err)
	}
	st := d.Status()
	if err := podcert.CheckStatus(&req, podcert.Status{}, st, now); err != nil {
		panic(err)
	}
	cert, _ := x509sa.DecodeCertificate(d.Leaf)
	fmt.Println(st.Conditions[0].Type, st.Conditions[0].Reason)
	fmt.Println(cert.Subject.ServiceAccount.Username(), cert.Subject.PodName)
	fmt.Println(cert.SPIFFEID)
	fmt.Println(st.NotBefore.UTC().Format(time.TimeOnly), st.BeginRefreshAt.UTC().Format(time.TimeOnly), st.NotAfter.UTC().Format(time.TimeOnly))

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

// A policy admitting serving hosts inside the pod's namespace.
func ExamplePolicyFunc() {
	policy := podcert.PolicyFunc(func(req *podcert.Request, asked podcert.Asked) error {
		for _, h := range asked.DNSNames {
			if h != req.PodName+"."+req.Namespace+".svc" {
				return fmt.Errorf("host %s is not the pod's service name", h)
			}
		}
		if len(asked.IPAddresses) > 0 || len(asked.Extensions) > 0 {
			return fmt.Errorf("only DNS names are admitted")
		}
		return nil
	})
	req := &podcert.Request{Namespace: "shop", PodName: "cart"}
	fmt.Println(policy.Admit(req, podcert.Asked{DNSNames: []string{"cart.shop.svc"}}))
	fmt.Println(policy.Admit(req, podcert.Asked{DNSNames: []string{"bank.shop.svc"}}))
	// Output:
	// <nil>
	// host bank.shop.svc is not the pod's service name
}

// A host policy from an operator's settings: each pod may serve the name
// of the service named after its service account, and addresses of the
// pod network.
func ExampleHostPolicy() {
	policy, err := podcert.NewHostPolicy(podcert.HostPolicyConfig{
		Hosts:    []string{"{serviceaccount}.{namespace}.svc", "{serviceaccount}.{namespace}.svc.cluster.local"},
		IPRanges: []string{"10.244.0.0/16"},
	})
	if err != nil {
		panic(err)
	}
	req := &podcert.Request{Namespace: "shop", ServiceAccountName: "cart", PodName: "cart-0"}
	fmt.Println(policy.AllowHost(req, "cart.shop.svc"), policy.AllowHost(req, "bank.shop.svc"), policy.AllowHost(req, "10.244.1.7"))
	fmt.Println(policy.Admit(req, podcert.Asked{DNSNames: []string{"cart.shop.svc.cluster.local", "bank.shop.svc"}}))

	_, err = podcert.NewHostPolicy(podcert.HostPolicyConfig{Hosts: []string{"{serviceaccount}-{namespace}.svc"}})
	fmt.Println(err)
	// Output:
	// true false true
	// DNS name "bank.shop.svc" matches no allowed host pattern
	// podcert: HostPolicyConfig.Hosts[0] "{serviceaccount}-{namespace}.svc" joins a placeholder to other text in "{serviceaccount}-{namespace}": two requests could then get the same name
}

// A server without a certificate of its own serves a self-signed one and
// hands its PEM to the clients that must trust it.
func ExampleSelfSigned() {
	cert, certPEM, err := podcert.SelfSigned(podcert.SelfSignedConfig{CommonName: "ksa-webhook"})
	if err != nil {
		panic(err)
	}
	srv := &http.Server{TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}}
	_ = srv // srv.ServeTLS(listener, "", "")
	roots := x509.NewCertPool()
	fmt.Println(roots.AppendCertsFromPEM(certPEM), cert.Leaf.Subject.CommonName, cert.Leaf.DNSNames, cert.Leaf.NotAfter.Sub(cert.Leaf.NotBefore))
	// Output:
	// true ksa-webhook [localhost] 24h1m0s
}

// Two pods do mutual TLS with their mounted pod certificates and the
// signer's trust bundle, both read from the files the kubelet writes (a
// test signer writes them here); the server's handler reads each
// request's identity from the handshake.
func ExamplePeers_Identity() {
	dir, _ := os.MkdirTemp("", "pods")
	defer os.RemoveAll(dir)
	ca, _ := podcerttest.NewSigner(podcerttest.Config{})
	mountPod := func(name, sa string) *podcert.Source {
		_ = os.Mkdir(filepath.Join(dir, name), 0o755)
		m, _ := podcerttest.NewMount(filepath.Join(dir, name))
		bundle, _ := ca.Issue(podcerttest.Pod{Namespace: "shop", Name: name, ServiceAccount: sa})
		if err := m.Write(map[string][]byte{"credentialbundle.pem": bundle, "ca.pem": ca.TrustBundle()}); err != nil {
			panic(err)
		}
		src, err := podcert.NewSource(podcert.SourceConfig{BundlePath: m.Path("credentialbundle.pem")})
		if err != nil {
			panic(err)
		}
		return src
	}
	api, web := mountPod("api-0", "api"), mountPod("web-0", "web")

	roots, err := podcert.NewTrustFile(podcert.TrustFileConfig{Path: filepath.Join(dir, "api-0", "ca.pem")})
	if err != nil {
		panic(err)
	}
	peers, err := podcert.NewPeers(podcert.PeerConfig{TrustFile: roots, TrustDomain: "cluster.local"})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := peers.Identity(r.TLS) // no second chain verification
		if err != nil {
			http.Error(w, err.Error(), http.StatusForbidden)
			return
		}
		fmt.Fprintln(w, "hello", id.ServiceAccount.Username(), "of pod", id.Pod.Name)
	}))
	srv.TLS = peers.ServerConfig(api, nil)
	srv.StartTLS()
	defer srv.Close()

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: peers.ClientConfig(web, nil)}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(string(body))
	// Output:
	// hello system:serviceaccount:shop:web of pod web-0
}
