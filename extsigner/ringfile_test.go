package extsigner_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/keystore"
)

// writeKey writes s's private key (PKCS #8 PEM) into dir and returns the
// path.
func writeKey(t testing.TB, dir, name string, s crypto.Signer) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(s)
	require.NoError(t, err)
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))
	return path
}

// writePublic writes public keys (PKIX PEM) into one file in dir.
func writePublic(t testing.TB, dir, name string, pubs ...crypto.PublicKey) string {
	t.Helper()
	var data []byte
	for _, p := range pubs {
		der, err := x509.MarshalPKIXPublicKey(p)
		require.NoError(t, err)
		data = append(data, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})...)
	}
	path := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

func TestParseRingFile(t *testing.T) {
	const key = `{"key":"/k","primary":"2027-01-01T00:00:00Z"}`
	tests := []struct {
		name    string
		file    string
		wantMsg string // empty: accepted
	}{
		{name: "one key", file: `{"keys":[` + key + `]}`},
		{name: "settings", file: `{"refreshHint":"30s","maxTokenLifetime":"1h","minStaging":"5m","keys":[` + key + `]}`},
		{name: "public keys", file: `{"keys":[` + key + `,{"publicKeys":"/p.pub","publishInDiscovery":true,"kid":"legacy"}]}`},
		{name: "spaces around", file: " \n{\"keys\":[" + key + "]}\n"},
		{name: "not JSON", file: `keys: []`, wantMsg: "ring file: not a JSON object"},
		{name: "empty", file: ``, wantMsg: "ring file: not a JSON object"},
		{name: "two objects", file: `{"keys":[` + key + `]} {}`, wantMsg: "ring file: not strict JSON"},
		{name: "unknown member", file: `{"keys":[` + key + `],"maxTokenLifeTime":"1h"}`, wantMsg: "ring file maxTokenLifeTime: is not a member of a ring file"},
		{name: "member twice", file: `{"keys":[` + key + `],"keys":[` + key + `]}`, wantMsg: "ring file keys: appears twice"},
		{name: "unknown key member", file: `{"keys":[{"key":"/k","primary":"2027-01-01T00:00:00Z","pin":"1234"}]}`, wantMsg: "ring file keys[0].pin: is not a member of a key entry"},
		{name: "key member twice", file: `{"keys":[{"key":"/k","key":"/j","primary":"2027-01-01T00:00:00Z"}]}`, wantMsg: "ring file keys[0].key: appears twice"},
		{name: "no keys member", file: `{}`, wantMsg: "ring file keys: holds no key"},
		{name: "empty keys", file: `{"keys":[]}`, wantMsg: "ring file keys: holds no key"},
		{name: "keys not an array", file: `{"keys":{}}`, wantMsg: "ring file keys: is not an array of keys"},
		{name: "a key not an object", file: `{"keys":["/k"]}`, wantMsg: "ring file keys[0]: is not a JSON object"},
		{name: "an entry with no key", file: `{"keys":[{"primary":"2027-01-01T00:00:00Z"}]}`, wantMsg: "ring file keys[0]: names no key"},
		{name: "key and public keys", file: `{"keys":[{"key":"/k","publicKeys":"/p","primary":"2027-01-01T00:00:00Z"}]}`, wantMsg: "ring file keys[0]: gives both key and publicKeys"},
		{name: "discovery on a signing key", file: `{"keys":[{"key":"/k","publishInDiscovery":true,"primary":"2027-01-01T00:00:00Z"}]}`, wantMsg: "ring file keys[0].publishInDiscovery: is for publicKeys entries"},
		{name: "empty reference", file: `{"keys":[{"key":"","primary":"2027-01-01T00:00:00Z"}]}`, wantMsg: "ring file keys[0].key: is empty"},
		{name: "control character", file: `{"keys":[{"key":"/k\n","primary":"2027-01-01T00:00:00Z"}]}`, wantMsg: "ring file keys[0].key: holds a control character"},
		{name: "the same reference twice", file: `{"keys":[` + key + `,{"key":"/k"}]}`, wantMsg: "ring file keys[1]: names the key of keys[0] again"},
		{name: "a key ID twice", file: `{"keys":[{"key":"/k","kid":"a","primary":"2027-01-01T00:00:00Z"},{"key":"/j","kid":"a"}]}`, wantMsg: `ring file keys[1].kid: "a" is the key ID of keys[0] too`},
		{name: "a time not RFC 3339", file: `{"keys":[{"key":"/k","primary":"2027-01-01 00:00:00"}]}`, wantMsg: `ring file keys[0].primary: "2027-01-01 00:00:00" is not an RFC 3339 time`},
		{name: "a time without zone", file: `{"keys":[{"key":"/k","primary":"2027-01-01T00:00:00"}]}`, wantMsg: `is not an RFC 3339 time`},
		{name: "a time before 1970", file: `{"keys":[{"key":"/k","primary":"1969-12-31T23:59:59Z"}]}`, wantMsg: `is before 1970`},
		{name: "a time as a number", file: `{"keys":[{"key":"/k","primary":1798761600}]}`, wantMsg: `ring file keys[0].primary: is not a string`},
		{name: "a duration not Go's", file: `{"maxTokenLifetime":"1 day","keys":[` + key + `]}`, wantMsg: `ring file maxTokenLifetime: "1 day" is not a positive duration`},
		{name: "a negative duration", file: `{"refreshHint":"-1m","keys":[` + key + `]}`, wantMsg: `ring file refreshHint: "-1m" is not a positive duration`},
		{name: "a lifetime below ten minutes", file: `{"maxTokenLifetime":"9m","keys":[` + key + `]}`, wantMsg: `ring file maxTokenLifetime: 9m0s is not a whole number of seconds from 10m0s`},
		{name: "staging below the refresh hint", file: `{"refreshHint":"2m","minStaging":"1m","keys":[` + key + `]}`, wantMsg: `ring file minStaging: 1m0s is shorter than the refresh hint`},
		{name: "overlapping primaries", file: `{"keys":[` + key + `,{"key":"/j","published":"2026-01-01T00:00:00Z","primary":"2027-01-01T00:00:00Z"}]}`,
			wantMsg: "ring file keys[1].primary: 2027-01-01T00:00:00Z is also the primary time of keys[0]"},
		{name: "a next key never published before it signs", file: `{"keys":[` + key + `,{"key":"/j","primary":"2027-02-01T00:00:00Z"}]}`,
			wantMsg: "ring file keys[1].primary: 2027-02-01T00:00:00Z is less than the minimum staging time (2m0s) after the key is published (2027-02-01T00:00:00Z)"},
		{name: "a retirement before the tokens expire", file: `{"keys":[{"key":"/k","primary":"2027-01-01T00:00:00Z","retired":"2027-02-01T12:00:00Z"},{"key":"/j","published":"2027-01-31T00:00:00Z","primary":"2027-02-01T00:00:00Z"}]}`,
			wantMsg: "ring file keys[0].retired: 2027-02-01T12:00:00Z is before every token the key signed has expired: it signs until keys[1] takes over at 2027-02-01T00:00:00Z, and tokens live up to 24h2m1s more"},
		{name: "the last key that signs retired", file: `{"keys":[{"key":"/k","primary":"2027-01-01T00:00:00Z","retired":"2028-01-01T00:00:00Z"}]}`, wantMsg: "ring file keys[0].retired: is set on the last key that signs"},
		{name: "retired before published", file: `{"keys":[` + key + `,{"publicKeys":"/p","published":"2027-02-01T00:00:00Z","retired":"2027-01-01T00:00:00Z"}]}`, wantMsg: "ring file keys[1].retired: 2027-01-01T00:00:00Z is not after the key is published"},
		{name: "a verify-only key that signs", file: `{"keys":[` + key + `,{"publicKeys":"/p","primary":"2027-02-01T00:00:00Z"}]}`, wantMsg: "ring file keys[1].primary: is set on a key that cannot sign"},
		{name: "invalid UTF-8", file: "{\"keys\":[{\"key\":\"/k\xff\",\"primary\":\"2027-01-01T00:00:00Z\"}]}", wantMsg: "ring file keys[0].key: is not a string: invalid JSON at offset 19: invalid UTF-8 in string"},
		{name: "no key signs", file: `{"keys":[{"key":"/k"},{"publicKeys":"/p"}]}`, wantMsg: "ring file keys: names no key that signs: give the key that signs a primary time"},
		{name: "too many keys", file: `{"keys":[` + strings.Repeat(`{"publicKeys":"/p"},`, extsigner.MaxKeys) + key + `]}`, wantMsg: "ring file keys: holds more than 64 keys"},
		{name: "too large", file: `{"keys":[` + key + `]}` + strings.Repeat(" ", extsigner.MaxRingFileBytes), wantMsg: "bytes, more than 1048576"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := extsigner.ParseRingFile([]byte(tt.file))
			if tt.wantMsg == "" {
				require.NoError(t, err)
				assert.NotEmpty(t, f.Keys)
				return
			}
			require.ErrorIs(t, err, extsigner.ErrInvalidRingFile)
			assert.Nil(t, f)
			assert.Contains(t, err.Error(), tt.wantMsg)
			assert.True(t, strings.HasPrefix(err.Error(), "extsigner: ring file"), err.Error())
			assert.Equal(t, 1, strings.Count(err.Error(), "extsigner: "), "one prefix: %s", err)
			assert.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}

// TestRingFileDefaults: what the documentation says absent members mean.
func TestRingFileDefaults(t *testing.T) {
	dir := t.TempDir()
	k := writeKey(t, dir, "sa.key", key("p256"))
	pub := writePublic(t, dir, "old.pub", key("rsa2048").Public())
	f, err := extsigner.ParseRingFile([]byte(`{"keys":[{"key":"` + k + `","primary":"2027-01-01T00:00:00Z"},{"publicKeys":"` + pub + `"}]}`))
	require.NoError(t, err)
	cfg, err := f.Open(t.Context(), nil) // nil: PEM files
	require.NoError(t, err)
	assert.Zero(t, cfg.RefreshHint, "the ring's default")
	assert.Zero(t, cfg.MaxTokenLifetime, "the ring's default")
	require.Len(t, cfg.Schedule, 2)
	primaryAt := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	assert.Equal(t, primaryAt, cfg.Schedule[0].Published, "a signing key is published at its primary time")
	assert.Equal(t, kidOf2(t, key("p256")), cfg.Schedule[0].Key.KeyID, "Kubernetes' key ID")
	assert.True(t, cfg.Schedule[1].Key.ExcludeFromDiscovery, "public keys are excluded from discovery")
	assert.Nil(t, cfg.Schedule[1].Signer)
	assert.True(t, cfg.Schedule[1].Published.IsZero(), "public keys are published from the start")

	clk := newClock()
	clk.Set(primaryAt)
	cfg.Now = clk.Now
	ring, err := extsigner.NewRing(cfg)
	require.NoError(t, err)
	set := ring.KeySet()
	assert.Equal(t, primaryAt, set.DataTimestamp)
	assert.Equal(t, extsigner.DefaultRefreshHint, set.RefreshHint)
	assert.Equal(t, extsigner.DefaultMaxTokenLifetime, ring.MaxTokenLifetime())
}

// TestRingFileOpen: keys come through the Opener, public keys from their
// files; each failure names the entry of the file.
func TestRingFileOpen(t *testing.T) {
	dir := t.TempDir()
	two := writePublic(t, dir, "two.pub", key("rsa2048").Public(), key("p384").Public())
	ed := writePublic(t, dir, "ed.pub", key("ed25519").Public())
	opened := map[string]crypto.Signer{"kms:a": key("p256"), "kms:b": key("p521"), "kms:ed": key("ed25519")}
	opener := keystore.OpenerFunc(func(_ context.Context, ref string) (crypto.Signer, error) {
		if s, ok := opened[ref]; ok {
			return s, nil
		}
		return nil, errors.New("keystore: " + ref + ": no such key")
	})
	const a = `{"key":"kms:a","primary":"2027-01-01T00:00:00Z"}`
	tests := []struct {
		name    string
		file    string
		keys    int
		wantMsg string
		wantErr error
	}{
		{name: "a key and two public keys", file: `{"keys":[` + a + `,{"publicKeys":"` + two + `"}]}`, keys: 3},
		{name: "a key the opener cannot open", file: `{"keys":[` + a + `,{"key":"kms:missing"}]}`, wantMsg: "extsigner: keys[1]: cannot open its key: keystore: kms:missing: no such key"},
		{name: "a public-key file missing", file: `{"keys":[` + a + `,{"publicKeys":"` + filepath.Join(dir, "none.pub") + `"}]}`, wantMsg: "keys[1]: cannot read its public keys", wantErr: keystore.ErrKeyFile},
		{name: "one key ID for two keys", file: `{"keys":[` + a + `,{"publicKeys":"` + two + `","kid":"old"}]}`, wantMsg: "keys[1].kid: names one key, but " + two + " holds 2", wantErr: extsigner.ErrInvalidRingFile},
		{name: "an Ed25519 signing key", file: `{"keys":[{"key":"kms:ed","primary":"2027-01-01T00:00:00Z"}]}`, wantMsg: "keys[0]: its key is refused"},
		{name: "an Ed25519 public key", file: `{"keys":[` + a + `,{"publicKeys":"` + ed + `"}]}`, wantMsg: "keys[1]: "},
		{name: "two references to one key", file: `{"keys":[` + a + `,{"publicKeys":"` + writePublic(t, dir, "a.pub", key("p256").Public()) + `"}]}`, wantErr: extsigner.ErrDuplicateKeyID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := extsigner.ParseRingFile([]byte(tt.file))
			require.NoError(t, err)
			cfg, err := f.Open(t.Context(), opener)
			if tt.wantMsg == "" && tt.wantErr == nil {
				require.NoError(t, err)
				assert.Len(t, cfg.Schedule, tt.keys)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantMsg)
			if tt.wantErr != nil {
				assert.ErrorIs(t, err, tt.wantErr)
			}
			assert.Equal(t, 1, strings.Count(err.Error(), "extsigner: "), "one prefix: %s", err)
		})
	}
}

// countingSigner is a key the ring does not know (as a KMS key is), which
// counts the calls of Public: each check of the key asks for it once.
type countingSigner struct {
	crypto.Signer
	mu     sync.Mutex
	public int
}

func (c *countingSigner) Public() crypto.PublicKey {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.public++
	return c.Signer.Public()
}

func (c *countingSigner) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.public
}

