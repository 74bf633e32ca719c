package x509sa_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/x509sa"
)

func TestNewCertificateSigningRequest(t *testing.T) {
	ec := testkeys.Generated("p256")
	rsaKey := testkeys.Generated("rsa2048")
	sub := x509sa.Subject{ServiceAccount: testSA}
	clientCSR := mustCSR(t, ec, x509sa.CSROptions{Subject: sub})
	rsaCSR := mustCSR(t, rsaKey, x509sa.CSROptions{Subject: sub})
	serverCSR := mustCSR(t, ec, x509sa.CSROptions{Subject: sub, Usage: x509sa.ServerAuth, Hosts: []string{"cart.shop.svc"}})
	plainCSR := rawCSR(t, ec, mustTemplate(t, sub))
	secs := func(n int32) *int32 { return &n }

	tests := []struct {
		name    string
		csr     []byte
		opts    x509sa.RequestOptions
		want    certificatesv1.CertificateSigningRequestSpec
		wantGen string
		wantErr error
	}{
		{name: "zero options", csr: clientCSR, wantGen: "x509sa-", want: certificatesv1.CertificateSigningRequestSpec{
			SignerName: "kubernetes.io/kube-apiserver-client",
			Usages:     []certificatesv1.KeyUsage{"digital signature", "client auth"},
		}},
		{name: "RSA adds key encipherment", csr: rsaCSR, opts: x509sa.RequestOptions{Name: "cart-1", Lifetime: time.Hour}, want: certificatesv1.CertificateSigningRequestSpec{
			SignerName:        "kubernetes.io/kube-apiserver-client",
			Usages:            []certificatesv1.KeyUsage{"digital signature", "key encipherment", "client auth"},
			ExpirationSeconds: secs(3600),
		}},
		{name: "server usage with own signer", csr: serverCSR, opts: x509sa.RequestOptions{SignerName: "example.com/serving", Lifetime: 10 * time.Minute}, wantGen: "x509sa-", want: certificatesv1.CertificateSigningRequestSpec{
			SignerName:        "example.com/serving",
			Usages:            []certificatesv1.KeyUsage{"digital signature", "server auth"},
			ExpirationSeconds: secs(600),
		}},
		{name: "request without EKU, usage given", csr: plainCSR, opts: x509sa.RequestOptions{Usage: x509sa.ClientAuth}, wantGen: "x509sa-", want: certificatesv1.CertificateSigningRequestSpec{
			SignerName: "kubernetes.io/kube-apiserver-client",
			Usages:     []certificatesv1.KeyUsage{"digital signature", "client auth"},
		}},

		{name: "request without EKU, no usage", csr: plainCSR, wantErr: x509sa.ErrInvalidUsage},
		{name: "usage disagrees with the request", csr: clientCSR, opts: x509sa.RequestOptions{Usage: x509sa.ServerAuth}, wantErr: x509sa.ErrInvalidUsage},
		{name: "unknown usage bits", csr: clientCSR, opts: x509sa.RequestOptions{Usage: 8}, wantErr: x509sa.ErrInvalidUsage},
		{name: "server usage with the client signer", csr: serverCSR, wantErr: x509sa.ErrInvalidUsage},
		{name: "kubelet serving signer", csr: serverCSR, opts: x509sa.RequestOptions{SignerName: "kubernetes.io/kubelet-serving"}, wantErr: x509sa.ErrInvalidSignerName},
		{name: "invalid signer", csr: clientCSR, opts: x509sa.RequestOptions{SignerName: "not-valid"}, wantErr: x509sa.ErrInvalidSignerName},
		{name: "lifetime under 10 minutes", csr: clientCSR, opts: x509sa.RequestOptions{Lifetime: 599 * time.Second}, wantErr: x509sa.ErrInvalidConfig},
		{name: "lifetime not whole seconds", csr: clientCSR, opts: x509sa.RequestOptions{Lifetime: time.Hour + time.Millisecond}, wantErr: x509sa.ErrInvalidConfig},
		{name: "lifetime over int32 seconds", csr: clientCSR, opts: x509sa.RequestOptions{Lifetime: (1 << 31) * time.Second}, wantErr: x509sa.ErrInvalidConfig},
		{name: "bad name", csr: clientCSR, opts: x509sa.RequestOptions{Name: "Cart_1"}, wantErr: x509sa.ErrInvalidConfig},
		{name: "bad request", csr: []byte("nope"), wantErr: x509sa.ErrMalformedCSR},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, err := x509sa.NewCertificateSigningRequest(tt.csr, tt.opts)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, obj)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "certificates.k8s.io/v1", obj.APIVersion)
			assert.Equal(t, "CertificateSigningRequest", obj.Kind)
			assert.Equal(t, tt.wantGen, obj.GenerateName)
			assert.Equal(t, tt.opts.Name, obj.Name)
			der, err := x509sa.DecodeCSRPEM(obj.Spec.Request)
			require.NoError(t, err)
			assert.Equal(t, tt.csr, der)
			tt.want.Request = obj.Spec.Request
			assert.Equal(t, tt.want, obj.Spec)
		})
	}
}

