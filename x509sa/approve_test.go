package x509sa_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/x509sa"
)

// podRequester is the user a pod-bound token of testSA authenticates as.
func podRequester(pod string) ksa.UserInfo {
	return ksa.Identity{
		ServiceAccount: testSA,
		Pod:            ksa.ObjectRef{Name: pod, UID: "pod-uid-1"},
		Node:           ksa.ObjectRef{Name: "node-1", UID: "node-uid-1"},
		CredentialID:   "JTI=abc",
	}.UserInfo()
}

func TestMatchRequester(t *testing.T) {
	key := testkeys.Generated("p256")
	parse := func(opts x509sa.CSROptions) *x509sa.CSR {
		csr, err := x509sa.ParseCSR(mustCSR(t, key, opts))
		require.NoError(t, err)
		return csr
	}
	plain := parse(x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA}})
	noUID := parse(x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: ksa.ServiceAccount{Namespace: "shop", Name: "cart"}}})
	withPod := parse(x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA, PodName: "cart-0"}})
	withExt := parse(x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA, Extensions: map[string]string{"team": "a"}}})
	svid := parse(x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: testSA}, Usage: x509sa.ClientAndServerAuth, TrustDomain: "cluster.local", Hosts: []string{"cart.shop.svc", "10.0.0.7"}})
	// The user kube-apiserver records adds system:authenticated.
	requester := podRequester("cart-0")
	requester.Groups = append(requester.Groups, "system:authenticated")

	tests := []struct {
		name      string
		csr       *x509sa.CSR
		requester ksa.UserInfo
		opts      x509sa.MatchOptions
		wantErr   error
		wantField string
	}{
		{name: "own identity", csr: plain, requester: requester},
		{name: "no UID requested, any requester UID", csr: noUID, requester: ksa.UserInfo{Username: testSA.Username(), Groups: testSA.Groups()}},
		{name: "own pod", csr: withPod, requester: requester},
		{name: "allowed extension", csr: withExt, requester: requester, opts: x509sa.MatchOptions{AllowExtension: func(k, v string) bool { return k == "team" && v == "a" }}},
		{name: "allowed hosts and trust domain", csr: svid, requester: requester, opts: x509sa.MatchOptions{
			TrustDomain: "cluster.local",
			AllowHost:   func(h string) bool { return h == "10.0.0.7" || strings.HasSuffix(h, ".shop.svc") },
		}},

		{name: "other account", csr: plain, requester: ksa.UserInfo{Username: "system:serviceaccount:shop:admin", UID: testSA.UID, Groups: testSA.Groups()}, wantErr: x509sa.ErrRequesterMismatch, wantField: "username"},
		{name: "user named like the account", csr: noUID, requester: ksa.UserInfo{Username: testSA.Username(), Groups: []string{"system:authenticated"}}, wantErr: x509sa.ErrRequesterMismatch, wantField: "groups"},
		{name: "only one group", csr: noUID, requester: ksa.UserInfo{Username: testSA.Username(), Groups: []string{"system:serviceaccounts"}}, wantErr: x509sa.ErrRequesterMismatch, wantField: "groups"},
		{name: "UID differs", csr: plain, requester: ksa.UserInfo{Username: testSA.Username(), UID: "other", Groups: testSA.Groups()}, wantErr: x509sa.ErrRequesterMismatch, wantField: "uid"},
		{name: "UID unknown", csr: plain, requester: ksa.UserInfo{Username: testSA.Username(), Groups: testSA.Groups()}, wantErr: x509sa.ErrRequesterMismatch, wantField: "uid"},
		{name: "other pod", csr: withPod, requester: podRequester("cart-1"), wantErr: x509sa.ErrRequesterMismatch, wantField: "pod-name"},
		{name: "token not bound to a pod", csr: withPod, requester: ksa.UserInfo{Username: testSA.Username(), UID: testSA.UID, Groups: testSA.Groups()}, wantErr: x509sa.ErrRequesterMismatch, wantField: "pod-name"},
		{name: "two pod names", csr: withPod, requester: ksa.UserInfo{Username: testSA.Username(), UID: testSA.UID, Groups: testSA.Groups(), Extra: map[string][]string{ksa.ExtraPodName: {"cart-0", "cart-0"}}}, wantErr: x509sa.ErrRequesterMismatch, wantField: "pod-name"},
		{name: "extension with zero policy", csr: withExt, requester: requester, wantErr: x509sa.ErrNotAllowed},
		{name: "extension refused", csr: withExt, requester: requester, opts: x509sa.MatchOptions{AllowExtension: func(string, string) bool { return false }}, wantErr: x509sa.ErrNotAllowed},
		{name: "hosts with zero policy", csr: svid, requester: requester, opts: x509sa.MatchOptions{TrustDomain: "cluster.local"}, wantErr: x509sa.ErrNotAllowed},
		{name: "one host refused", csr: svid, requester: requester, opts: x509sa.MatchOptions{TrustDomain: "cluster.local", AllowHost: func(h string) bool { return h != "10.0.0.7" }}, wantErr: x509sa.ErrNotAllowed},
		{name: "SPIFFE ID with zero policy", csr: svid, requester: requester, opts: x509sa.MatchOptions{AllowHost: func(string) bool { return true }}, wantErr: x509sa.ErrNotAllowed},
		{name: "SPIFFE ID in another trust domain", csr: svid, requester: requester, opts: x509sa.MatchOptions{TrustDomain: "other.local", AllowHost: func(string) bool { return true }}, wantErr: x509sa.ErrNotAllowed},
		{name: "nil request", csr: nil, requester: requester, wantErr: x509sa.ErrInvalidConfig},
		{name: "hand-made request", csr: &x509sa.CSR{Subject: plain.Subject}, requester: requester, wantErr: x509sa.ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := x509sa.MatchRequester(tt.csr, tt.requester, tt.opts)
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
			if tt.wantField != "" {
				var me *x509sa.MismatchError
				require.ErrorAs(t, err, &me)
				assert.Equal(t, tt.wantField, me.Field)
			}
			if tt.wantErr == x509sa.ErrNotAllowed {
				var pe *x509sa.PolicyError
				require.ErrorAs(t, err, &pe)
				assert.NotEmpty(t, pe.Value)
			}
		})
	}
}

