package controlplane_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ksa-go/ksa/interop/controlplane"
)

// testAudience is an API audience besides the issuer, as a cluster that
// federates its tokens to a cloud has.
const testAudience = "https://ksa.example/audience"

// cluster is shared by the tests of this package that need no special configuration.
var cluster controlplane.Shared

func TestMain(m *testing.M) {
	os.Exit(cluster.Run(m, controlplane.Config{
		APIAudiences: []string{controlplane.DefaultIssuer, testAudience},
	}))
}

// TestTokenRequestAndReview asks for a pod-bound token with the expiration
// kubelet uses (3607 s, which kube-apiserver extends to a year and marks
// with warnafter), checks its claims and signature, and has kube-apiserver
// review it.
func TestTokenRequestAndReview(t *testing.T) {
	cluster.Each(t, testTokenRequestAndReview)
}

func testTokenRequestAndReview(t *testing.T, cp *controlplane.ControlPlane) {
	ctx := t.Context()
	cs := cp.Clientset()
	ns := cp.Namespace(t)

	sa, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "smoke"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "smoke"},
		Spec: corev1.PodSpec{
			ServiceAccountName: sa.Name,
			Containers:         []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expiration := int64(3607)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			Audiences:         []string{testAudience},
			ExpirationSeconds: &expiration,
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	_, claims := parseJWT(t, tr.Status.Token, cp.SigningKey.Public())
	username := "system:serviceaccount:" + ns + ":" + sa.Name
	const year = 365 * 24 * 60 * 60
	if claims.Iss != cp.Issuers[0] || claims.Sub != username || !slices.Equal(claims.Aud, []string{testAudience}) {
		t.Errorf("iss, sub, aud = %q, %q, %q; want %q, %q, [%q]", claims.Iss, claims.Sub, claims.Aud, cp.Issuers[0], username, testAudience)
	}
	if claims.Exp-claims.Iat != year || claims.K8s.WarnAfter-claims.Iat != expiration {
		t.Errorf("exp, warnafter = iat+%d, iat+%d; want iat+%d, iat+%d", claims.Exp-claims.Iat, claims.K8s.WarnAfter-claims.Iat, year, expiration)
	}
	if got := tr.Status.ExpirationTimestamp.Unix() - claims.Iat; got < expiration-5 || got > expiration+5 {
		t.Errorf("status.expirationTimestamp = iat+%d, want about iat+%d", got, expiration)
	}
	if claims.K8s.Pod == nil || claims.K8s.Pod.UID != string(pod.UID) || claims.K8s.ServiceAccount.UID != string(sa.UID) {
		t.Errorf("kubernetes.io claims = %+v; want pod %s, service account %s", claims.K8s, pod.UID, sa.UID)
	}

	for _, tc := range []struct {
		name          string
		audiences     []string
		authenticated bool
		wantAudiences []string
	}{
		{name: "requested audience", audiences: []string{testAudience}, authenticated: true, wantAudiences: []string{testAudience}},
		{name: "API audiences", authenticated: true, wantAudiences: []string{testAudience}},
		{name: "other audience", audiences: []string{"https://other.example"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			review, err := cs.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
				Spec: authenticationv1.TokenReviewSpec{Token: tr.Status.Token, Audiences: tc.audiences},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			st := review.Status
			if st.Authenticated != tc.authenticated {
				t.Fatalf("authenticated = %v (error %q), want %v", st.Authenticated, st.Error, tc.authenticated)
			}
			if !tc.authenticated {
				return
			}
			if st.User.Username != username || !slices.Contains(st.User.Groups, "system:serviceaccounts:"+ns) {
				t.Errorf("user = %+v, want %s in system:serviceaccounts:%s", st.User, username, ns)
			}
			if got := st.User.Extra["authentication.kubernetes.io/pod-uid"]; !slices.Equal(got, authenticationv1.ExtraValue{string(pod.UID)}) {
				t.Errorf("extra pod-uid = %q, want [%s]", got, pod.UID)
			}
			if !slices.Equal(st.Audiences, tc.wantAudiences) {
				t.Errorf("audiences = %q, want %q", st.Audiences, tc.wantAudiences)
			}
		})
	}
}

// TestDiscovery reads the issuer's discovery document and key set, and finds
// the signing key in it.
func TestDiscovery(t *testing.T) {
	cluster.Each(t, testDiscovery)
}