// TestRingFileChecksOnce: a key of a ring file is checked when the file is
// opened, and NewRing and Update take it as checked (before, each checked
// and probed every key again); a Key changed after Open is checked again.
func TestRingFileChecksOnce(t *testing.T) {
	dir := t.TempDir()
	kms := &countingSigner{Signer: key("p256")}
	opener := keystore.OpenerFunc(func(ctx context.Context, ref string) (crypto.Signer, error) {
		if ref == "kms:a" {
			return kms, nil
		}
		return keystore.Files{}.Open(ctx, ref)
	})
	fileKey := writeKey(t, dir, "b.key", key("p384"))
	f, err := extsigner.ParseRingFile([]byte(`{"keys":[{"key":"kms:a","primary":"2027-01-01T00:00:00Z"},{"key":"` + fileKey + `"}]}`))
	require.NoError(t, err)
	cfg, err := f.Open(t.Context(), opener)
	require.NoError(t, err)
	opened := kms.count()
	require.Equal(t, 1, opened, "checked by Open")
	clk := newClock()
	clk.Set(time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC))
	cfg.Now = clk.Now
	ring, err := extsigner.NewRing(cfg)
	require.NoError(t, err)
	assert.Equal(t, opened, kms.count(), "NewRing checks no key again")
	require.NoError(t, ring.Update(mustOpenWith(t, f, opener)))
	assert.Equal(t, 2, kms.count(), "Open checked it, Update did not")
	signed, err := ring.Sign(t.Context(), encodeClaims(testClaims(clk.Now(), time.Hour)))
	require.NoError(t, err)
	assert.Equal(t, kidOf2(t, key("p256")), signed.KeyID)
	assert.Equal(t, []string{kidOf2(t, key("p256")), kidOf2(t, key("p384"))}, kids(ring.KeySet().Keys))

	// A Key changed after Open is checked again, as any key is.
	renamed := mustOpenWith(t, f, opener)
	renamed.Schedule[1].Key.KeyID = "b"
	renamed.Now = clk.Now
	ring, err = extsigner.NewRing(renamed)
	require.NoError(t, err)
	assert.Equal(t, []string{kidOf2(t, key("p256")), "b"}, kids(ring.KeySet().Keys))
	other := mustOpenWith(t, f, opener)
	other.Schedule[1].Key.Public = key("p521").Public()
	other.Now = clk.Now
	_, err = extsigner.NewRing(other)
	require.ErrorIs(t, err, ksa.ErrInvalidConfig)
	assert.Contains(t, err.Error(), "public key is not the signer's")

	// The signer Open returns signs as the key opened.
	s := cfg.Schedule[1].Signer
	assert.True(t, key("p384").Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(s.Public()))
	digest := make([]byte, 48)
	sig, err := s.Sign(rand.Reader, digest, crypto.SHA384)
	require.NoError(t, err)
	assert.True(t, ecdsa.VerifyASN1(key("p384").Public().(*ecdsa.PublicKey), digest, sig))
}

