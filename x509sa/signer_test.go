package x509sa_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/x509sa"
)

// TestCheckSignerName holds CheckSignerName to the cases of
// Kubernetes' CSR validation tests
// (k8s.io/kubernetes/pkg/apis/certificates/validation), plus the signers
// that cannot sign a service-account subject.
func TestCheckSignerName(t *testing.T) {
	tests := []struct {
		name   string
		signer string
		reason string
	}{
		{name: "kube-apiserver-client", signer: "kubernetes.io/kube-apiserver-client"},
		{name: "custom", signer: "example.com/my-signer"},
		{name: "dotted path", signer: "example.com/a.b-c.d"},
		{name: "longest", signer: strings.Repeat(strings.Repeat("a", 62)+".", 4)[:253-3] + ".io/" + strings.Repeat(strings.Repeat("b", 252)+".", 2)[:317]},

		{name: "empty", signer: "", reason: "required"},
		{name: "no slash", signer: "an-invalid-signer-name", reason: "must be a fully qualified domain and path"},
		{name: "two slashes", signer: "an-invalid-signer-name.com/something/else", reason: "must be a fully qualified domain and path"},
		{name: "one-label domain", signer: "example/signer", reason: "at least two segments"},
		{name: "bad path part", signer: "example.com/something-", reason: `path part "something-"`},
		{name: "empty path", signer: "example.com/", reason: "path part"},
		{name: "label of 64", signer: strings.Repeat("a", 64) + ".com/s", reason: "domain label"},
		{name: "upper case", signer: "Example.com/s", reason: "domain label"},
		{name: "domain over 253", signer: strings.Repeat("a.", 127) + "io/s", reason: "longer than 253"},
		{name: "572 bytes", signer: strings.Repeat(strings.Repeat("a", 62)+".", 4)[:253-3] + ".io/" + strings.Repeat(strings.Repeat("b", 252)+".", 2)[:318], reason: "longer than 571"},
		{name: "legacy unknown", signer: "kubernetes.io/legacy-unknown", reason: "legacy"},
		{name: "kubelet client", signer: "kubernetes.io/kube-apiserver-client-kubelet", reason: "system:node"},
		{name: "kubelet serving", signer: "kubernetes.io/kubelet-serving", reason: "system:node"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := x509sa.CheckSignerName(tt.signer)
			if tt.reason == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, x509sa.ErrInvalidSignerName)
			assert.ErrorContains(t, err, "signer name "+strconv.Quote(tt.signer)+": ")
			assert.ErrorContains(t, err, tt.reason)
		})
	}
}

func TestResolveUsage(t *testing.T) {
	key := testkeys.Generated("p256")
	sub := x509sa.Subject{ServiceAccount: testSA}
	parse := func(der []byte) *x509sa.CSR {
		csr, err := x509sa.ParseCSR(der)
		require.NoError(t, err)
		return csr
	}
	client := parse(mustCSR(t, key, x509sa.CSROptions{Subject: sub}))
	server := parse(mustCSR(t, key, x509sa.CSROptions{Subject: sub, Usage: x509sa.ServerAuth, Hosts: []string{"cart.shop.svc"}}))
	plain := parse(rawCSR(t, key, mustTemplate(t, sub)))
	tests := []struct {
		name    string
		signer  string
		csr     *x509sa.CSR
		given   x509sa.Usage
		want    x509sa.Usage
		wantErr error
	}{
		{name: "client from the request", signer: x509sa.KubeAPIServerClientSigner, csr: client, want: x509sa.ClientAuth},
		{name: "given and requested agree", signer: x509sa.KubeAPIServerClientSigner, csr: client, given: x509sa.ClientAuth, want: x509sa.ClientAuth},
		{name: "given for a request without EKU", signer: "example.com/s", csr: plain, given: x509sa.ServerAuth, want: x509sa.ServerAuth},
		{name: "server with own signer", signer: "example.com/serving", csr: server, want: x509sa.ServerAuth},

		{name: "neither given nor requested", signer: "example.com/s", csr: plain, wantErr: x509sa.ErrInvalidUsage},
		{name: "given disagrees", signer: "example.com/s", csr: client, given: x509sa.ServerAuth, wantErr: x509sa.ErrInvalidUsage},
		{name: "unknown bits", signer: "example.com/s", csr: client, given: 8, wantErr: x509sa.ErrInvalidUsage},
		{name: "server from the client signer", signer: x509sa.KubeAPIServerClientSigner, csr: server, wantErr: x509sa.ErrInvalidUsage},
		{name: "kubelet serving signer", signer: "kubernetes.io/kubelet-serving", csr: server, wantErr: x509sa.ErrInvalidSignerName},
		{name: "nil request", signer: "example.com/s", csr: nil, wantErr: ksa.ErrInvalidConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := x509sa.ResolveUsage(tt.signer, tt.csr, tt.given)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Zero(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
