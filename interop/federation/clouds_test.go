// Package federation_test proves that one projected-token source serves the
// three clouds' SDKs: the AWS SDK's web identity provider takes
// tokens.FileSource as its IdentityTokenRetriever, Google's external
// account token source takes it through a one-line SubjectTokenSupplier,
// and client-go drives kubeapi.Manager as its Requester.
package federation_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	ststypes "github.com/aws/aws-sdk-go-v2/service/sts/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/oauth2/google/externalaccount"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/kubeapi"
	"github.com/ksa-go/ksa/tokens"
)

// The AWS SDK's retriever interface, satisfied as is.
var _ stscreds.IdentityTokenRetriever = (*tokens.FileSource)(nil)

// googleSupplier is the one-line adapter Google's interface needs (its
// method takes a type of that package).
type googleSupplier struct{ src *tokens.FileSource }

func (g googleSupplier) SubjectToken(ctx context.Context, _ externalaccount.SupplierOptions) (string, error) {
	return g.src.Token(ctx)
}

func projectedToken(t *testing.T, audience string) (*tokens.FileSource, string) {
	t.Helper()
	m, err := tokens.NewMinter(tokens.MinterConfig{Issuer: "https://oidc.example.com", Signer: testkeys.K8sEC()})
	require.NoError(t, err)
	tok, err := m.Mint(t.Context(), tokens.Request{ServiceAccount: ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "u"}, Audiences: []string{audience}})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(path, []byte(tok.Raw+"\n"), 0o600))
	src, err := tokens.NewFileSource(tokens.FileSourceConfig{Path: path})
	require.NoError(t, err)
	return src, tok.Raw
}

// fakeSTS records the web identity token the AWS SDK sends.
type fakeSTS struct{ got string }

func (f *fakeSTS) AssumeRoleWithWebIdentity(_ context.Context, in *sts.AssumeRoleWithWebIdentityInput, _ ...func(*sts.Options)) (*sts.AssumeRoleWithWebIdentityOutput, error) {
	f.got = aws.ToString(in.WebIdentityToken)
	exp := time.Now().Add(time.Hour)
	return &sts.AssumeRoleWithWebIdentityOutput{Credentials: &ststypes.Credentials{
		AccessKeyId: aws.String("AKID"), SecretAccessKey: aws.String("SECRET"), SessionToken: aws.String("SESSION"), Expiration: &exp,
	}}, nil
}

func TestAWSWebIdentity(t *testing.T) {
	src, raw := projectedToken(t, "sts.amazonaws.com")
	stsClient := &fakeSTS{}
	provider := stscreds.NewWebIdentityRoleProvider(stsClient, "arn:aws:iam::123456789012:role/billing", src)
	creds, err := provider.Retrieve(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "AKID", creds.AccessKeyID)
	assert.Equal(t, raw, stsClient.got, "the SDK sent the projected token, trimmed")
}

func TestGoogleExternalAccount(t *testing.T) {
	src, raw := projectedToken(t, "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/k8s")
	var got string
	sts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		got = r.PostForm.Get("subject_token")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"access_token":"ya29.test","issued_token_type":"urn:ietf:params:oauth:token-type:access_token","token_type":"Bearer","expires_in":3600}`))
	}))
	t.Cleanup(sts.Close)
	ts, err := externalaccount.NewTokenSource(t.Context(), externalaccount.Config{
		Audience:             "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/k8s",
		SubjectTokenType:     "urn:ietf:params:oauth:token-type:jwt",
		TokenURL:             sts.URL,
		Scopes:               []string{"https://www.googleapis.com/auth/cloud-platform"},
		SubjectTokenSupplier: googleSupplier{src},
	})
	require.NoError(t, err)
	tok, err := ts.Token()
	require.NoError(t, err)
	assert.Equal(t, "ya29.test", tok.AccessToken)
	assert.Equal(t, raw, got)
}

// clientGoRequester is kubeapi.Requester over client-go: one line.
func clientGoRequester(cs kubernetes.Interface) kubeapi.Requester {
	return kubeapi.RequesterFunc(func(ctx context.Context, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
		return cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, tr, metav1.CreateOptions{})
	})
}

func TestManagerWithClientGo(t *testing.T) {
	cs := fake.NewClientset(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "billing"}})
	calls := 0
	cs.PrependReactor("create", "serviceaccounts", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "token" {
			return false, nil, nil
		}
		calls++
		tr := action.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest).DeepCopy()
		tr.Status.Token = "issued"
		tr.Status.ExpirationTimestamp = metav1.NewTime(time.Now().Add(time.Hour))
		return true, tr, nil
	})
	m, err := kubeapi.NewManager(kubeapi.ManagerConfig{Requester: clientGoRequester(cs)})
	require.NoError(t, err)
	exp := int64(3600)
	for i := 0; i < 3; i++ {
		tr, err := m.Token(t.Context(), "prod", "billing", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"vault"}, ExpirationSeconds: &exp}})
		require.NoError(t, err)
		assert.Equal(t, "issued", tr.Status.Token)
	}
	assert.Equal(t, 1, calls)
}