func testDiscovery(t *testing.T, cp *controlplane.ControlPlane) {
	ctx := t.Context()

	var doc struct {
		Issuer  string   `json:"issuer"`
		JWKSURI string   `json:"jwks_uri"`
		Algs    []string `json:"id_token_signing_alg_values_supported"`
	}
	getJSON(ctx, t, cp, "/.well-known/openid-configuration", &doc)
	if doc.Issuer != cp.Issuers[0] || doc.JWKSURI != cp.URL+"/openid/v1/jwks" || !slices.Equal(doc.Algs, []string{"RS256"}) {
		t.Errorf("discovery = %+v; want issuer %s, jwks_uri %s/openid/v1/jwks, algs [RS256]", doc, cp.Issuers[0], cp.URL)
	}

	keys := fetchJWKS(ctx, t, cp)
	if len(keys) != 1 {
		t.Fatalf("JWKS has %d keys, want 1", len(keys))
	}
	for kid, k := range keys {
		if k.Alg != "RS256" || k.Use != "sig" || !equalKeys(k.publicKey(t), cp.SigningKey.Public()) {
			t.Errorf("JWKS key %s = %+v, want the signing key for RS256 signatures", kid, k)
		}
	}
}

// TestSelfSubjectReview asks kube-apiserver who it takes the admin, a
// service account and a client certificate for.
func TestSelfSubjectReview(t *testing.T) {
	cluster.Each(t, testSelfSubjectReview)
}

func testSelfSubjectReview(t *testing.T, cp *controlplane.ControlPlane) {
	ctx := t.Context()
	ns := cp.Namespace(t)

	expiration := int64(600)
	tr, err := cp.Clientset().CoreV1().ServiceAccounts(ns).CreateToken(ctx, "default", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiration},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	saConfig := cp.RESTConfig()
	saConfig.BearerToken = tr.Status.Token

	cert, err := cp.ClientCert("x509-user", "x509-group")
	if err != nil {
		t.Fatal(err)
	}
	certConfig := cp.RESTConfig()
	certConfig.BearerToken = ""
	certConfig.TLSClientConfig.CertData, certConfig.TLSClientConfig.KeyData = pemPair(t, cert)

	for _, tc := range []struct {
		name   string
		config *rest.Config
		user   string
		group  string
	}{
		{name: "admin", config: cp.RESTConfig(), user: controlplane.AdminUser, group: "system:masters"},
		{name: "service account", config: saConfig, user: "system:serviceaccount:" + ns + ":default", group: "system:serviceaccounts"},
		{name: "client certificate", config: certConfig, user: "x509-user", group: "x509-group"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := kubernetes.NewForConfig(tc.config)
			if err != nil {
				t.Fatal(err)
			}
			review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			u := review.Status.UserInfo
			if u.Username != tc.user || !slices.Contains(u.Groups, tc.group) || !slices.Contains(u.Groups, "system:authenticated") {
				t.Errorf("user = %+v, want %s in %s and system:authenticated", u, tc.user, tc.group)
			}
		})
	}
}

// TestServingCert serves TLS with a certificate from the control plane's CA,
// as a webhook server would, and connects trusting only the control plane's
// CA, as kube-apiserver does given CAPEM as the webhook's caBundle.
func TestServingCert(t *testing.T) {
	cluster.Each(t, testServingCert)
}

func testServingCert(t *testing.T, cp *controlplane.ControlPlane) {
	cert, err := cp.ServingCert("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.StartTLS()
	defer srv.Close()

	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cp.CAPEM) {
		t.Fatal("CAPEM holds no certificate")
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer client.CloseIdleConnections()
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("status = %s, want 204", resp.Status)
	}
}

// pemPair encodes cert's certificate and key as PEM, for rest.TLSClientConfig.
func pemPair(t *testing.T, cert tls.Certificate) (certPEM, keyPEM []byte) {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	return certPEM, keyPEM
}

// TestReleases checks that each subtest runs on the release it is named
// after: kube-apiserver's /version says so, and its API differs from the
// other release's where Kubernetes changed. Kubernetes 1.37 serves
// ClusterTrustBundle and PodCertificateRequest in certificates.k8s.io/v1 by
// default; 1.36 has them in v1beta1 only, behind feature gates that are off
// by default.
func TestReleases(t *testing.T) {
	cluster.Each(t, testReleases)
}

func testReleases(t *testing.T, cp *controlplane.ControlPlane) {
	name := t.Name()[strings.LastIndexByte(t.Name(), '/')+1:]
	if cp.Version() != name {
		t.Errorf("Version() = %s in subtest %s", cp.Version(), name)
	}
	var info struct {
		GitVersion string `json:"gitVersion"`
	}
	getJSON(t.Context(), t, cp, "/version", &info)
	if info.GitVersion != cp.Version() {
		t.Errorf("/version says %s, Version() %s", info.GitVersion, cp.Version())
	}

	resources, err := cp.Clientset().Discovery().ServerResourcesForGroupVersion("certificates.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range resources.APIResources {
		names = append(names, r.Name)
	}
	want := []string{"certificatesigningrequests", "certificatesigningrequests/approval", "certificatesigningrequests/status"}
	if !strings.HasPrefix(cp.Version(), "v1.36.") {
		want = append(want, "clustertrustbundles", "podcertificaterequests", "podcertificaterequests/status")
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("certificates.k8s.io/v1 on %s serves %q, want %q", cp.Version(), names, want)
	}
}