func mustOpenWith(t testing.TB, f *extsigner.RingFile, opener keystore.Opener) extsigner.RingConfig {
	t.Helper()
	cfg, err := f.Open(t.Context(), opener)
	require.NoError(t, err)
	return cfg
}

// TestRingFileJSON: AppendJSON writes what ParseRingFile reads back as
// the same file.
func TestRingFileJSON(t *testing.T) {
	in := `{"refreshHint":"90s","maxTokenLifetime":"1h","keys":[{"key":"/etc/ksa/sa.key","kid":"a\"b","primary":"2027-01-01T00:00:00.5Z","retired":"2027-02-01T01:02:02.5Z"},` +
		`{"key":"pkcs11:token=ksa;object=sa-2","published":"2027-01-31T23:00:00Z","primary":"2027-02-01T00:00:00Z"},{"publicKeys":"/etc/kubernetes/pki/sa.pub","publishInDiscovery":true}]}`
	f, err := extsigner.ParseRingFile([]byte(in))
	require.NoError(t, err)
	out := f.AppendJSON(nil)
	assert.Equal(t, `{
  "refreshHint": "90s",
  "maxTokenLifetime": "1h",
  "keys": [
    {
      "key": "/etc/ksa/sa.key",
      "kid": "a\"b",
      "primary": "2027-01-01T00:00:00.5Z",
      "retired": "2027-02-01T01:02:02.5Z"
    },
    {
      "key": "pkcs11:token=ksa;object=sa-2",
      "published": "2027-01-31T23:00:00Z",
      "primary": "2027-02-01T00:00:00Z"
    },
    {
      "publicKeys": "/etc/kubernetes/pki/sa.pub",
      "publishInDiscovery": true
    }
  ]
}
`, string(out))
	back, err := extsigner.ParseRingFile(out)
	require.NoError(t, err)
	assert.Equal(t, f, back)
}

