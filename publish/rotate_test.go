package publish_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/publish"
	"github.com/ksa-go/ksa/publish/publishtest"
	"github.com/ksa-go/ksa/rotation"
)

const testIssuer = "https://oidc.example.com/c1"

// writeKey writes a new ECDSA key to dir/name and returns its path.
func writeKey(t testing.TB, dir, name string) string {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	der, err := x509.MarshalPKCS8PrivateKey(k)
	require.NoError(t, err)
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))
	return p
}

// rotationSetup is a ring of one key signing since 2026-01-01, published
// to an in-memory store, and the rotation of both on a settable clock.
type rotationSetup struct {
	dir   string
	ring  *publishtest.Ring
	store *publishtest.Store
	now   time.Time
	rot   *publish.Rotation
}

func newRotationSetup(t *testing.T) *rotationSetup {
	s := &rotationSetup{dir: t.TempDir(), store: publishtest.NewStore("c1")}
	first := writeKey(t, s.dir, "sa-0.key")
	s.ring = publishtest.NewRing(&extsigner.RingFile{MaxTokenLifetime: time.Hour,
		Keys: []extsigner.RingFileKey{{Key: first, Primary: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}}})
	cfg, err := s.ring.File().Open(context.Background(), nil)
	require.NoError(t, err)
	docs, err := oidc.Render(oidc.IssuerConfig{Issuer: testIssuer, JWKSURI: oidc.JWKSURL(testIssuer)}, []jwks.Key{cfg.Schedule[0].Key})
	require.NoError(t, err)
	_, err = publish.Publish(context.Background(), s.store, &publish.Site{Discovery: docs.Discovery, KeySet: docs.JWKS}, publish.PublishOptions{})
	require.NoError(t, err)
	n := 0
	s.rot, err = publish.NewRotation(publish.RotationConfig{Ring: s.ring, Store: s.store,
		NewKey: func(_ context.Context, r publish.KeyRequest) (string, error) {
			n++
			return writeKey(t, s.dir, fmt.Sprintf("sa-%d.key", n)), nil
		},
		Cadence: rotation.Cadence{Every: 720 * time.Hour, Delay: time.Minute, Propagation: time.Hour},
		Now:     func() time.Time { return s.now }})
	require.NoError(t, err)
	return s
}

// published returns the key IDs of the store's key set.
func (s *rotationSetup) published(t *testing.T) []string {
	o, ok := s.store.Object("openid/v1/jwks")
	require.True(t, ok)
	set, err := jwks.ParseSet(o.Data, jwks.ParseOptions{})
	require.NoError(t, err)
	var ids []string
	for _, k := range set.Keys {
		ids = append(ids, k.KeyID)
	}
	return ids
}

// TestRotationWhole runs a rotation step by step, every ten minutes of a
// fake clock, as a CronJob does: steady, the next key published, then
// signing, then the old key retired, steady again; a store reverted in
// the middle (an interrupted run) is repaired, restarting the next key's
// wait. At every step the store publishes what the ring file publishes.
func TestRotationWhole(t *testing.T) {
	s := newRotationSetup(t)
	ctx := context.Background()
	var kinds []rotation.Kind
	var before, steady []byte
	for s.now = time.Date(2026, 1, 30, 23, 0, 0, 0, time.UTC); s.now.Before(time.Date(2026, 1, 31, 6, 0, 0, 0, time.UTC)); s.now = s.now.Add(10 * time.Minute) {
		if s.now.Equal(time.Date(2026, 1, 31, 0, 30, 0, 0, time.UTC)) {
			// An interrupted run: the store lost the next key.
			require.NoError(t, s.store.Put(ctx, publish.Object{Name: "openid/v1/jwks", Data: steady}))
		}
		o, _ := s.store.Object("openid/v1/jwks")
		before = o.Data
		res, err := s.rot.Step(ctx)
		require.NoError(t, err, "at %s", s.now)
		if res.Action.Kind == rotation.PublishNext {
			steady = before
		}
		if res.Action.Kind != rotation.Wait {
			kinds = append(kinds, res.Action.Kind)
		}
		if res.Action.Kind == rotation.Repair {
			assert.True(t, res.Action.Restart, "the next key's wait restarts")
		}
		after, err := s.rot.Plan(ctx)
		require.NoError(t, err)
		assert.ElementsMatch(t, after.Listed, s.published(t), "at %s the store publishes what the ring file publishes", s.now)
	}
	assert.Equal(t, []rotation.Kind{rotation.PublishNext, rotation.Repair, rotation.SignNext, rotation.RetireOld}, kinds)
	assert.Len(t, s.published(t), 1, "steady again: one key")
	assert.Len(t, s.ring.File().Keys, 2, "the retired key stays in the ring file until the next rotation")
}

