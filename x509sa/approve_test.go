package x509sa_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		{name: "nil request", csr: nil, requester: requester, wantErr: ksa.ErrInvalidConfig},
		{name: "hand-made request", csr: &x509sa.CSR{Subject: plain.Subject}, requester: requester, wantErr: ksa.ErrInvalidConfig},
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
				assert.Regexp(t, `"[^"]+" is not allowed`, err.Error(), "names the value refused")
			}
		})
	}
}
