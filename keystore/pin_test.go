package keystore_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/keystore"
)

func TestReadPIN(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(data), 0o600))
		return p
	}
	pinFile := write("pin", "4321\n")
	t.Setenv("KSA_TEST_PIN", "8765\r\n")
	t.Setenv("KSA_TEST_EMPTY_PIN", " \n")
	tests := []struct {
		name, source string
		want         string
		// wantErr is a phrase of the error; wantIs what it matches besides ErrKeyStore.
		wantErr string
		wantIs  error
	}{
		{name: "file, newline dropped", source: pinFile, want: "4321"},
		{name: "file URI", source: "file://" + pinFile, want: "4321"},
		{name: "file URI of localhost", source: "file://localhost" + pinFile, want: "4321"},
		{name: "file: and a path", source: "file:" + pinFile, want: "4321"},
		{name: "environment", source: "env:KSA_TEST_PIN", want: "8765"},
		{name: "exactly MaxPINBytes", source: write("long", strings.Repeat("7", keystore.MaxPINBytes)), want: strings.Repeat("7", keystore.MaxPINBytes)},
		{name: "MaxPINBytes+1", source: write("toolong", strings.Repeat("7", keystore.MaxPINBytes+1)), wantErr: "over the 1024-byte limit"},
		{name: "missing file", source: filepath.Join(dir, "missing"), wantErr: "cannot be opened", wantIs: fs.ErrNotExist},
		{name: "empty file", source: write("empty", "\n\n"), wantErr: "is empty"},
		{name: "directory", source: dir, wantErr: "cannot be read"},
		{name: "unset variable", source: "env:KSA_TEST_UNSET_PIN", wantErr: "KSA_TEST_UNSET_PIN is not set"},
		{name: "empty variable", source: "env:KSA_TEST_EMPTY_PIN", wantErr: "KSA_TEST_EMPTY_PIN is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := keystore.ParseRef("pkcs11:token=ksa;id=01?pin-source=" + tt.source)
			require.NoError(t, err)
			pin, err := r.ReadPIN()
			if tt.wantErr == "" {
				require.NoError(t, err)
				assert.Equal(t, tt.want, pin)
				return
			}
			require.ErrorIs(t, err, keystore.ErrKeyStore)
			if tt.wantIs != nil {
				require.ErrorIs(t, err, tt.wantIs)
			}
			assert.Contains(t, err.Error(), tt.wantErr)
			assert.Empty(t, pin)
			for _, secret := range []string{"4321", "8765", "7777"} {
				assert.NotContains(t, err.Error(), secret)
			}
		})
	}
	t.Run("no pkcs11 reference", func(t *testing.T) {
		r, err := keystore.ParseRef("sa.key")
		require.NoError(t, err)
		_, err = r.ReadPIN()
		require.ErrorIs(t, err, keystore.ErrKeyStore)
	})
}
