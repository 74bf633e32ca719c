//go:build linux

package admissionauth_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/ksa-go/ksa/admissionauth"
	"github.com/ksa-go/ksa/internal/bench"
	"github.com/ksa-go/ksa/tokens"
)

// BenchmarkVerifyVsBare alternates one admission request's verification
// with the bare signature check of the same token in blocks on one locked
// thread, counting that thread's CPU time so that other load does not skew
// the ratio; ratio = bare/verify (1: the verification costs nothing beyond
// the signature; above 1: less, the cache skipping the signature). "verify"
// is Verify given the review a webhook decodes anyway (credspec's handler);
// "request" adds ParseReview of the 2.5 KB review, as Handler does.
func BenchmarkVerifyVsBare(b *testing.B) {
	for _, bk := range benchKeys {
		key := bk.key()
		raw := webhookToken(b, minter(b, key), tokens.BoundValidatingWebhookConfiguration, "gmsa", audience, "*")
		bare := bareCheck(key.Public(), raw)
		rv, err := admissionauth.ParseReview(gmsaReview)
		if err != nil {
			b.Fatal(err)
		}
		for _, tc := range []struct {
			name          string
			cache, parsed bool
		}{{"verify", false, true}, {"verify-cached", true, true}, {"request", false, false}, {"request-cached", true, false}} {
			v := verifier(b, validator(b, key, now, tc.cache), admissionauth.Require)
			auth := "Bearer " + raw
			b.Run(bk.name+"/"+tc.name, func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				const block = 100
				var verifyCPU, bareCPU time.Duration
				n := 0
				for n < b.N {
					start := bench.ThreadCPU()
					for range block {
						if !tc.parsed {
							verifyAdmission(b, v, auth)
						} else if _, err := v.Verify(b.Context(), auth, rv); err != nil {
							b.Fatal(err)
						}
					}
					mid := bench.ThreadCPU()
					for range block {
						if !bare() {
							b.Fatal("bare verify failed")
						}
					}
					verifyCPU += mid - start
					bareCPU += bench.ThreadCPU() - mid
					n += block
				}
				b.ReportMetric(float64(verifyCPU.Nanoseconds())/float64(n), "verify-cpu-ns/op")
				b.ReportMetric(float64(bareCPU.Nanoseconds())/float64(n), "bare-cpu-ns/op")
				b.ReportMetric(float64(bareCPU)/float64(verifyCPU), "ratio")
			})
		}
	}
}