// TestRingFileRotate: the next ring file of a rotation publishes the next
// key, makes it primary after the staging time, and retires the old key
// exactly when its tokens have expired; a ring that follows it switches at
// those times.
func TestRingFileRotate(t *testing.T) {
	t0 := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	f, err := extsigner.ParseRingFile([]byte(`{"maxTokenLifetime":"1h","keys":[` +
		`{"key":"kms:gone","primary":"2027-01-01T00:00:00Z","retired":"2027-02-01T01:02:01Z"},` +
		`{"key":"kms:a","published":"2027-01-31T00:00:00Z","primary":"2027-02-01T00:00:00Z"},{"publicKeys":"/old.pub"}]}`))
	require.NoError(t, err)
	next, err := f.Rotate(extsigner.RotateOptions{Key: "kms:b", Published: t0.Add(time.Minute), Now: t0})
	require.NoError(t, err)
	want := []extsigner.RingFileKey{
		{Key: "kms:a", Published: time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC), Primary: time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC), Retired: t0.Add(3*time.Minute + time.Hour + 2*time.Minute + time.Second)},
		{PublicKeys: "/old.pub"},
		{Key: "kms:b", Published: t0.Add(time.Minute), Primary: t0.Add(3 * time.Minute)},
	}
	assert.Equal(t, want, next.Keys, "the retired key dropped, the old one retired, the next one staged")
	assert.Len(t, f.Keys, 3, "f is unchanged")

	_, err = next.Rotate(extsigner.RotateOptions{Key: "kms:c", Published: t0.Add(2 * time.Minute)})
	require.ErrorIs(t, err, extsigner.ErrInvalidRingFile)
	require.ErrorIs(t, err, extsigner.ErrRotationUnderWay)
	assert.Equal(t, "extsigner: ring file: a rotation is under way: keys[2] becomes the primary at 2027-03-01T09:03:00Z; rotate after that", err.Error())
	assert.Contains(t, err.Error(), `a rotation is under way: keys[2] becomes the primary at 2027-03-01T09:03:00Z; rotate after that`)

	_, err = f.Rotate(extsigner.RotateOptions{Key: "kms:a", Published: t0})
	assert.ErrorIs(t, err, extsigner.ErrInvalidRingFile, "the same key again")
	assert.NotErrorIs(t, err, extsigner.ErrRotationUnderWay, "the same key again")
	_, err = f.Rotate(extsigner.RotateOptions{Key: "kms:b", Published: t0, Primary: t0.Add(time.Minute)})
	assert.ErrorIs(t, err, extsigner.ErrInvalidRingFile, "staged for less than the minimum")
	_, err = f.Rotate(extsigner.RotateOptions{Key: "kms:b"})
	assert.ErrorIs(t, err, extsigner.ErrInvalidRingFile, "no time")
}

