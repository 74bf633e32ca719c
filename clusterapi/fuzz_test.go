package clusterapi_test

import (
	"crypto"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ksa-go/ksa/clusterapi"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/jwks"
)

// FuzzReadSecret: ReadSecret never panics, and a Secret it accepts is
// one NewSecret renders again from what it read, with the same keys.
func FuzzReadSecret(f *testing.F) {
	rsaKey, ecKey := testkeys.K8sRSA(), testkeys.K8sEC()
	rsaPEM, ecPEM := wantPrivatePEM(f, rsaKey), wantPrivatePEM(f, ecKey)
	rsaPub, ecPub := publicPEM(f, rsaKey), publicPEM(f, ecKey)
	const typ = string(clusterapi.SecretType)
	f.Add("c1-sa", "c1", typ, rsaPEM, rsaPub)
	f.Add("c1-sa", "c1", typ, ecPEM, append(append([]byte{}, ecPub...), rsaPub...))
	f.Add("c1-sa", "c1", "kubernetes.io/tls", pkcs8PEM(f, ecKey), ecPub)
	f.Add("c1-sa", "c1", typ, ecPEM, rsaPub)
	f.Add("c1-sa", "c1", typ, ecPEM, ecPEM)
	f.Add("c1-sa", "c1", typ, ecPEM, append(append([]byte{}, ecPub...), ecPub...))
	f.Add("c1-sa", "c2", typ, ecPEM, ecPub)
	f.Add("c1", "c1", typ, ecPEM, ecPub)
	f.Add("-sa", "", "Opaque", ecPEM, ecPub)
	f.Add("c1-sa", "c1", typ, []byte("-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n"), ecPub)
	f.Add("c1-sa", "c1", typ, []byte{}, []byte("-----BEGIN PUBLIC KEY-----\n"))
	f.Fuzz(func(t *testing.T, name, label, typ string, key, crt []byte) {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{clusterapi.ClusterNameLabel: label}},
			Type:       corev1.SecretType(typ),
			Data:       map[string][]byte{corev1.TLSPrivateKeyKey: key, corev1.TLSCertKey: crt},
		}
		pair, err := clusterapi.ReadSecret(s)
		if err != nil {
			if pair != nil {
				t.Fatal("a key pair with an error")
			}
			return
		}
		if clusterapi.SecretName(pair.Cluster) != name || label != pair.Cluster {
			t.Fatalf("accepted %q labelled %q as cluster %q", name, label, pair.Cluster)
		}
		if len(key) > clusterapi.MaxDataBytes || len(crt) > clusterapi.MaxDataBytes {
			t.Fatal("accepted data over MaxDataBytes")
		}
		kid, err := jwks.KeyID(pair.Signer)
		if err != nil || kid != pair.KeyID || pair.Keys[0].KeyID != kid {
			t.Fatalf("key ID %q, the signer's %q (%v), tls.crt's first %q", pair.KeyID, kid, err, pair.Keys[0].KeyID)
		}
		var verify []crypto.PublicKey
		for _, k := range pair.Keys[1:] {
			verify = append(verify, k.Public)
		}
		again, err := clusterapi.NewSecret(pair.Cluster, pair.Signer, clusterapi.SecretOptions{Namespace: "ns", VerifyKeys: verify})
		if err != nil {
			t.Fatalf("NewSecret refuses what ReadSecret accepted: %v", err)
		}
		back, err := clusterapi.ReadSecret(again)
		if err != nil {
			t.Fatalf("ReadSecret refuses what NewSecret rendered: %v", err)
		}
		if len(back.Keys) != len(pair.Keys) {
			t.Fatalf("%d keys again, %d read", len(back.Keys), len(pair.Keys))
		}
		for i := range back.Keys {
			if back.Keys[i].KeyID != pair.Keys[i].KeyID {
				t.Fatalf("key #%d: kid %s again, %s read", i, back.Keys[i].KeyID, pair.Keys[i].KeyID)
			}
		}
	})
}
