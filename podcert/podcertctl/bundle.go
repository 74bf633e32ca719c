package podcertctl

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Labels set on the published ClusterTrustBundle, after the SPIFFE
// canarying style: a workload selecting bundles by label
// (clusterTrustBundle's labelSelector) picks the live bundle of its trust
// domain.
const (
	// CanaryingLabel is always "live": the bundle holds every CA that
	// signs, or is about to, or signed a certificate still valid.
	CanaryingLabel = "ksa-go.github.io/canarying"
	// TrustDomainLabel is the signer's SPIFFE trust domain; left out when
	// the trust domain is longer than a label value may be (63
	// characters).
	TrustDomainLabel = "ksa-go.github.io/trust-domain"
)

// labels are the labels of the published bundle.
func (c *Controller) labels() map[string]string {
	l := map[string]string{CanaryingLabel: "live"}
	if td := c.cfg.Signer.TrustDomain(); len(validation.IsValidLabelValue(td)) == 0 {
		l[TrustDomainLabel] = td
	}
	return l
}

// joinPEM concatenates PEM certificate lists, dropping repeated
// certificates.
func joinPEM(lists ...[]byte) []byte {
	var out []byte
	var seen [][]byte
	for _, l := range lists {
		for rest := l; ; {
			var b *pem.Block
			b, rest = pem.Decode(rest)
			if b == nil {
				break
			}
			dup := false
			for _, s := range seen {
				dup = dup || bytes.Equal(s, b.Bytes)
			}
			if !dup {
				seen = append(seen, b.Bytes)
				out = append(out, pem.EncodeToMemory(b)...)
			}
		}
	}
	return out
}

// holds reports whether the PEM bundle have holds every certificate of
// want.
func holds(have string, want []byte) bool {
	return bytes.Equal(joinPEM([]byte(have), want), joinPEM([]byte(have)))
}

// othersKept returns the CA certificates of the published bundle have
// that mine lacks and that are valid at now, as PEM, with their
// fingerprints; but not those whose fingerprint retired lists (a
// rotation's former CA, past its retirement).
func othersKept(have string, mine []byte, now time.Time, retired []string) ([]byte, []string) {
	var out []byte
	var fps []string
	for rest := []byte(have); ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return out, fps
		}
		one := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.Bytes})
		if b.Type != "CERTIFICATE" || holds(string(mine), one) {
			continue
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil || !cert.IsCA || now.Before(cert.NotBefore) || now.After(cert.NotAfter) || slices.Contains(retired, fingerprint(cert)) {
			continue
		}
		out = append(out, one...)
		fps = append(fps, fingerprint(cert))
	}
}
