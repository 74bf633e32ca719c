package s3

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/publish"
)

// caBundle writes a CA certificate for AWS_CA_BUNDLE, as corporate
// networks set it.
func caBundle(t *testing.T) string {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	p := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644))
	return p
}

// TestS3PreflightAccess: what S3 answers about the bucket policy decides
// whether the bucket is known public, known private or unknown; an
// answer that says nothing (an S3-compatible server without the call)
// is unknown, never private. AWS_CA_BUNDLE is set, as on a corporate
// network: the store's client must take it.
func TestS3PreflightAccess(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   publish.Access
	}{
		{name: "public policy", status: 200, body: `<PolicyStatus><IsPublic>TRUE</IsPublic></PolicyStatus>`, want: publish.AccessPublic},
		{name: "private policy", status: 200, body: `<PolicyStatus><IsPublic>FALSE</IsPublic></PolicyStatus>`, want: publish.AccessPrivate},
		{name: "no policy", status: 404, body: `<Error><Code>NoSuchBucketPolicy</Code><Message>The bucket policy does not exist</Message></Error>`, want: publish.AccessPrivate},
		{name: "not implemented", status: 501, body: `<Error><Code>NotImplemented</Code><Message>no</Message></Error>`, want: publish.AccessUnknown},
		{name: "not allowed", status: 403, body: `<Error><Code>AccessDenied</Code><Message>no</Message></Error>`, want: publish.AccessUnknown},
		{name: "another answer", status: 200, body: `<ListBucketResult><Name>oidc</Name></ListBucketResult>`, want: publish.AccessUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, ok := r.URL.Query()["policyStatus"]; ok {
					w.Header().Set("Content-Type", "application/xml")
					w.WriteHeader(tt.status)
					_, _ = w.Write([]byte(tt.body))
					return
				}
				w.WriteHeader(http.StatusOK) // HeadBucket
			}))
			defer srv.Close()
			t.Setenv("AWS_ENDPOINT_URL_S3", srv.URL)
			t.Setenv("AWS_ACCESS_KEY_ID", "test")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
			t.Setenv("AWS_REGION", "eu-west-1")
			t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
			t.Setenv("AWS_CA_BUNDLE", caBundle(t))
			t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "config"))
			t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "credentials"))
			loc, err := publish.ParseLocation("s3://oidc/cluster-1")
			require.NoError(t, err)
			st, err := Open(context.Background(), loc, publish.Config{})
			require.NoError(t, err)
			assert.Equal(t, "https://oidc.s3.eu-west-1.amazonaws.com/cluster-1", st.PublicURL())
			pf, err := st.Preflight(context.Background())
			require.NoError(t, err)
			assert.Equal(t, tt.want, pf.Access)
			assert.Contains(t, pf.AccessFix, "arn:aws:s3:::oidc/cluster-1/*")
		})
	}
}
