package podcert_test

import (
	"crypto"
	"crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/podcert"
	"github.com/ksa-go/ksa/x509sa"
)

// mount writes files the way the kubelet's atomic writer does: into a new
// directory, then a symlink swap.
type mount struct {
	t   testing.TB
	dir string
	n   int
}

func (m *mount) write(files map[string][]byte) {
	m.t.Helper()
	m.n++
	ts := filepath.Join(m.dir, "..data-"+string(rune('a'+m.n)))
	require.NoError(m.t, os.Mkdir(ts, 0o700))
	for name, data := range files {
		require.NoError(m.t, os.WriteFile(filepath.Join(ts, name), data, 0o600))
	}
	tmp := filepath.Join(m.dir, "..data_tmp")
	require.NoError(m.t, os.Symlink(filepath.Base(ts), tmp))
	require.NoError(m.t, os.Rename(tmp, filepath.Join(m.dir, "..data")))
	for name := range files {
		link := filepath.Join(m.dir, name)
		if _, err := os.Lstat(link); errors.Is(err, os.ErrNotExist) {
			require.NoError(m.t, os.Symlink(filepath.Join("..data", name), link))
		}
	}
}

func TestSourceReloads(t *testing.T) {
	ca := newCA(t, false)
	s := newSigner(t, ca, nil)
	now := t0
	clock := func() time.Time { return now }
	for _, split := range []bool{false, true} {
		t.Run(map[bool]string{false: "bundle", true: "key and chain"}[split], func(t *testing.T) {
			m := &mount{t: t, dir: t.TempDir()}
			put := func(key crypto.Signer, pod string) {
				k, c := issue(t, s, key, func(p *podcert.Request) { p.PodName = pod })
				if split {
					m.write(map[string][]byte{"key.pem": k, "chain.pem": c})
				} else {
					m.write(map[string][]byte{"credentialbundle.pem": append(k, c...)})
				}
			}
			cfg := podcert.SourceConfig{BundlePath: filepath.Join(m.dir, "credentialbundle.pem"), Now: clock}
			if split {
				cfg = podcert.SourceConfig{KeyPath: filepath.Join(m.dir, "key.pem"), ChainPath: filepath.Join(m.dir, "chain.pem"), Now: clock}
			}
			_, err := podcert.NewSource(cfg)
			require.ErrorIs(t, err, podcert.ErrInvalidBundle, "nothing mounted yet")

			put(testkeys.Generated("p256"), "pod-a")
			src, err := podcert.NewSource(cfg)
			require.NoError(t, err)
			c, err := src.GetCertificate(nil)
			require.NoError(t, err)
			assert.Equal(t, "pod-a", podOf(t, c))

			// The kubelet refreshes: the next use serves the new one.
			put(testkeys.Generated("p384"), "pod-b")
			c, err = src.GetClientCertificate(nil)
			require.NoError(t, err)
			assert.Equal(t, "pod-b", podOf(t, c))

			// A broken write keeps the last good credential.
			if split {
				k, _ := issue(t, s, testkeys.Generated("p256"), nil)
				_, ch := issue(t, s, testkeys.Generated("p521"), nil)
				m.write(map[string][]byte{"key.pem": k, "chain.pem": ch})
			} else {
				m.write(map[string][]byte{"credentialbundle.pem": []byte("garbage")})
			}
			c, err = src.GetCertificate(nil)
			require.NoError(t, err)
			assert.Equal(t, "pod-b", podOf(t, c))
			require.Error(t, src.Reload())

			// Past its expiry, nothing is served.
			now = c.Leaf.NotAfter
			_, err = src.GetCertificate(nil)
			require.ErrorIs(t, err, podcert.ErrInvalidBundle)
			now = t0
		})
	}
}

func podOf(t *testing.T, c *tls.Certificate) string {
	t.Helper()
	d, err := x509sa.DecodeCertificate(c.Leaf)
	require.NoError(t, err)
	return d.Subject.PodName
}

func TestNewSourceValidates(t *testing.T) {
	for _, cfg := range []podcert.SourceConfig{{}, {KeyPath: "k"}, {BundlePath: "b", KeyPath: "k", ChainPath: "c"}} {
		_, err := podcert.NewSource(cfg)
		assert.ErrorIs(t, err, ksa.ErrInvalidConfig)
	}
}
