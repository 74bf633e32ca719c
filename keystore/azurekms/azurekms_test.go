package azurekms

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/keystore/internal/storetest"
	"github.com/ksa-go/ksa/keystore/keystoretest"
)

// TestConformance runs the key stores' shared checks that need no key:
// Key Vault is not reachable here, and go.step.sm's client cannot be
// pointed elsewhere.
func TestConformance(t *testing.T) {
	store, err := NewStore(Config{})
	require.NoError(t, err)
	keystoretest.Run(t, keystoretest.Config{
		Opener: store,
		NewKey: func(keystore.KeySpec) string { return "azurekms:name=sa-new;vault=my-vault" },
		Specs:  []keystore.KeySpec{},
	})
}

func TestNewStore(t *testing.T) {
	_, err := NewStore(Config{MaxCalls: -1})
	var ce *ksa.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "azurekms.Config.MaxCalls", ce.Field)
}

// TestWiring: the URIs go.step.sm gets for a Key Vault key carry the key
// and the identity's settings, never a secret, and its client is made
// without a network call, once per cloud and identity.
func TestWiring(t *testing.T) {
	ref, err := keystore.ParseRef("azurekms:name=sa;vault=my-vault;environment=usgov;tenant-id=t-1;client-id=c-1?version=0123abcd&hsm=true")
	require.NoError(t, err)
	assert.Equal(t, "azurekms:environment=usgov;client-id=c-1;tenant-id=t-1", clientURI(ref))
	assert.Equal(t, "azurekms:name=sa;vault=my-vault?version=0123abcd", keyURI(ref))
	bare, err := keystore.ParseRef("azurekms:name=sa;vault=my-vault")
	require.NoError(t, err)
	assert.Empty(t, clientURI(bare))

	s := &Store{}
	defer s.Close()
	km, err := s.cloud().Client(t.Context(), ref, &s.clients)
	require.NoError(t, err)
	require.NoError(t, km.ValidateName(keyURI(ref)))
	again, err := s.cloud().Client(t.Context(), ref, &s.clients)
	require.NoError(t, err)
	assert.Same(t, km, again, "one client per cloud and identity")
	_, err = s.Create(t.Context(), "azurekms:name=sa;vault=my-vault", keystore.KeySpec{RSA: true, Bits: 8192})
	storetest.StoreErr(t, err, keystore.ErrKeyStore, "Azure Key Vault does not make RSA 8192 keys")
}

func TestClassify(t *testing.T) {
	ref, err := keystore.ParseRef("azurekms:name=sa;vault=my-vault")
	require.NoError(t, err)
	tests := []struct {
		name string
		err  error
		want string
		fix  string
	}{
		{name: "missing key", err: &azcore.ResponseError{StatusCode: http.StatusNotFound, ErrorCode: "KeyNotFound"},
			want: "cannot be opened: vault my-vault has no key sa", fix: "az keyvault key list"},
		{name: "forbidden", err: &azcore.ResponseError{StatusCode: http.StatusForbidden, ErrorCode: "Forbidden"},
			want: "cannot be opened: Forbidden", fix: "Key Vault Crypto User"},
		{name: "deadline", err: context.DeadlineExceeded, want: "Azure Key Vault did not answer", fix: "my-vault.vault.azure.net"},
		{name: "no credential", err: errors.New("DefaultAzureCredential: failed to acquire a token"), want: "cannot be opened", fix: "AZURE_CLIENT_ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := classify(ref, "cannot be opened", tt.err)
			storetest.StoreErr(t, e, keystore.ErrKeyStore, tt.want)
			assert.Contains(t, e.Fix, tt.fix)
			require.ErrorIs(t, e, tt.err)
		})
	}
}
