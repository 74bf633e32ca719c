package podcert_test

import (
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/podcert"
)

func certPEM(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestParseTrustBundle(t *testing.T) {
	a, b := newCA(t, false), newCA(t, true)
	for _, tc := range []struct {
		name    string
		data    []byte
		want    int
		wantErr error
	}{
		{name: "one root", data: certPEM(a.root.Raw), want: 1},
		{name: "two, text between them ignored", data: append(append(certPEM(a.root.Raw), "# next\n"...), certPEM(b.cert.Raw)...), want: 2},
		{name: "empty", data: nil, wantErr: podcert.ErrInvalidTrustBundle},
		{name: "white space", data: []byte(" \n"), wantErr: podcert.ErrInvalidTrustBundle},
		{name: "trailing text", data: append(certPEM(a.root.Raw), "junk"...), wantErr: podcert.ErrInvalidTrustBundle},
		{name: "a key block", data: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1}}), wantErr: podcert.ErrInvalidTrustBundle},
		{name: "a damaged certificate", data: certPEM([]byte{0x30, 0x03, 1, 2, 3}), wantErr: podcert.ErrInvalidTrustBundle},
		{name: "too many certificates", data: []byte(strings.Repeat(string(certPEM(a.root.Raw)), podcert.MaxTrustBundleCertificates+1)), wantErr: podcert.ErrInvalidTrustBundle},
		{name: "too large", data: make([]byte, podcert.MaxTrustBundleSize+1), wantErr: podcert.ErrLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := podcert.ParseTrustBundle(tc.data)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Len(t, got.Certificates, tc.want)
			assert.True(t, got.Contains(a.root))
			assert.False(t, got.Contains(nil))
			assert.NotNil(t, got.CertPool())
		})
	}
	t.Run("at the certificate limit", func(t *testing.T) {
		got, err := podcert.ParseTrustBundle([]byte(strings.Repeat(string(certPEM(a.root.Raw)), podcert.MaxTrustBundleCertificates)))
		require.NoError(t, err)
		assert.Len(t, got.Certificates, podcert.MaxTrustBundleCertificates)
	})
}

// TestTrustFileFollowsTheProjection: a TrustFile serves the bundle the
// kubelet last wrote, keeps the last good one through a broken write
// (reported to OnReload) and refuses files over the limit.
func TestTrustFileFollowsTheProjection(t *testing.T) {
	one, two := newCA(t, false), newCA(t, true)
	m := &mount{t: t, dir: t.TempDir()}
	path := filepath.Join(m.dir, "ca.pem")
	_, err := podcert.NewTrustFile(podcert.TrustFileConfig{Path: path})
	require.ErrorIs(t, err, podcert.ErrInvalidTrustBundle, "nothing projected yet")
	_, err = podcert.NewTrustFile(podcert.TrustFileConfig{})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)

	m.write(map[string][]byte{"ca.pem": certPEM(one.root.Raw)})
	var reloads []error
	f, err := podcert.NewTrustFile(podcert.TrustFileConfig{Path: path, OnReload: func(err error) { reloads = append(reloads, err) }})
	require.NoError(t, err)
	first := f.Current()
	assert.Same(t, first, f.Current(), "unchanged: the same bundle")
	assert.Empty(t, reloads)

	m.write(map[string][]byte{"ca.pem": append(certPEM(one.root.Raw), certPEM(two.cert.Raw)...)})
	got := f.Current()
	assert.Len(t, got.Certificates, 2)
	assert.True(t, got.Contains(two.cert))
	assert.Equal(t, []error{nil}, reloads)

	m.write(map[string][]byte{"ca.pem": []byte("-----BEGIN CERTIFICATE-----\ntorn")})
	assert.Same(t, got, f.Current(), "a broken write keeps the last good bundle")
	require.Len(t, reloads, 2)
	assert.ErrorIs(t, reloads[1], podcert.ErrInvalidTrustBundle)

	m.write(map[string][]byte{"ca.pem": make([]byte, podcert.MaxTrustBundleSize+1)})
	assert.Same(t, got, f.Current())
	require.Len(t, reloads, 3)
	assert.ErrorIs(t, reloads[2], podcert.ErrLimit)
	require.ErrorIs(t, f.Reload(), podcert.ErrInvalidTrustBundle)

	require.NoError(t, os.Remove(filepath.Join(m.dir, "ca.pem")))
	assert.Same(t, got, f.Current(), "a file gone keeps the last good bundle")
}
