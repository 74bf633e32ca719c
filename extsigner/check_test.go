package extsigner_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/extsigner"
)

func TestAllowedAlgorithm(t *testing.T) {
	for alg, want := range map[string]bool{"RS256": true, "ES256": true, "ES384": true, "ES512": true, "PS256": false, "RS384": false, "EdDSA": false, "none": false, "": false, "es256": false} {
		assert.Equal(t, want, extsigner.AllowedAlgorithm(alg), alg)
	}
}
