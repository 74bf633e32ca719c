package podcert_test

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	"k8s.io/kubernetes/pkg/apis/certificates"
	"k8s.io/kubernetes/pkg/apis/certificates/validation"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/podcert"
)

// kubernetesAcceptsCreate runs kube-apiserver's defaulting and creation
// validation on a request, as a create of the object does.
func kubernetesAcceptsCreate(t *testing.T, obj runtime.Object) (bool, string) {
	t.Helper()
	obj = obj.DeepCopyObject()
	legacyscheme.Scheme.Default(obj)
	var internal certificates.PodCertificateRequest
	require.NoError(t, legacyscheme.Scheme.Convert(obj, &internal, nil))
	errs := validation.ValidatePodCertificateRequestCreate(&internal)
	if len(errs) == 0 {
		return true, ""
	}
	return false, errs.ToAggregate().Error()
}

// podcertAccepts runs the request checks a podcert signer runs before it
// decides: the spec, then the proof and key.
func podcertAccepts(req podcert.Request) error {
	if err := req.Check(); err != nil {
		return err
	}
	_, err := req.PublicKey()
	return err
}

// Where podcert is knowingly stricter than kube-apiserver (it refuses what
// the API server accepts).
const (
	// stricterUID: the service-account UID must be one x509sa carries.
	stricterUID = "the service-account UID goes into the certificate subject"
	// stricterStub: Kubernetes asks signers to require an empty stub
	// request; the API server does not check it.
	stricterStub = "identity comes from the spec, never from the stub request"
)

