package publish

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLocation(t *testing.T) {
	tests := []struct {
		name, raw string
		want      Location
		key, url  string // Key and URL of "openid/v1/jwks"
		wantErr   string
	}{
		{name: "azure", raw: "https://oidcissuer.blob.core.windows.net/cluster-1/prod/",
			want: Location{Kind: Azure, Account: "oidcissuer", Bucket: "cluster-1", Prefix: "prod"},
			key:  "prod/openid/v1/jwks", url: "https://oidcissuer.blob.core.windows.net/cluster-1/prod/openid/v1/jwks"},
		{name: "azure container root", raw: "https://acct.blob.core.windows.net/c",
			want: Location{Kind: Azure, Account: "acct", Bucket: "c"}, key: "openid/v1/jwks"},
		{name: "azure china", raw: "https://acct.blob.core.chinacloudapi.cn/c/p",
			want: Location{Kind: Azure, Account: "acct", Bucket: "c", Prefix: "p"}, key: "p/openid/v1/jwks"},
		{name: "s3", raw: "s3://bucket/a/b", want: Location{Kind: S3, Bucket: "bucket", Prefix: "a/b"},
			key: "a/b/openid/v1/jwks", url: "s3://bucket/a/b/openid/v1/jwks"},
		{name: "s3 root", raw: "s3://bucket", want: Location{Kind: S3, Bucket: "bucket"}, key: "openid/v1/jwks"},
		{name: "gcs", raw: "gs://bucket/p/", want: Location{Kind: GCS, Bucket: "bucket", Prefix: "p"},
			key: "p/openid/v1/jwks", url: "gs://bucket/p/openid/v1/jwks"},
		{name: "path", raw: "site/./x", want: Location{Kind: Dir, Path: "site/x"}},
		{name: "file URL", raw: "file:///srv/site", want: Location{Kind: Dir, Path: "/srv/site"}},
		{name: "empty", raw: "", wantErr: "no location given"},
		{name: "unknown scheme", raw: "ftp://host/x", wantErr: `unknown scheme "ftp"`},
		{name: "not a store", raw: "https://example.com/x", wantErr: "is no store ksa writes to"},
		{name: "account with dots", raw: "https://a.b.blob.core.windows.net/c", wantErr: "is no store ksa writes to"},
		{name: "azure over http", raw: "http://acct.blob.core.windows.net/c", wantErr: "is not Azure's https endpoint"},
		{name: "azure with port", raw: "https://acct.blob.core.windows.net:8443/c", wantErr: "is not Azure's https endpoint"},
		{name: "azure no container", raw: "https://acct.blob.core.windows.net/", wantErr: "names no container"},
		{name: "SAS token", raw: "https://acct.blob.core.windows.net/c?sig=x", wantErr: "has a query"},
		{name: "user info", raw: "s3://key:secret@bucket/p", wantErr: "has a query, fragment or user information"},
		{name: "fragment", raw: "gs://bucket/p#x", wantErr: "has a query"},
		{name: "no bucket", raw: "s3:///p", wantErr: "names no bucket"},
		{name: "empty segment", raw: "s3://b/a//c", wantErr: "empty, . or .. segment"},
		{name: "dot dot", raw: "gs://b/a/../c", wantErr: "empty, . or .. segment"},
		{name: "file with host", raw: "file://host/x", wantErr: "names a host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseLocation(tt.raw)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrLocation)
				assert.Contains(t, err.Error(), tt.wantErr)
				var pe *Error
				require.True(t, errors.As(err, &pe))
				assert.NotEmpty(t, pe.Fix)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want.Kind, got.Kind)
			assert.Equal(t, tt.want.Account, got.Account)
			assert.Equal(t, tt.want.Bucket, got.Bucket)
			assert.Equal(t, tt.want.Prefix, got.Prefix)
			assert.Equal(t, tt.want.Path, got.Path)
			assert.Equal(t, tt.raw, got.String())
			if tt.key != "" {
				assert.Equal(t, tt.key, got.Key("openid/v1/jwks"))
			}
			if tt.url != "" {
				assert.Equal(t, tt.url, got.URL("openid/v1/jwks"))
			}
		})
	}
}