// TestRingFileRotateFollowed: a ring that follows a rotated ring file
// signs with the next key from its primary time on.
func TestRingFileRotateFollowed(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	f, err := extsigner.ParseRingFile([]byte(`{"keys":[{"key":"` + writeKey(t, dir, "a.key", key("p256")) + `","primary":"2027-01-01T00:00:00Z"}]}`))
	require.NoError(t, err)
	next, err := f.Rotate(extsigner.RotateOptions{Key: writeKey(t, dir, "b.key", key("p384")), Published: t0})
	require.NoError(t, err)
	clk := newClock()
	clk.Set(t0.Add(-time.Second))
	ring, err := extsigner.NewRing(extsigner.RingConfig{Schedule: mustOpen(t, f).Schedule, Now: clk.Now})
	require.NoError(t, err)
	require.NoError(t, ring.Update(mustOpen(t, next)), "a reload before t0")
	assert.Len(t, ring.KeySet().Keys, 1)
	clk.Set(t0)
	assert.Len(t, ring.KeySet().Keys, 2)
	assert.Equal(t, kidOf2(t, key("p256")), ring.Primary().KeyID)
	clk.Set(t0.Add(ring.MinStaging()))
	assert.Equal(t, kidOf2(t, key("p384")), ring.Primary().KeyID)
	clk.Set(t0.Add(ring.MinStaging() + extsigner.DefaultMaxTokenLifetime + 2*time.Minute + time.Second))
	assert.Equal(t, []string{kidOf2(t, key("p384"))}, kids(ring.KeySet().Keys))
}

