//go:build linux

package tokens_test

import (
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"math/big"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ksa-go/ksa/internal/bench"
)

// BenchmarkValidateVsBare measures validation with a static key against
// the bare signature check of the same token (hash and the fastest
// standard-library verification: PKCS #1 v1.5, or ECDSA over a DER
// signature prepared in advance), alternating the two in blocks on one
// locked thread and counting that thread's CPU time, so that other load on
// the machine does not skew the ratio. It reports cpu-ns/op of each and
// ratio = bare/ksa (1 means validation costs nothing beyond the signature).
func BenchmarkValidateVsBare(b *testing.B) {
	for _, bk := range benchKeys {
		key := bk.key()
		tok, err := mustMinter(b, key).Mint(b.Context(), benchRequest())
		if err != nil {
			b.Fatal(err)
		}
		v := mustValidator(b, mustSource(b, key.Public()))
		i := strings.LastIndexByte(tok.Raw, '.')
		input := tok.Raw[:i]
		sig, _ := base64.RawURLEncoding.DecodeString(tok.Raw[i+1:])
		bare := bareVerifier(key.Public(), sig)
		b.Run(bk.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			ctx := b.Context()
			const block = 100
			var ksaCPU, bareCPU time.Duration
			n := 0
			for n < b.N {
				start := bench.ThreadCPU()
				for range block {
					if _, err := v.Validate(ctx, tok.Raw); err != nil {
						b.Fatal(err)
					}
				}
				mid := bench.ThreadCPU()
				for range block {
					if !bare(input) {
						b.Fatal("bare verify failed")
					}
				}
				ksaCPU += mid - start
				bareCPU += bench.ThreadCPU() - mid
				n += block
			}
			b.ReportMetric(float64(ksaCPU.Nanoseconds())/float64(n), "ksa-cpu-ns/op")
			b.ReportMetric(float64(bareCPU.Nanoseconds())/float64(n), "bare-cpu-ns/op")
			b.ReportMetric(float64(bareCPU)/float64(ksaCPU), "ratio")
		})
	}
}

// bareVerifier returns the fastest standard-library check of sig over an
// input: hash, then rsa.VerifyPKCS1v15, or ecdsa.VerifyASN1 with the
// signature converted to DER once, outside the measurement.
func bareVerifier(pub any, sig []byte) func(input string) bool {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return func(input string) bool {
			h := sha256.Sum256([]byte(input))
			return rsa.VerifyPKCS1v15(k, 5, h[:], sig) == nil // crypto.SHA256
		}
	case *ecdsa.PublicKey:
		der, _ := asn1.Marshal(struct{ R, S *big.Int }{new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])})
		return func(input string) bool {
			h := sha256.Sum256([]byte(input))
			return ecdsa.VerifyASN1(k, h[:], der)
		}
	}
	return func(string) bool { return false }
}
