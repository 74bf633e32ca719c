package pemblock_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/ksa-go/ksa/internal/pemblock"
)

// TestNext: the blocks pem.Decode returns, and the damaged ones it would
// pass over without a word.
func TestNext(t *testing.T) {
	const good = "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"
	tests := []struct {
		name        string
		data        string
		wantType    string
		wantDamaged string
	}{
		{name: "a block", data: good, wantType: "PUBLIC KEY"},
		{name: "text around it", data: "text\n" + good + "more\n", wantType: "PUBLIC KEY"},
		{name: "BEGIN inside a line is text", data: "see -----BEGIN X----- here\n" + good, wantType: "PUBLIC KEY"},
		{name: "broken base64 before a block", data: "-----BEGIN EC PRIVATE KEY-----\n!!\n-----END EC PRIVATE KEY-----\n" + good,
			wantType: "PUBLIC KEY", wantDamaged: "EC PRIVATE KEY"},
		{name: "no END line", data: "-----BEGIN PRIVATE KEY-----\nAAAA\n", wantDamaged: "PRIVATE KEY"},
		{name: "a BEGIN line naming nothing", data: "-----BEGIN \nAAAA\n", wantDamaged: "?"},
		{name: "nothing", data: "not PEM\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			block, _, damaged := pemblock.Next([]byte(tt.data))
			assert.Equal(t, tt.wantDamaged, damaged)
			if tt.wantType == "" {
				assert.Nil(t, block)
				return
			}
			assert.Equal(t, tt.wantType, block.Type)
		})
	}
}

func TestKindOf(t *testing.T) {
	for typ, want := range map[string]pemblock.Kind{
		"PUBLIC KEY": pemblock.Public, "RSA PUBLIC KEY": pemblock.RSAPublic, "CERTIFICATE": pemblock.Certificate,
		"RSA PRIVATE KEY": pemblock.RSAPrivate, "EC PRIVATE KEY": pemblock.ECPrivate, "PRIVATE KEY": pemblock.PKCS8,
		"EC PARAMETERS": pemblock.Other, "ENCRYPTED PRIVATE KEY": pemblock.Other,
	} {
		assert.Equal(t, want, pemblock.KindOf(typ), typ)
		assert.Equal(t, want == pemblock.RSAPrivate || want == pemblock.ECPrivate || want == pemblock.PKCS8, want.Private(), typ)
	}
}