// TestRequestValidationAgreesWithKubernetes: for a table of requests,
// podcert's checks (Request.Check, then Request.PublicKey) accept
// exactly what kube-apiserver's defaulting and
// ValidatePodCertificateRequestCreate accept, except where podcert is
// stricter by design (stricter says why).
func TestRequestValidationAgreesWithKubernetes(t *testing.T) {
	label := func(n int) string { return strings.Repeat("a", n) }
	longDomain := label(63) + "." + label(63) + "." + label(63) + "." + label(61)
	longPath := label(63) + "." + label(253)
	spec := func(mod func(*certificatesv1.PodCertificateRequestSpec)) func(*certificatesv1.PodCertificateRequest) {
		return func(p *certificatesv1.PodCertificateRequest) { mod(&p.Spec) }
	}
	annotations := func(m map[string]string) func(*certificatesv1.PodCertificateRequest) {
		return spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.UnverifiedUserAnnotations = m })
	}
	seconds := func(n int32) func(*certificatesv1.PodCertificateRequest) {
		return spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.MaxExpirationSeconds = &n })
	}
	signer := func(name string) func(*certificatesv1.PodCertificateRequest) {
		return spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.SignerName = name })
	}
	for _, tc := range []struct {
		name     string
		key      string
		mod      func(*certificatesv1.PodCertificateRequest)
		accept   bool
		stricter string
	}{
		{name: "P-256", accept: true},
		{name: "P-384", key: "p384", accept: true},
		{name: "P-521", key: "p521", accept: true},
		{name: "Ed25519", key: "ed25519", accept: true},
		{name: "RSA 3072", key: "rsa3072", accept: true},
		{name: "RSA 2048", key: "rsa2048"},
		{name: "P-224", key: "p224"},
		{name: "stub request not DER", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.StubPKCS10Request = []byte("junk") })},
		{name: "stub request with a bad signature", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) {
			s.StubPKCS10Request[len(s.StubPKCS10Request)-3] ^= 1
		})},
		{name: "stub request over the size limit", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) {
			s.StubPKCS10Request = make([]byte, podcert.MaxStubPKCS10RequestSize+1)
		})},
		{name: "no stub request", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.StubPKCS10Request = nil })},
		{name: "stub request with a subject", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) {
			der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "x"}}, testkeys.Generated("p256"))
			require.NoError(t, err)
			s.StubPKCS10Request = der
		}), accept: true, stricter: stricterStub},

		{name: "no namespace", mod: func(p *certificatesv1.PodCertificateRequest) { p.Namespace = "" }},
		{name: "namespace of 64 bytes", mod: func(p *certificatesv1.PodCertificateRequest) { p.Namespace = label(64) }},
		{name: "name not a subdomain", mod: func(p *certificatesv1.PodCertificateRequest) { p.Name = "Req_1" }},
		{name: "name of 253 bytes", mod: func(p *certificatesv1.PodCertificateRequest) { p.Name = label(253) }, accept: true},

		{name: "signer name of 571 bytes", mod: signer(longDomain + "/" + longPath), accept: true},
		{name: "signer name of 572 bytes", mod: signer(longDomain + "/" + longPath + "a")},
		{name: "signer name path part of 253 bytes", mod: signer("example.com/" + label(253)), accept: true},
		{name: "signer name path part of 254 bytes", mod: signer("example.com/" + label(254))},
		{name: "signer name of the kubelet's CSR signer", mod: signer("kubernetes.io/kubelet-serving"), accept: true},
		{name: "signer name legacy-unknown", mod: signer("kubernetes.io/legacy-unknown"), accept: true},
		{name: "no signer name", mod: signer("")},
		{name: "signer name without a path", mod: signer("example.com")},
		{name: "signer name with an empty path", mod: signer("example.com/")},
		{name: "signer name with two slashes", mod: signer("example.com/a/b")},
		{name: "signer name of one label", mod: signer("example/x")},
		{name: "signer name domain label of 64 bytes", mod: signer(label(64) + ".com/x")},
		{name: "signer name domain of 254 bytes", mod: signer(longDomain + "a/x")},
		{name: "signer name empty path part", mod: signer("example.com/a..b")},
		{name: "signer name upper case", mod: signer("Example.com/x")},
		{name: "signer name path upper case", mod: signer("example.com/X")},

		{name: "no pod name", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.PodName = "" })},
		{name: "pod name of 253 bytes", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.PodName = label(253) }), accept: true},
		{name: "pod name of 254 bytes", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.PodName = label(254) })},
		{name: "pod name upper case", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.PodName = "Cart" })},
		{name: "no service account name", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountName = "" })},
		{name: "service account name with a dot", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountName = "a.b" }), accept: true},
		{name: "service account name with a slash", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountName = "a/b" })},
		{name: "no node name", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeName = "" })},
		{name: "node name with a space", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeName = "node 1" })},

		{name: "UIDs of 128 bytes", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) {
			s.PodUID, s.ServiceAccountUID, s.NodeUID = types.UID("p"+label(127)), types.UID("s"+label(127)), types.UID("n"+label(127))
		}), accept: true},
		{name: "no pod UID", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.PodUID = "" })},
		{name: "pod UID of 129 bytes", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.PodUID = types.UID("p" + label(128)) })},
		{name: "no service account UID", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountUID = "" })},
		{name: "service account UID of 129 bytes", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountUID = types.UID("s" + label(128)) })},
		{name: "service account UID with a space", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.ServiceAccountUID = "a b" }), accept: true, stricter: stricterUID},
		{name: "no node UID", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeUID = "" })},
		{name: "node UID of 129 bytes", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.NodeUID = types.UID("n" + label(128)) })},

		{name: "lifetime unset: defaulted", mod: spec(func(s *certificatesv1.PodCertificateRequestSpec) { s.MaxExpirationSeconds = nil }), accept: true},
		{name: "lifetime of an hour", mod: seconds(podcert.MinMaxExpirationSeconds), accept: true},
		{name: "lifetime under an hour", mod: seconds(podcert.MinMaxExpirationSeconds - 1)},
		{name: "lifetime negative", mod: seconds(-1)},
		{name: "lifetime of 91 days", mod: seconds(podcert.MaxMaxExpirationSeconds), accept: true},
		{name: "lifetime over 91 days", mod: seconds(podcert.MaxMaxExpirationSeconds + 1)},
		{name: "lifetime of a day, kubernetes.io", mod: func(p *certificatesv1.PodCertificateRequest) {
			signer("kubernetes.io/x")(p)
			seconds(podcert.KubernetesMaxExpirationSeconds)(p)
		}, accept: true},
		{name: "lifetime over a day, kubernetes.io subdomain", mod: func(p *certificatesv1.PodCertificateRequest) {
			signer("sub.kubernetes.io/x")(p)
			seconds(podcert.KubernetesMaxExpirationSeconds + 1)(p)
		}},
		{name: "lifetime over a day, a domain ending in kubernetes.io", mod: func(p *certificatesv1.PodCertificateRequest) {
			signer("notkubernetes.io/x")(p)
			seconds(podcert.KubernetesMaxExpirationSeconds + 1)(p)
		}, accept: true},

		{name: "annotation keys of any case", mod: annotations(map[string]string{"Example.COM/Key_1.x": "v", "a.b/" + label(63): ""}), accept: true},
		{name: "annotations at the size limit", mod: annotations(map[string]string{"example.com/x": label(podcert.MaxUnverifiedUserAnnotationsSize - len("example.com/x"))}), accept: true},
		{name: "annotations over the size limit", mod: annotations(map[string]string{"example.com/x": label(podcert.MaxUnverifiedUserAnnotationsSize - len("example.com/x") + 1)})},
		{name: "annotation key without a prefix", mod: annotations(map[string]string{"serve-hosts": "a"})},
		{name: "annotation key with two slashes", mod: annotations(map[string]string{"a.b/c/d": "a"})},
		{name: "annotation key with an empty prefix", mod: annotations(map[string]string{"/x": "a"})},
		{name: "annotation key prefix with an underscore", mod: annotations(map[string]string{"a_b.c/x": "a"})},
		{name: "annotation key prefix of 254 bytes", mod: annotations(map[string]string{longDomain + "a/x": "a"})},
		{name: "annotation key empty name", mod: annotations(map[string]string{"a.b/": "a"})},
		{name: "annotation key name of 64 bytes", mod: annotations(map[string]string{"a.b/" + label(64): "a"})},
		{name: "annotation key name starting with a dash", mod: annotations(map[string]string{"a.b/-x": "a"})},
		{name: "annotation key name ending with a dot", mod: annotations(map[string]string{"a.b/x.": "a"})},
		{name: "annotation key name with a colon", mod: annotations(map[string]string{"a.b/x:y": "a"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := tc.key
			if key == "" {
				key = "p256"
			}
			p := newPCR(t, testkeys.Generated(key), 86400)
			if tc.mod != nil {
				tc.mod(p)
			}
			kubeOK, kubeMsg := kubernetesAcceptsCreate(t, p)
			req, _ := kubeapi.PodCertRequest(p)
			ours := podcertAccepts(req)
			assert.Equal(t, tc.accept, kubeOK, "Kubernetes: %s", kubeMsg)
			if tc.stricter != "" {
				assert.Error(t, ours, "podcert is stricter: %s", tc.stricter)
				return
			}
			assert.Equal(t, kubeOK, ours == nil, "Kubernetes: %s; podcert: %v", kubeMsg, ours)
		})
	}
}

