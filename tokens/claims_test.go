package tokens_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/tokens"
)

// TestClaimsJSON holds the claim encoding to the payloads Kubernetes'
// Claims() (k8s.io/kubernetes/pkg/serviceaccount) and go-jose's builder
// produce, bound and legacy, as its claims tests expect them: sorted
// members, empty claims omitted, aud an array.
func TestClaimsJSON(t *testing.T) {
	iat := k8sNow
	ref := func(name, uid string) *ksa.ObjectRef { return &ksa.ObjectRef{Name: name, UID: uid} }
	base := func(exp time.Duration, aud []string, k *tokens.KubernetesClaims) *tokens.Claims {
		return &tokens.Claims{
			Issuer: testIssuer, Subject: "system:serviceaccount:myns:mysvcacct", Audience: aud,
			IssuedAt: iat, NotBefore: iat, Expiry: iat.Add(exp), ID: "fixed", Kubernetes: k,
		}
	}
	kube := func(mod func(*tokens.KubernetesClaims)) *tokens.KubernetesClaims {
		k := &tokens.KubernetesClaims{Namespace: "myns", ServiceAccount: ksa.ObjectRef{Name: "mysvcacct", UID: "mysvcacct-uid"}}
		if mod != nil {
			mod(k)
		}
		return k
	}
	const sa = `"serviceaccount":{"name":"mysvcacct","uid":"mysvcacct-uid"}`
	tests := []struct {
		name   string
		claims *tokens.Claims
		want   string
	}{
		{
			name:   "item 25: pod, no audience, exp 100",
			claims: base(100*time.Second, []string{}, kube(func(k *tokens.KubernetesClaims) { k.Pod = ref("mypod", "mypod-uid") })),
			want:   `{"exp":1514764900,"iat":1514764800,"iss":"` + testIssuer + `","jti":"fixed","kubernetes.io":{"namespace":"myns","pod":{"name":"mypod","uid":"mypod-uid"},` + sa + `},"nbf":1514764800,"sub":"system:serviceaccount:myns:mysvcacct"}`,
		},
		{
			name:   "item 26: secret, one audience",
			claims: base(100*time.Second, []string{"1"}, kube(func(k *tokens.KubernetesClaims) { k.Secret = ref("mysecret", "mysecret-uid") })),
			want:   `{"aud":["1"],"exp":1514764900,"iat":1514764800,"iss":"` + testIssuer + `","jti":"fixed","kubernetes.io":{"namespace":"myns","secret":{"name":"mysecret","uid":"mysecret-uid"},` + sa + `},"nbf":1514764800,"sub":"system:serviceaccount:myns:mysvcacct"}`,
		},
		{
			name:   "item 27: no binding, two audiences",
			claims: base(100*time.Second, []string{"1", "2"}, kube(nil)),
			want:   `{"aud":["1","2"],"exp":1514764900,"iat":1514764800,"iss":"` + testIssuer + `","jti":"fixed","kubernetes.io":{"namespace":"myns",` + sa + `},"nbf":1514764800,"sub":"system:serviceaccount:myns:mysvcacct"}`,
		},
		{
			name: "item 28: pod with warnafter",
			claims: base(86400*time.Second, nil, kube(func(k *tokens.KubernetesClaims) {
				k.Pod = ref("mypod", "mypod-uid")
				k.WarnAfter = iat.Add(3600 * time.Second)
			})),
			want: `{"exp":1514851200,"iat":1514764800,"iss":"` + testIssuer + `","jti":"fixed","kubernetes.io":{"namespace":"myns","pod":{"name":"mypod","uid":"mypod-uid"},` + sa + `,"warnafter":1514768400},"nbf":1514764800,"sub":"system:serviceaccount:myns:mysvcacct"}`,
		},
		{
			name:   "item 29: node only, exp 0",
			claims: base(0, nil, kube(func(k *tokens.KubernetesClaims) { k.Node = ref("mynode", "mynode-uid") })),
			want:   `{"exp":1514764800,"iat":1514764800,"iss":"` + testIssuer + `","jti":"fixed","kubernetes.io":{"namespace":"myns","node":{"name":"mynode","uid":"mynode-uid"},` + sa + `},"nbf":1514764800,"sub":"system:serviceaccount:myns:mysvcacct"}`,
		},
		{
			name: "item 30: pod and node",
			claims: base(100*time.Second, nil, kube(func(k *tokens.KubernetesClaims) {
				k.Pod = ref("mypod", "mypod-uid")
				k.Node = ref("mynode", "mynode-uid")
			})),
			want: `{"exp":1514764900,"iat":1514764800,"iss":"` + testIssuer + `","jti":"fixed","kubernetes.io":{"namespace":"myns","node":{"name":"mynode","uid":"mynode-uid"},"pod":{"name":"mypod","uid":"mypod-uid"},` + sa + `},"nbf":1514764800,"sub":"system:serviceaccount:myns:mysvcacct"}`,
		},
		{
			name: "node without uid (Node object not found)",
			claims: base(100*time.Second, nil, kube(func(k *tokens.KubernetesClaims) {
				k.Pod = ref("mypod", "mypod-uid")
				k.Node = ref("mynode", "")
			})),
			want: `{"exp":1514764900,"iat":1514764800,"iss":"` + testIssuer + `","jti":"fixed","kubernetes.io":{"namespace":"myns","node":{"name":"mynode"},"pod":{"name":"mypod","uid":"mypod-uid"},` + sa + `},"nbf":1514764800,"sub":"system:serviceaccount:myns:mysvcacct"}`,
		},
		{
			name:   "empty service account ref written as an object",
			claims: &tokens.Claims{Kubernetes: &tokens.KubernetesClaims{}},
			want:   `{"kubernetes.io":{"serviceaccount":{}}}`,
		},
		{
			name:   "html characters escaped as go-jose escapes them",
			claims: &tokens.Claims{Issuer: "https://a?b=<c>&d", Audience: []string{"x\u2028y"}},
			want:   `{"aud":["x\u2028y"],"iss":"https://a?b=\u003cc\u003e\u0026d"}`,
		},
		{
			name: "legacy secret-based token",
			claims: &tokens.Claims{Issuer: tokens.LegacyIssuer, Subject: "system:serviceaccount:ns:sa", Legacy: &tokens.LegacyClaims{
				Namespace: "ns", SecretName: "sec", ServiceAccountName: "sa", ServiceAccountUID: "uid"}},
			want: `{"iss":"kubernetes/serviceaccount","kubernetes.io/serviceaccount/namespace":"ns","kubernetes.io/serviceaccount/secret.name":"sec","kubernetes.io/serviceaccount/service-account.name":"sa","kubernetes.io/serviceaccount/service-account.uid":"uid","sub":"system:serviceaccount:ns:sa"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.claims.MarshalJSON()
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(got))

			// What we write, we read back to the same claims.
			back, err := tokens.ParseClaims(got)
			require.NoError(t, err)
			again, err := back.MarshalJSON()
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(again))
		})
	}
}

func TestClaimsIdentity(t *testing.T) {
	c := &tokens.Claims{ID: "abc", Kubernetes: &tokens.KubernetesClaims{
		Namespace:      "ns",
		ServiceAccount: ksa.ObjectRef{Name: "sa", UID: "sa-uid"},
		Pod:            &ksa.ObjectRef{Name: "p", UID: "p-uid"},
		Node:           &ksa.ObjectRef{Name: "n", UID: "n-uid"},
	}}
	assert.Equal(t, ksa.Identity{
		ServiceAccount: ksa.ServiceAccount{Namespace: "ns", Name: "sa", UID: "sa-uid"},
		Pod:            ksa.ObjectRef{Name: "p", UID: "p-uid"},
		Node:           ksa.ObjectRef{Name: "n", UID: "n-uid"},
		CredentialID:   "JTI=abc",
	}, c.Identity())

	legacy := &tokens.Claims{ID: "ignored", Legacy: &tokens.LegacyClaims{Namespace: "ns", SecretName: "s", ServiceAccountName: "sa", ServiceAccountUID: "u"}}
	assert.Equal(t, ksa.Identity{ServiceAccount: ksa.ServiceAccount{Namespace: "ns", Name: "sa", UID: "u"}}, legacy.Identity())
	assert.Equal(t, ksa.Identity{}, (&tokens.Claims{}).Identity())
}
