package admissionauth_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"math/big"
	"strings"
	"testing"

	"encoding/base64"

	"github.com/ksa-go/ksa/admissionauth"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/tokens"
)

// gmsaReview is the AdmissionReview kube-apiserver sends the GMSA webhook
// for a pod naming a credential spec: about 2.5 KB.
var gmsaReview = []byte(`{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"0a8a5d3c-6b1e-4f0e-9d3c-2f7c1b6a9e41","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"requestKind":{"group":"","version":"v1","kind":"Pod"},"requestResource":{"group":"","version":"v1","resource":"pods"},"name":"frontend-7d4f8b9c6-x2x4z","namespace":"web","operation":"CREATE","userInfo":{"username":"system:serviceaccount:kube-system:replicaset-controller","uid":"4f1c2d3e-1111-2222-3333-444455556666","groups":["system:serviceaccounts","system:serviceaccounts:kube-system","system:authenticated"],"extra":{"authentication.kubernetes.io/credential-id":["JTI=2f6c7a1e-5555-6666-7777-888899990000"]}},"object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"frontend-7d4f8b9c6-x2x4z","generateName":"frontend-7d4f8b9c6-","namespace":"web","uid":"9b8a7c6d-aaaa-bbbb-cccc-ddddeeeeffff","creationTimestamp":"2026-11-27T18:00:00Z","labels":{"app":"frontend","pod-template-hash":"7d4f8b9c6"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"frontend-7d4f8b9c6","uid":"12345678-aaaa-bbbb-cccc-1234567890ab","controller":true,"blockOwnerDeletion":true}]},"spec":{"volumes":[{"name":"kube-api-access-abcde","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},{"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},{"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}],"defaultMode":420}}],"containers":[{"name":"iis","image":"mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2022","ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{"limits":{"cpu":"1","memory":"800Mi"},"requests":{"cpu":"500m","memory":"400Mi"}},"volumeMounts":[{"name":"kube-api-access-abcde","readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent","securityContext":{"windowsOptions":{"gmsaCredentialSpecName":"webapp01"}}}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","nodeSelector":{"kubernetes.io/os":"windows"},"serviceAccountName":"frontend","serviceAccount":"frontend","securityContext":{"windowsOptions":{"gmsaCredentialSpecName":"webapp01"}},"schedulerName":"default-scheduler","tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],"priority":0,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},"status":{"phase":"Pending","qosClass":"Burstable"}},"oldObject":null,"dryRun":false,"options":{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1"}}}`)

var benchKeys = []struct {
	name string
	key  func() crypto.Signer
}{
	{"RS256", func() crypto.Signer { return testkeys.K8sRSA() }},
	{"ES256", func() crypto.Signer { return testkeys.K8sEC() }},
}

// verifyAdmission is one admission request's verification: the review
// parsed, then the token verified against it.
func verifyAdmission(b *testing.B, v *admissionauth.Verifier, auth string) {
	rv, err := admissionauth.ParseReview(gmsaReview)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := v.Verify(b.Context(), auth, rv); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkVerify measures one admission request's verification (the
// 2.5 KB review parsed and the token checked against it), without and
// with the token validator's result cache, beside the bare signature check
// of the same token (hash and verify, the signature already decoded).
func BenchmarkVerify(b *testing.B) {
	for _, bk := range benchKeys {
		key := bk.key()
		raw := webhookToken(b, minter(b, key), tokens.BoundValidatingWebhookConfiguration, "gmsa", audience, "*")
		for _, cache := range []bool{false, true} {
			name := bk.name + "/verify"
			if cache {
				name += "-cached"
			}
			v := verifier(b, validator(b, key, now, cache), admissionauth.Require)
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					verifyAdmission(b, v, "Bearer "+raw)
				}
			})
		}
		b.Run(bk.name+"/bare", func(b *testing.B) {
			bare := bareCheck(key.Public(), raw)
			b.ReportAllocs()
			for b.Loop() {
				if !bare() {
					b.Fatal("bare verify failed")
				}
			}
		})
	}
}

// bareCheck returns the bare signature check of a token: hash the signing
// input, verify PKCS #1 v1.5 or ECDSA.
func bareCheck(pub crypto.PublicKey, raw string) func() bool {
	i := strings.LastIndexByte(raw, '.')
	input := raw[:i]
	sig, _ := base64.RawURLEncoding.DecodeString(raw[i+1:])
	return func() bool {
		h := sha256.Sum256([]byte(input))
		switch k := pub.(type) {
		case *rsa.PublicKey:
			return rsa.VerifyPKCS1v15(k, crypto.SHA256, h[:], sig) == nil
		case *ecdsa.PublicKey:
			return ecdsa.Verify(k, h[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:]))
		}
		return false
	}
}