// TestOlderProofAgreesWithKubernetes: v1beta1's older proof of possession
// (a PKIX key and its signature over the pod UID) is accepted and refused
// as kube-apiserver does.
func TestOlderProofAgreesWithKubernetes(t *testing.T) {
	const podUID = "pod-uid-1"
	for _, tc := range []struct {
		name   string
		key    string
		mod    func(*certificatesv1beta1.PodCertificateRequestSpec)
		accept bool
	}{
		{name: "Ed25519", key: "ed25519", accept: true},
		{name: "P-256", key: "p256", accept: true},
		{name: "P-521", key: "p521", accept: true},
		{name: "RSA 3072", key: "rsa3072", accept: true},
		{name: "RSA 2048", key: "rsa2048"},
		{name: "P-224", key: "p224"},
		{name: "proof over another UID", key: "p256", mod: func(s *certificatesv1beta1.PodCertificateRequestSpec) { s.PodUID = "pod-uid-2" }},
		//lint:ignore SA1019 the older form is what this table covers.
		{name: "no proof", key: "p256", mod: func(s *certificatesv1beta1.PodCertificateRequestSpec) { s.ProofOfPossession = nil }},
		//lint:ignore SA1019 as above.
		{name: "key not PKIX", key: "p256", mod: func(s *certificatesv1beta1.PodCertificateRequestSpec) { s.PKIXPublicKey = []byte("junk") }},
		{name: "proof and a stub request", key: "p256", mod: func(s *certificatesv1beta1.PodCertificateRequestSpec) {
			der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, testkeys.Generated("p256"))
			require.NoError(t, err)
			s.StubPKCS10Request = der
		}},
		{name: "proof over the size limit", key: "p256", mod: func(s *certificatesv1beta1.PodCertificateRequestSpec) {
			//lint:ignore SA1019 as above.
			s.ProofOfPossession = make([]byte, podcert.MaxProofOfPossessionSize+1)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := testkeys.Generated(tc.key)
			der, err := x509.MarshalPKIXPublicKey(key.Public())
			require.NoError(t, err)
			p := toV1beta1(t, newPCR(t, key, 86400))
			p.Spec.StubPKCS10Request = nil
			//lint:ignore SA1019 the older form is the one under test.
			p.Spec.PKIXPublicKey, p.Spec.ProofOfPossession = der, signPodUID(t, key, podUID)
			p.Spec.PodUID = podUID
			if tc.mod != nil {
				tc.mod(&p.Spec)
			}
			kubeOK, kubeMsg := kubernetesAcceptsCreate(t, p)
			req, _ := kubeapi.PodCertRequestV1beta1(p)
			ours := podcertAccepts(req)
			assert.Equal(t, tc.accept, kubeOK, "Kubernetes: %s", kubeMsg)
			assert.Equal(t, kubeOK, ours == nil, "Kubernetes: %s; podcert: %v", kubeMsg, ours)
		})
	}
}

