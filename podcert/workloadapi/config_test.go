package workloadapi_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/podcert/workloadapi"
)

func TestNewServerRefuses(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(t.TempDir(), link))
	cred := podcert.SourceConfig{BundlePath: filepath.Join(dir, "credentialbundle.pem")}
	bundle := workloadapi.TrustBundle{TrustDomain: "cluster.local", Path: filepath.Join(dir, "ca.pem")}
	many := make([]workloadapi.TrustBundle, workloadapi.MaxTrustDomains+1)
	for i := range many {
		many[i] = workloadapi.TrustBundle{TrustDomain: "td" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Path: bundle.Path}
	}
	for _, tc := range []struct {
		name  string
		cfg   workloadapi.Config
		field string
	}{
		{name: "any certificate", cfg: workloadapi.Config{Credential: podcert.SourceConfig{BundlePath: cred.BundlePath, AnyCertificate: true}, TrustBundles: []workloadapi.TrustBundle{bundle}}, field: "Credential"},
		{name: "no credential", cfg: workloadapi.Config{TrustBundles: []workloadapi.TrustBundle{bundle}}, field: "SourceConfig.BundlePath"},
		{name: "no trust bundle", cfg: workloadapi.Config{Credential: cred}, field: "TrustBundles"},
		{name: "too many trust domains", cfg: workloadapi.Config{Credential: cred, TrustBundles: many}, field: "TrustBundles"},
		{name: "bad trust domain", cfg: workloadapi.Config{Credential: cred, TrustBundles: []workloadapi.TrustBundle{{TrustDomain: "Cluster.Local", Path: bundle.Path}}}, field: "TrustBundles[0].TrustDomain"},
		{name: "trust domain twice", cfg: workloadapi.Config{Credential: cred, TrustBundles: []workloadapi.TrustBundle{bundle, bundle}}, field: "TrustBundles[1].TrustDomain"},
		{name: "trust domain that cannot name a file", cfg: workloadapi.Config{Credential: cred, TrustBundles: []workloadapi.TrustBundle{{TrustDomain: ".hidden", Path: bundle.Path}}}, field: "TrustBundles[0].TrustDomain"},
		{name: "no path", cfg: workloadapi.Config{Credential: cred, TrustBundles: []workloadapi.TrustBundle{{TrustDomain: "cluster.local"}}}, field: "TrustBundles[0].Path"},
		{name: "folder is a file", cfg: workloadapi.Config{Credential: cred, TrustBundles: []workloadapi.TrustBundle{bundle}, CredentialFolder: file}, field: "CredentialFolder"},
		{name: "folder's parent missing", cfg: workloadapi.Config{Credential: cred, TrustBundles: []workloadapi.TrustBundle{bundle}, CredentialFolder: filepath.Join(dir, "missing", "creds")}, field: "CredentialFolder"},
		{name: "folder's parent a file", cfg: workloadapi.Config{Credential: cred, TrustBundles: []workloadapi.TrustBundle{bundle}, CredentialFolder: filepath.Join(file, "creds")}, field: "CredentialFolder"},
		{name: "folder is a link", cfg: workloadapi.Config{Credential: cred, TrustBundles: []workloadapi.TrustBundle{bundle}, CredentialFolder: link}, field: "CredentialFolder"},
		{name: "file mode", cfg: workloadapi.Config{Credential: cred, TrustBundles: []workloadapi.TrustBundle{bundle}, CredentialFileMode: os.ModeSetuid | 0o600}, field: "CredentialFileMode"},
		{name: "negative max clients", cfg: workloadapi.Config{Credential: cred, TrustBundles: []workloadapi.TrustBundle{bundle}, MaxClients: -1}, field: "MaxClients"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := workloadapi.NewServer(tc.cfg)
			require.ErrorIs(t, err, ksa.ErrInvalidConfig)
			var ce *ksa.ConfigError
			require.ErrorAs(t, err, &ce)
			assert.Contains(t, ce.Field, tc.field)
		})
	}
	t.Run("at the trust domain limit", func(t *testing.T) {
		_, err := workloadapi.NewServer(workloadapi.Config{Credential: cred, TrustBundles: many[:workloadapi.MaxTrustDomains]})
		require.NoError(t, err, "files not there yet are no configuration error")
	})
}

func TestSocketPath(t *testing.T) {
	for _, tc := range []struct {
		addr, want string
		ok         bool
	}{
		{addr: "unix:///run/spiffe/api.sock", want: "/run/spiffe/api.sock", ok: true},
		{addr: "/run/spiffe/api.sock", want: "/run/spiffe/api.sock", ok: true},
		{addr: "api.sock", want: "api.sock", ok: true},
		{addr: ""},
		{addr: "tcp://127.0.0.1:8081"},
		{addr: "unix://run/api.sock"},
		{addr: "unix:api.sock"},
		{addr: "unix://user@/api.sock"},
		{addr: "unix://"},
		{addr: "unix:///api.sock?x=1"},
		{addr: "unix:///api.sock#x"},
		{addr: "unix:///%zz"},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			got, err := workloadapi.SocketPath(tc.addr)
			if !tc.ok {
				require.ErrorIs(t, err, ksa.ErrInvalidConfig)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestListen(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "api.sock")
	l, err := workloadapi.Listen(workloadapi.ListenConfig{Address: "unix://" + sock})
	require.NoError(t, err)
	st, err := os.Stat(sock)
	require.NoError(t, err)
	assert.Equal(t, workloadapi.DefaultSocketMode, st.Mode().Perm())

	_, err = workloadapi.Listen(workloadapi.ListenConfig{Address: sock})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	require.ErrorIs(t, err, syscall.EADDRINUSE)
	require.NoError(t, l.Close())

	l, err = workloadapi.Listen(workloadapi.ListenConfig{Address: sock, Mode: 0o660})
	require.NoError(t, err)
	st, err = os.Stat(sock)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o660), st.Mode().Perm())
	require.NoError(t, l.Close())

	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = workloadapi.Listen(workloadapi.ListenConfig{Address: file})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	_, err = workloadapi.Listen(workloadapi.ListenConfig{Address: sock, Mode: os.ModeSticky | 0o600})
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	_, err = workloadapi.Listen(workloadapi.ListenConfig{Address: filepath.Join(dir, "missing", "api.sock")})
	require.Error(t, err)
}

// FuzzSocketPath: any address gives a path or a configuration error,
// never a panic; a unix URI's path is absolute.
func FuzzSocketPath(f *testing.F) {
	for _, s := range []string{"unix:///run/api.sock", "/run/api.sock", "tcp://1.2.3.4:5", "unix:x", "unix://h/p", "unix:///a?b#c", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		got, err := workloadapi.SocketPath(addr)
		if err != nil {
			require.ErrorIs(t, err, ksa.ErrInvalidConfig)
			return
		}
		require.NotEmpty(t, got)
		if len(addr) > 5 && addr[:5] == "unix:" {
			require.True(t, filepath.IsAbs(got), got)
		}
	})
}
