package oidc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ksa-go/ksa/oidc"
)

// FuzzParseMetadata: any input either parses into metadata or is refused
// with an error matching ErrMalformedDocument; nothing panics, and a document that parses parses
// the same way twice.
func FuzzParseMetadata(f *testing.F) {
	for _, seed := range []string{
		`{"issuer":"https://issuer.example.com","jwks_uri":"https://issuer.example.com/openid/v1/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["ES256","RS256"]}`,
		`{"issuer":"https://eastus.oic.prod-aks.azure.com/t/c/","jwks_uri":"https://eastus.oic.prod-aks.azure.com/t/c/openid/v1/jwks"}`,
		`{"issuer":"a","issuer":"b"}`,
		`{"Issuer":"a","issuer":"b"}`,
		`{"issuer":1}`,
		`{"jwks_uri":["x"]}`,
		`{"response_types_supported":"id_token"}`,
		`{"x":{"y":[1,2,{"z":null}]},"issuer":"a"}`,
		`{"issuer":"\ud800"}`,
		"{\"issuer\":\"\xff\"}",
		`[]`,
		``,
		`{"issuer":"a"} trailing`,
		strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat(`}`, 100),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		md, err := oidc.ParseMetadata(doc)
		if err != nil {
			if !errors.Is(err, oidc.ErrMalformedDocument) || !strings.HasPrefix(err.Error(), "oidc: discovery document ") {
				t.Fatalf("error %T: %v", err, err)
			}
			if md != nil {
				t.Fatal("metadata returned with an error")
			}
			return
		}
		again, err := oidc.ParseMetadata(doc)
		if err != nil || again.Issuer != md.Issuer || again.JWKSURI != md.JWKSURI || len(again.SigningAlgs) != len(md.SigningAlgs) {
			t.Fatalf("second parse differs: %v", err)
		}
	})
}

// TestParseMetadataSizeLimit: a document of exactly MaxDiscoveryBytes
// parses; one byte more is refused before it is read.
func TestParseMetadataSizeLimit(t *testing.T) {
	body := `{"issuer":"https://a"}`
	doc := body + strings.Repeat(" ", oidc.MaxDiscoveryBytes-len(body))
	if _, err := oidc.ParseMetadata([]byte(doc)); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	if _, err := oidc.ParseMetadata([]byte(doc + " ")); !errors.Is(err, oidc.ErrMalformedDocument) {
		t.Fatalf("over the limit: %v", err)
	}
}