// signPodUID is the older proof: Ed25519 over the UID, ECDSA (ASN.1) over
// its SHA-256, RSA-PSS with SHA-256.
func signPodUID(t *testing.T, key crypto.Signer, uid string) []byte {
	t.Helper()
	sum := sha256.Sum256([]byte(uid))
	var sig []byte
	var err error
	switch key.Public().(type) {
	case ed25519.PublicKey:
		sig, err = key.Sign(rand.Reader, []byte(uid), crypto.Hash(0))
	case *rsa.PublicKey:
		sig, err = key.Sign(rand.Reader, sum[:], &rsa.PSSOptions{Hash: crypto.SHA256})
	default:
		sig, err = key.Sign(rand.Reader, sum[:], crypto.SHA256)
	}
	require.NoError(t, err)
	return sig
}

// FuzzRequestValidationAgreesWithKubernetes: podcert's spec checks accept
// the names, annotation key and lifetime kube-apiserver accepts, and no
// others.
func FuzzRequestValidationAgreesWithKubernetes(f *testing.F) {
	f.Add("example.com/workload", "cart-0", "node-1", "example.com/x", int32(86400))
	f.Add("kubernetes.io/x", "", "node-1", "x", int32(86401))
	f.Add("a.b/c.d.e", "a.b", "Node", "A.B/C_d", int32(3600))
	f.Add("example..com/x", "a-", "n", "a.b/-x", int32(7200))
	f.Add(strings.Repeat("a", 64)+".com/x", "a", "n", "/x", int32(-1))
	f.Add("example.com/a/b", "a", "n", "a.b/c/d", int32(91*86400+1))
	f.Fuzz(func(t *testing.T, signerName, podName, nodeName, annotationKey string, maxSeconds int32) {
		p := newPCR(t, testkeys.Generated("p256"), maxSeconds)
		p.Spec.SignerName, p.Spec.PodName, p.Spec.NodeName = signerName, podName, types.NodeName(nodeName)
		p.Spec.UnverifiedUserAnnotations = map[string]string{annotationKey: "v"}
		if maxSeconds == 0 {
			// podcert reads zero as unset (the API's default); the API
			// server defaults only an absent field and refuses a zero.
			t.Skip("an explicit zero lifetime")
		}
		kubeOK, kubeMsg := kubernetesAcceptsCreate(t, p)
		req, _ := kubeapi.PodCertRequest(p)
		ours := req.Check()
		if kubeOK != (ours == nil) {
			t.Fatalf("Kubernetes accepts: %v (%s); podcert: %v", kubeOK, kubeMsg, ours)
		}
	})
}