// TestValidateSignerName holds ValidateSignerName to the cases of
// Kubernetes' CSR validation tests
// (k8s.io/kubernetes/pkg/apis/certificates/validation), plus the signers
// that cannot sign a service-account subject.
func TestValidateSignerName(t *testing.T) {
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
			err := x509sa.ValidateSignerName(tt.signer)
			if tt.reason == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, x509sa.ErrInvalidSignerName)
			var se *x509sa.SignerNameError
			require.ErrorAs(t, err, &se)
			assert.Equal(t, tt.signer, se.SignerName)
			assert.Contains(t, se.Reason, tt.reason)
		})
	}
}

func TestUsageFromKubernetes(t *testing.T) {
	tests := []struct {
		name    string
		usages  []certificatesv1.KeyUsage
		want    x509sa.Usage
		wantErr bool
	}{
		{name: "client", usages: []certificatesv1.KeyUsage{"client auth"}, want: x509sa.ClientAuth},
		{name: "kubelet client", usages: []certificatesv1.KeyUsage{"digital signature", "key encipherment", "client auth"}, want: x509sa.ClientAuth},
		{name: "both", usages: []certificatesv1.KeyUsage{"server auth", "digital signature", "client auth"}, want: x509sa.ClientAndServerAuth},
		{name: "none", usages: nil, wantErr: true},
		{name: "digital signature only", usages: []certificatesv1.KeyUsage{"digital signature"}, wantErr: true},
		{name: "unknown", usages: []certificatesv1.KeyUsage{"client auth", "unknown"}, wantErr: true},
		{name: "code signing", usages: []certificatesv1.KeyUsage{"client auth", "code signing"}, wantErr: true},
		{name: "any", usages: []certificatesv1.KeyUsage{"any"}, wantErr: true},
		{name: "duplicate", usages: []certificatesv1.KeyUsage{"client auth", "client auth"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := x509sa.UsageFromKubernetes(tt.usages)
			if tt.wantErr {
				require.ErrorIs(t, err, x509sa.ErrInvalidUsage)
				var ue *x509sa.UsageError
				require.ErrorAs(t, err, &ue)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	assert.Equal(t, "none", x509sa.Usage(0).String())
	assert.Equal(t, "client", x509sa.ClientAuth.String())
	assert.Equal(t, "server", x509sa.ServerAuth.String())
	assert.Equal(t, "client+server", x509sa.ClientAndServerAuth.String())
	assert.Equal(t, "invalid", x509sa.Usage(4).String())
}

func TestRequesterOf(t *testing.T) {
	obj := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
		Username: testSA.Username(), UID: testSA.UID, Groups: []string{"system:serviceaccounts"},
		Extra: map[string]certificatesv1.ExtraValue{ksa.ExtraPodName: {"p"}},
	}}
	assert.Equal(t, ksa.UserInfo{
		Username: testSA.Username(), UID: testSA.UID, Groups: []string{"system:serviceaccounts"},
		Extra: map[string][]string{ksa.ExtraPodName: {"p"}},
	}, x509sa.RequesterOf(obj))
	assert.Nil(t, x509sa.RequesterOf(&certificatesv1.CertificateSigningRequest{}).Extra)
}
