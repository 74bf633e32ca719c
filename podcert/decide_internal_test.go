package podcert

import (
	"bytes"
	"encoding/pem"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestChainPEM: the chain is what pem.EncodeToMemory writes for the leaf,
// then the rest, for lengths around a line's 48 bytes.
func TestChainPEM(t *testing.T) {
	rest := []byte("-----BEGIN CERTIFICATE-----\nAA==\n-----END CERTIFICATE-----\n")
	tests := []struct {
		name string
		n    int
	}{
		{name: "empty", n: 0},
		{name: "one byte", n: 1},
		{name: "two bytes", n: 2},
		{name: "three bytes", n: 3},
		{name: "one short of a line", n: 47},
		{name: "one line", n: 48},
		{name: "one line and a byte", n: 49},
		{name: "two lines less one", n: 95},
		{name: "two lines", n: 96},
		{name: "two lines and a byte", n: 97},
		{name: "a certificate's size", n: 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			der := bytes.Repeat([]byte{0xfb, 0x3e, 0x01}, tt.n)[:tt.n]
			leaf := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
			for _, tail := range [][]byte{nil, rest} {
				chain, leafLen := chainPEM(der, tail)
				assert.Equal(t, string(leaf)+string(tail), chain)
				assert.Equal(t, len(leaf), leafLen)
			}
		})
	}
}
