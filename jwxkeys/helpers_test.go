package jwxkeys_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/tokens"
)

var now = time.Unix(1700000000, 0)

type fixture struct {
	ec, attacker *ecdsa.PrivateKey
	rsa          *rsa.PrivateKey
	keys         []jwks.Key
	token        string
}

func newFixture(t testing.TB) fixture {
	t.Helper()
	var f fixture
	var err error
	f.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	f.attacker, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	f.rsa, err = rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	for _, pub := range []any{f.ec.Public(), f.rsa.Public()} {
		k, err := jwks.NewKey(pub)
		require.NoError(t, err)
		f.keys = append(f.keys, k)
	}
	minter, err := tokens.NewMinter(tokens.MinterConfig{Issuer: "https://issuer.example", Signer: f.ec, Now: func() time.Time { return now }})
	require.NoError(t, err)
	tok, err := minter.Mint(t.Context(), tokens.Request{ServiceAccount: ksa.ServiceAccount{Namespace: "prod", Name: "billing", UID: "u"}, Audiences: []string{"vault"}})
	require.NoError(t, err)
	f.token = tok.Raw
	return f
}
