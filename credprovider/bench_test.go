package credprovider_test

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/ksa-go/ksa/credprovider"
)

// BenchmarkDecodeRespond is a pass-through plugin's own work for one pull:
// the request decoded, the answer built (the token's expiry read) and
// encoded. The rest of a plugin's latency is the exec.
func BenchmarkDecodeRespond(b *testing.B) {
	iss := newIssuer(b, t0)
	tok := iss.mint(b, "puller", "web-1", testAudience, time.Hour)
	in := []byte(head + `"image":"registry.example/team/app:v1","serviceAccountToken":"` + tok + `","serviceAccountAnnotations":{"registry.example/role":"puller"}}`)
	now := func() time.Time { return t0 }
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		req, err := credprovider.DecodeRequest(bytes.NewReader(in))
		if err != nil {
			b.Fatal(err)
		}
		resp, err := credprovider.PassThrough(req, "k8s", credprovider.Cache{For: time.Hour}, now)
		if err != nil {
			b.Fatal(err)
		}
		if err := resp.Encode(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
