package kubeapi_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/x509sa"
)

func TestNewCertificateSigningRequest(t *testing.T) {
	ec := testkeys.Generated("p256")
	rsaKey := testkeys.Generated("rsa2048")
	sub := x509sa.Subject{ServiceAccount: certSA}
	clientCSR := mustCSR(t, ec, x509sa.CSROptions{Subject: sub})
	rsaCSR := mustCSR(t, rsaKey, x509sa.CSROptions{Subject: sub})
	serverCSR := mustCSR(t, ec, x509sa.CSROptions{Subject: sub, Usage: x509sa.ServerAuth, Hosts: []string{"cart.shop.svc"}})
	plainCSR := rawCSR(t, ec, mustTemplate(t, sub))
	secs := func(n int32) *int32 { return &n }

	tests := []struct {
		name    string
		csr     []byte
		opts    kubeapi.CertificateSigningRequestOptions
		want    certificatesv1.CertificateSigningRequestSpec
		wantGen string
		wantErr error
	}{
		{name: "zero options", csr: clientCSR, wantGen: "x509sa-", want: certificatesv1.CertificateSigningRequestSpec{
			SignerName: "kubernetes.io/kube-apiserver-client",
			Usages:     []certificatesv1.KeyUsage{"digital signature", "client auth"},
		}},
		{name: "RSA adds key encipherment", csr: rsaCSR, opts: kubeapi.CertificateSigningRequestOptions{Name: "cart-1", Lifetime: time.Hour}, want: certificatesv1.CertificateSigningRequestSpec{
			SignerName:        "kubernetes.io/kube-apiserver-client",
			Usages:            []certificatesv1.KeyUsage{"digital signature", "key encipherment", "client auth"},
			ExpirationSeconds: secs(3600),
		}},
		{name: "server usage with own signer", csr: serverCSR, opts: kubeapi.CertificateSigningRequestOptions{SignerName: "example.com/serving", Lifetime: 10 * time.Minute}, wantGen: "x509sa-", want: certificatesv1.CertificateSigningRequestSpec{
			SignerName:        "example.com/serving",
			Usages:            []certificatesv1.KeyUsage{"digital signature", "server auth"},
			ExpirationSeconds: secs(600),
		}},
		{name: "request without EKU, usage given", csr: plainCSR, opts: kubeapi.CertificateSigningRequestOptions{Usage: x509sa.ClientAuth}, wantGen: "x509sa-", want: certificatesv1.CertificateSigningRequestSpec{
			SignerName: "kubernetes.io/kube-apiserver-client",
			Usages:     []certificatesv1.KeyUsage{"digital signature", "client auth"},
		}},

		{name: "request without EKU, no usage", csr: plainCSR, wantErr: x509sa.ErrInvalidUsage},
		{name: "usage disagrees with the request", csr: clientCSR, opts: kubeapi.CertificateSigningRequestOptions{Usage: x509sa.ServerAuth}, wantErr: x509sa.ErrInvalidUsage},
		{name: "unknown usage bits", csr: clientCSR, opts: kubeapi.CertificateSigningRequestOptions{Usage: 8}, wantErr: x509sa.ErrInvalidUsage},
		{name: "server usage with the client signer", csr: serverCSR, wantErr: x509sa.ErrInvalidUsage},
		{name: "kubelet serving signer", csr: serverCSR, opts: kubeapi.CertificateSigningRequestOptions{SignerName: "kubernetes.io/kubelet-serving"}, wantErr: x509sa.ErrInvalidSignerName},
		{name: "invalid signer", csr: clientCSR, opts: kubeapi.CertificateSigningRequestOptions{SignerName: "not-valid"}, wantErr: x509sa.ErrInvalidSignerName},
		{name: "lifetime under 10 minutes", csr: clientCSR, opts: kubeapi.CertificateSigningRequestOptions{Lifetime: 599 * time.Second}, wantErr: ksa.ErrInvalidConfig},
		{name: "lifetime not whole seconds", csr: clientCSR, opts: kubeapi.CertificateSigningRequestOptions{Lifetime: time.Hour + time.Millisecond}, wantErr: ksa.ErrInvalidConfig},
		{name: "lifetime over int32 seconds", csr: clientCSR, opts: kubeapi.CertificateSigningRequestOptions{Lifetime: (1 << 31) * time.Second}, wantErr: ksa.ErrInvalidConfig},
		{name: "bad name", csr: clientCSR, opts: kubeapi.CertificateSigningRequestOptions{Name: "Cart_1"}, wantErr: ksa.ErrInvalidConfig},
		{name: "bad request", csr: []byte("nope"), wantErr: x509sa.ErrMalformedCSR},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, err := kubeapi.NewCertificateSigningRequest(tt.csr, tt.opts)
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

func TestUsageFromKeyUsages(t *testing.T) {
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
			got, err := kubeapi.UsageFromKeyUsages(tt.usages)
			if tt.wantErr {
				require.ErrorIs(t, err, x509sa.ErrInvalidUsage)
				assert.ErrorContains(t, err, "kubeapi: usage ")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCSRRequester(t *testing.T) {
	obj := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{
		Username: certSA.Username(), UID: certSA.UID, Groups: []string{"system:serviceaccounts"},
		Extra: map[string]certificatesv1.ExtraValue{ksa.ExtraPodName: {"p"}},
	}}
	assert.Equal(t, ksa.UserInfo{
		Username: certSA.Username(), UID: certSA.UID, Groups: []string{"system:serviceaccounts"},
		Extra: map[string][]string{ksa.ExtraPodName: {"p"}},
	}, kubeapi.CSRRequester(obj))
	assert.Nil(t, kubeapi.CSRRequester(&certificatesv1.CertificateSigningRequest{}).Extra)
}

func TestCheckCertificateSigningRequest(t *testing.T) {
	key := testkeys.Generated("p256")
	sub := x509sa.Subject{ServiceAccount: certSA, PodName: "cart-0"}
	obj := func(mut func(*certificatesv1.CertificateSigningRequest)) *certificatesv1.CertificateSigningRequest {
		o, err := kubeapi.NewCertificateSigningRequest(mustCSR(t, key, x509sa.CSROptions{Subject: sub}), kubeapi.CertificateSigningRequestOptions{})
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

		{name: "nil", obj: nil, wantErr: ksa.ErrInvalidConfig},
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
			csr, err := kubeapi.CheckCertificateSigningRequest(tt.obj, tt.opts)
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

func TestIssueRequestFromCSR(t *testing.T) {
	der := mustCSR(t, testkeys.Generated("p256"), x509sa.CSROptions{Subject: x509sa.Subject{ServiceAccount: certSA}})
	obj, err := kubeapi.NewCertificateSigningRequest(der, kubeapi.CertificateSigningRequestOptions{Lifetime: 2 * time.Hour})
	require.NoError(t, err)
	req, err := kubeapi.IssueRequestFromCSR(obj)
	require.NoError(t, err)
	assert.Equal(t, x509sa.IssueRequest{CSR: der, Usage: x509sa.ClientAuth, MaxLifetime: 2 * time.Hour}, req)

	obj.Spec.ExpirationSeconds = nil
	req, err = kubeapi.IssueRequestFromCSR(obj)
	require.NoError(t, err)
	assert.Zero(t, req.MaxLifetime)

	for name, mut := range map[string]func(o *certificatesv1.CertificateSigningRequest) error{
		"zero expiration": func(o *certificatesv1.CertificateSigningRequest) error {
			z := int32(0)
			o.Spec.ExpirationSeconds = &z
			return ksa.ErrInvalidConfig
		},
		"bad usages": func(o *certificatesv1.CertificateSigningRequest) error {
			o.Spec.Usages = nil
			return x509sa.ErrInvalidUsage
		},
		"bad PEM": func(o *certificatesv1.CertificateSigningRequest) error {
			o.Spec.Request = bytes.Repeat([]byte("x"), 10)
			return x509sa.ErrMalformedCSR
		},
	} {
		t.Run(name, func(t *testing.T) {
			o := obj.DeepCopy()
			want := mut(o)
			_, err := kubeapi.IssueRequestFromCSR(o)
			require.ErrorIs(t, err, want)
		})
	}
	_, err = kubeapi.IssueRequestFromCSR(nil)
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
}