func mustOpen(t testing.TB, f *extsigner.RingFile) extsigner.RingConfig {
	t.Helper()
	cfg, err := f.Open(context.Background(), nil)
	require.NoError(t, err)
	return cfg
}

// FuzzParseRingFile: the parser never panics, refuses with
// ErrInvalidRingFile, and what it accepts AppendJSON writes back to the
// same file.
func FuzzParseRingFile(f *testing.F) {
	for _, s := range []string{
		`{"keys":[{"key":"/k","primary":"2027-01-01T00:00:00Z"}]}`,
		`{"refreshHint":"30s","maxTokenLifetime":"1h","minStaging":"1m","keys":[{"key":"/k","kid":"a","primary":"2027-01-01T00:00:00Z","retired":"2027-02-01T01:02:01Z"},{"key":"/j","published":"2027-01-31T00:00:00Z","primary":"2027-02-01T00:00:00Z"},{"publicKeys":"/p","publishInDiscovery":true}]}`,
		`{"keys":[{"key":"/k","key":"/k"}]}`, `{"keys":[{}]}`, `[]`, `{"keys":null}`, `{"keys":[{"key":"\u0000"}]}`,
		`{"keys":[{"key":"/k","primary":"2027-01-01T00:00:00+02:00"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rf, err := extsigner.ParseRingFile(data)
		if err != nil {
			require.ErrorIs(t, err, extsigner.ErrInvalidRingFile)
			require.Nil(t, rf)
			return
		}
		back, err := extsigner.ParseRingFile(rf.AppendJSON(nil))
		require.NoError(t, err)
		require.Equal(t, rf, back)
		require.NoError(t, rf.Check())
		for _, k := range rf.Keys {
			require.True(t, (k.Key == "") != (k.PublicKeys == ""))
		}
	})
}
