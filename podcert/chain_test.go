package podcert

import (
	"bytes"
	"encoding/pem"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestChainPEM: the chain is what pem.EncodeToMemory writes for the leaf,
// then the rest, for every length around a line's 48 bytes.
func TestChainPEM(t *testing.T) {
	rest := []byte("-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n")
	for _, n := range []int{0, 1, 2, 3, 47, 48, 49, 95, 96, 97, 1000} {
		der := bytes.Repeat([]byte{0xfb, 0x3e, 0x01}, n)[:n]
		leaf := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
		for _, tail := range [][]byte{nil, rest} {
			chain, leafLen := chainPEM(der, tail)
			assert.Equal(t, string(leaf)+string(tail), chain, "%d bytes", n)
			assert.Equal(t, len(leaf), leafLen, "%d bytes", n)
		}
	}
}