func TestCheckCertificateSigningRequest(t *testing.T) {
	key := testkeys.Generated("p256")
	sub := x509sa.Subject{ServiceAccount: testSA, PodName: "cart-0"}
	obj := func(mut func(*certificatesv1.CertificateSigningRequest)) *certificatesv1.CertificateSigningRequest {
		o, err := x509sa.NewCertificateSigningRequest(mustCSR(t, key, x509sa.CSROptions{Subject: sub}), x509sa.RequestOptions{})
		require.NoError(t, err)
		r := podRequester("cart-0")
		o.Spec.Username, o.Spec.UID = r.Username, r.UID
		o.Spec.Groups = append(r.Groups, "system:authenticated")
		o.Spec.Extra = map[string]certificatesv1.ExtraValue{}
		for k, v := range r.Extra {
			o.Spec.Extra[k] = v
		}
		if mut != nil {
			mut(o)
		}
		return o
	}
	serverObj := obj(func(o *certificatesv1.CertificateSigningRequest) {
		o.Spec.Request = x509sa.EncodeCSRPEM(mustCSR(t, key, x509sa.CSROptions{Subject: sub, Usage: x509sa.ServerAuth, Hosts: []string{"cart"}}))
		o.Spec.SignerName = "example.com/serving"
		o.Spec.Usages = []certificatesv1.KeyUsage{"digital signature", "server auth"}
	})
	tests := []struct {
		name    string
		obj     *certificatesv1.CertificateSigningRequest
		opts    x509sa.MatchOptions
		wantErr error
	}{
		{name: "approvable", obj: obj(nil)},
		{name: "serving with own signer", obj: serverObj, opts: x509sa.MatchOptions{AllowHost: func(h string) bool { return h == "cart" }}},

		{name: "nil", obj: nil, wantErr: x509sa.ErrInvalidConfig},
		{name: "bad signer", obj: obj(func(o *certificatesv1.CertificateSigningRequest) { o.Spec.SignerName = "nope" }), wantErr: x509sa.ErrInvalidSignerName},
		{name: "bad PEM", obj: obj(func(o *certificatesv1.CertificateSigningRequest) { o.Spec.Request = []byte("x") }), wantErr: x509sa.ErrMalformedCSR},
		{name: "bad usages", obj: obj(func(o *certificatesv1.CertificateSigningRequest) {
			o.Spec.Usages = []certificatesv1.KeyUsage{"cert sign"}
		}), wantErr: x509sa.ErrInvalidUsage},
		{name: "usages disagree with the request", obj: obj(func(o *certificatesv1.CertificateSigningRequest) {
			o.Spec.Usages = []certificatesv1.KeyUsage{"client auth", "server auth"}
		}), wantErr: x509sa.ErrInvalidUsage},
		{name: "server usage for the client signer", obj: obj(func(o *certificatesv1.CertificateSigningRequest) {
			o.Spec.Request, o.Spec.Usages = serverObj.Spec.Request, serverObj.Spec.Usages
		}), opts: x509sa.MatchOptions{AllowHost: func(string) bool { return true }}, wantErr: x509sa.ErrInvalidUsage},
		{name: "requested by someone else", obj: obj(func(o *certificatesv1.CertificateSigningRequest) { o.Spec.Username = "alice" }), wantErr: x509sa.ErrRequesterMismatch},
		{name: "requested from another pod", obj: obj(func(o *certificatesv1.CertificateSigningRequest) {
			o.Spec.Extra[ksa.ExtraPodName] = certificatesv1.ExtraValue{"cart-9"}
		}), wantErr: x509sa.ErrRequesterMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			csr, err := x509sa.CheckCertificateSigningRequest(tt.obj, tt.opts)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, csr)
				return
			}
			require.NoError(t, err)
			assert.True(t, csr.Subject.Equal(sub))
		})
	}
}
