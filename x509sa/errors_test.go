package x509sa_test

import (
	"crypto/rsa"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/x509sa"
)

// TestErrors holds every typed error to its sentinel, its message to the
// data it carries, and Unwrap to its cause.
func TestErrors(t *testing.T) {
	cause := errors.New("cause")
	tests := []struct {
		err      error
		sentinel error
		contains []string
	}{
		{err: &x509sa.SubjectError{Attribute: "O", Value: "system:masters", Reason: "group is not a service-account group", Err: cause}, sentinel: x509sa.ErrInvalidSubject, contains: []string{"O", `"system:masters"`, "group is not", "cause"}},
		{err: &x509sa.SubjectError{Attribute: "CN", Reason: "missing"}, sentinel: x509sa.ErrInvalidSubject, contains: []string{"subject CN: missing"}},
		{err: &x509sa.ExtensionError{Extension: "system:pod-name", Reserved: true, Reason: "r"}, sentinel: x509sa.ErrReservedExtension, contains: []string{`"system:pod-name"`}},
		{err: &x509sa.ExtensionError{Extension: "k", Reason: "r"}, sentinel: x509sa.ErrInvalidExtension, contains: []string{`"k"`}},
		{err: &x509sa.LimitError{What: "SANs", Size: 65, Limit: 64}, sentinel: x509sa.ErrLimit, contains: []string{"65 SANs", "64"}},
		{err: &x509sa.HostError{Host: "a b", Reason: "r"}, sentinel: x509sa.ErrInvalidHost, contains: []string{`"a b"`}},
		{err: &x509sa.KeyError{Key: "RSA-1024", Err: jwks.CheckPublicKey(&rsa.PublicKey{N: big.NewInt(1025), E: 65537})}, sentinel: jwks.ErrUnsupportedKey, contains: []string{"RSA-1024", "2048-bit minimum"}},
		{err: &x509sa.UsageError{Value: "code signing", Reason: "r"}, sentinel: x509sa.ErrInvalidUsage, contains: []string{`"code signing"`}},
		{err: &x509sa.UsageError{Usage: x509sa.ServerAuth, Reason: "r"}, sentinel: x509sa.ErrInvalidUsage, contains: []string{"usage server: r"}},
		{err: &x509sa.SignerNameError{SignerName: "x", Reason: "r"}, sentinel: x509sa.ErrInvalidSignerName, contains: []string{`"x"`}},
		{err: &x509sa.MismatchError{Field: "uid", Want: "a", Got: "b"}, sentinel: x509sa.ErrRequesterMismatch, contains: []string{"uid", `"a"`, `"b"`}},
		{err: &x509sa.PolicyError{What: "host", Value: "h"}, sentinel: x509sa.ErrNotAllowed, contains: []string{`host "h"`}},
		{err: &x509sa.SPIFFEIDError{ID: "spiffe://x/", Reason: "r"}, sentinel: x509sa.ErrInvalidSPIFFEID, contains: []string{`"spiffe://x/"`}},
		{err: &x509sa.LifetimeError{Lifetime: time.Minute, Min: time.Hour, Max: 2 * time.Hour, Reason: "r"}, sentinel: x509sa.ErrLifetime, contains: []string{"1m0s", "[1h0m0s, 2h0m0s]"}},
		{err: &x509sa.CertificateError{Reason: "leaf has the CA flag"}, sentinel: x509sa.ErrInvalidCertificate, contains: []string{"CA flag"}},
		{err: &x509sa.CertificateError{Reason: "r", Err: cause}, sentinel: x509sa.ErrInvalidCertificate, contains: []string{"r: cause"}},
		{err: &x509sa.ConfigError{Field: "Roots", Reason: "required"}, sentinel: x509sa.ErrInvalidConfig, contains: []string{"Roots", "required"}},
	}
	for _, tt := range tests {
		t.Run(tt.err.Error(), func(t *testing.T) {
			assert.ErrorIs(t, tt.err, tt.sentinel)
			assert.NotErrorIs(t, tt.err, x509sa.ErrUntrusted)
			for _, s := range tt.contains {
				assert.Contains(t, tt.err.Error(), s)
			}
		})
	}
	assert.ErrorIs(t, &x509sa.SubjectError{Err: cause}, cause)
	assert.ErrorIs(t, &x509sa.CertificateError{Err: cause}, cause)
	assert.ErrorIs(t, &x509sa.ExtensionError{Reserved: true}, x509sa.ErrInvalidExtension)
	assert.NotErrorIs(t, &x509sa.ExtensionError{}, x509sa.ErrReservedExtension)
}