// TestRefusedLocationHidesCredentials: a refused location is quoted
// without its user information, query or fragment, where credentials and
// SAS tokens go.
func TestRefusedLocationHidesCredentials(t *testing.T) {
	for _, tt := range []struct {
		name, raw, shown string
	}{
		{name: "user and password", raw: "https://user:pw-Zq9@acct.blob.core.windows.net/c/x", shown: `"https://REDACTED@acct.blob.core.windows.net/c/x"`},
		{name: "SAS token", raw: "https://acct.blob.core.windows.net/c/x?sv=2024-01-01&sig=Zq9sig", shown: `"https://acct.blob.core.windows.net/c/x?REDACTED"`},
		{name: "s3 keys", raw: "s3://AKIA:Zq9secret@bucket/p", shown: `"s3://REDACTED@bucket/p"`},
		{name: "fragment", raw: "gs://bucket/p#Zq9", shown: `"gs://bucket/p?REDACTED"`},
		{name: "unknown scheme", raw: "ftp://u:Zq9@host/x?k=Zq9", shown: `"ftp://REDACTED@host/x?REDACTED"`},
		{name: "not a store", raw: "https://u:Zq9@example.com/x", shown: `"https://REDACTED@example.com/x"`},
		{name: "does not parse", raw: "https://u:Zq9@acct.blob.core.windows.net/c/%zz", shown: `"https://REDACTED@acct.blob.core.windows.net/c/%zz"`},
		{name: "http with password", raw: "http://u:Zq9@acct.blob.core.windows.net/c", shown: `"http://REDACTED@acct.blob.core.windows.net/c"`},
		{name: "at sign in the path", raw: "s3://u:Zq9@b/a@b?x=Zq9", shown: `"s3://REDACTED@b/a@b?REDACTED"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseLocation(tt.raw)
			require.ErrorIs(t, err, ErrLocation)
			var pe *Error
			require.ErrorAs(t, err, &pe)
			assert.NotContains(t, pe.What+pe.Fix, "Zq9")
			assert.Contains(t, pe.What, tt.shown)
		})
	}
	assert.Equal(t, "site?x", RedactURL("site?x"), "a path is not a URL")
}

// FuzzParseLocation: any input parses or is refused as ErrLocation,
// never panics; a parsed bucket location has a clean prefix whose keys
// stay inside it.
func FuzzParseLocation(f *testing.F) {
	for _, s := range []string{
		"https://oidcissuer.blob.core.windows.net/cluster-1/", "s3://bucket/a/b", "gs://b/p", "site", "file:///srv",
		"s3://b/a//c", "https://acct.blob.core.windows.net/c?sig=x", "gs://b/%2e%2e/x", "s3://b/a/..", "://", "s3://",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		loc, err := ParseLocation(raw)
		if err != nil {
			if !errors.Is(err, ErrLocation) {
				t.Fatalf("ParseLocation(%q): %v is not ErrLocation", raw, err)
			}
			return
		}
		if loc.Kind == Dir {
			return
		}
		if loc.Bucket == "" {
			t.Fatalf("ParseLocation(%q): no bucket", raw)
		}
		for _, seg := range strings.Split(loc.Prefix, "/") {
			if loc.Prefix != "" && (seg == "" || seg == "." || seg == "..") {
				t.Fatalf("ParseLocation(%q): prefix %q", raw, loc.Prefix)
			}
		}
		if k := loc.Key("x"); loc.Prefix != "" && !strings.HasPrefix(k, loc.Prefix+"/") {
			t.Fatalf("ParseLocation(%q): key %q outside prefix %q", raw, k, loc.Prefix)
		}
	})
}

// FuzzHeaderKeyID: the kid of any token's header, never a panic; a header
// that does not decode has none.
func FuzzHeaderKeyID(f *testing.F) {
	for _, seed := range []string{"eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.e30.sig", "e30", "", ".", "eyJraWQiOjF9.x", "!!!.x"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, token string) {
		kid := headerKeyID(token)
		if strings.Contains(token, "!") && strings.Index(token, "!") < strings.IndexByte(token+".", '.') {
			assert.Empty(t, kid, "a header that does not decode has no kid")
		}
	})
}