// TestRotationConcurrentWriter: a store another writer changes between
// the step's read and its write is left as that writer left it, and the
// ring file changed by another writer is never overwritten.
func TestRotationConcurrentWriter(t *testing.T) {
	ctx := context.Background()
	t.Run("store", func(t *testing.T) {
		s := newRotationSetup(t)
		s.now = time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)
		theirs := []byte(`{"keys":[]}`)
		s.store.BeforeWrite = func(string) {
			s.store.BeforeWrite = nil
			require.NoError(t, s.store.Put(ctx, publish.Object{Name: "openid/v1/jwks", Data: theirs}))
		}
		_, err := s.rot.Step(ctx)
		require.ErrorIs(t, err, publish.ErrChanged)
		o, _ := s.store.Object("openid/v1/jwks")
		assert.Equal(t, string(theirs), string(o.Data), "the other writer's key set stays")
	})
	t.Run("ring", func(t *testing.T) {
		s := newRotationSetup(t)
		s.now = time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)
		other := s.ring.File()
		other.RefreshHint = time.Minute
		s.ring.BeforeWrite = func() { s.ring.Set(other) }
		_, err := s.rot.Step(ctx)
		require.ErrorIs(t, err, publish.ErrChanged)
		assert.Len(t, s.ring.File().Keys, 1, "the other writer's ring file stays")
		assert.Len(t, s.published(t), 1, "nothing published")
	})
}

// TestRotationRefusals: a ring file and store the rotation cannot move on
// from are refused before anything is written, each with its kind.
func TestRotationRefusals(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, s *rotationSetup)
		want error
	}{
		{name: "a key the ring file never had", want: publish.ErrUnknownKey, edit: func(t *testing.T, s *rotationSetup) {
			other := writeKey(t, s.dir, "other.key")
			f := s.ring.File()
			cfg, err := (&extsigner.RingFile{Keys: []extsigner.RingFileKey{{Key: other, Primary: time.Unix(0, 0)}}}).Open(ctx, nil)
			require.NoError(t, err)
			mine, err := f.Open(ctx, nil)
			require.NoError(t, err)
			docs, err := oidc.Render(oidc.IssuerConfig{Issuer: testIssuer, JWKSURI: oidc.JWKSURL(testIssuer)}, []jwks.Key{mine.Schedule[0].Key, cfg.Schedule[0].Key})
			require.NoError(t, err)
			require.NoError(t, s.store.Put(ctx, publish.Object{Name: "openid/v1/jwks", Data: docs.JWKS}))
		}},
		{name: "no discovery document", want: publish.ErrNoDiscovery, edit: func(t *testing.T, s *rotationSetup) {
			s.store = publishtest.NewStore("c1")
			rot, err := publish.NewRotation(publish.RotationConfig{Ring: s.ring, Store: s.store, Now: func() time.Time { return s.now }})
			require.NoError(t, err)
			s.rot = rot
		}},
		{name: "a key set that does not parse", want: publish.ErrKeySetUnusable, edit: func(t *testing.T, s *rotationSetup) {
			require.NoError(t, s.store.Put(ctx, publish.Object{Name: "openid/v1/jwks", Data: []byte(`{"keys":`)}))
		}},
		{name: "two next keys", want: rotation.ErrOneAtATime, edit: func(t *testing.T, s *rotationSetup) {
			f := s.ring.File()
			for i := 1; i <= 2; i++ {
				f.Keys = append(f.Keys, extsigner.RingFileKey{Key: writeKey(t, s.dir, fmt.Sprintf("n%d.key", i)), Published: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)})
			}
			s.ring.Set(f)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newRotationSetup(t)
			s.now = time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
			tc.edit(t, s)
			ring := s.ring.File().AppendJSON(nil)
			_, err := s.rot.Step(ctx)
			require.ErrorIs(t, err, tc.want)
			var re *publish.RotationError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, string(ring), string(s.ring.File().AppendJSON(nil)), "nothing written")
		})
	}
}
