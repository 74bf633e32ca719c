package jwxkeys_test

import (
	"testing"

	"github.com/lestrrat-go/jwx/v3/jwk"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/jwxkeys"
)

// FuzzFromSet: whatever set jwx parses, FromSet never panics and never
// returns a key set holding private or symmetric material.
func FuzzFromSet(f *testing.F) {
	f.Add(`{"keys":[{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRjGLenQbb3c4RBqtjkSVKFDp7Qg_sIWkq7fLQY"}]}`)
	f.Add(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`)
	f.Add(`{"keys":[{"kty":"EC","crv":"P-256","d":"jpsQnnGQmL-YBIffH1136cLyq7Z5BZR5P6U4CZ3pMCY","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRjGLenQbb3c4RBqtjkSVKFDp7Qg_sIWkq7fLQY"}]}`)
	f.Fuzz(func(t *testing.T, doc string) {
		set, err := jwk.Parse([]byte(doc))
		if err != nil {
			return
		}
		got, err := jwxkeys.FromSet(set, jwks.ParseOptions{})
		if err != nil {
			return
		}
		back, err := jwks.MarshalSet(got.Keys)
		if err != nil {
			t.Fatal(err)
		}
		if err := jwks.Audit(back); err != nil {
			t.Fatalf("FromSet returned keys that fail the audit: %v", err)
		}
	})
}
