package issuercmd

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/publish"
)

// scheduledSetup is a steady ring file of one key, signing since
// 2026-01-01, published to the directory www: a run at 2026-01-31 with
// --every 720h adds the next key.
func scheduledSetup(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	key, err := os.ReadFile("../../../testdata/keys/ec.key")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ec.key"), key, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ring.yaml"), []byte("maxTokenLifetime: 1h\nkeys:\n- key: ec.key\n  primary: \"2026-01-01T00:00:00Z\"\n"), 0o644))
	for _, args := range [][]string{
		{"issuer", "render", "--issuer", "https://oidc.example.com/c1", "--key", "ec.key", "--out", "site"},
		{"issuer", "publish", "--from", "site", "--to", "www", "--no-check"},
	} {
		code, _, stderr := runKSA(t, dir, args...)
		require.Equal(t, 0, code, stderr)
	}
	return dir
}

// scheduledRun are the arguments of a run that adds the next key.
var scheduledRun = []string{"issuer", "rotate", "--ring", "ring.yaml", "--to", "www", "--next-key", "sa-{date}.key",
	"--every", "720h", "--propagation", "1h", "--now", "2026-01-31T00:00:00Z", "--insecure-now"}

// TestScheduledRotationOneRunAtATime starts two runs of the same
// scheduled rotation together, in one process: the first to take the
// lock holds it (the rotateRead barrier keeps it there) until the other
// has ended. Exactly one run succeeds; the other fails saying another
// run holds the lock, and writes nothing: the ring file and the store
// name the same next key.
func TestScheduledRotationOneRunAtATime(t *testing.T) {
	dir := scheduledSetup(t)
	t.Chdir(dir)

	// The barrier: a run that has read the ring file and the store waits
	// there until the other run has ended. Should both get there (no
	// lock), neither waits for the other.
	var mu sync.Mutex
	inside := 0
	otherDone := make(chan struct{})
	var closeOnce sync.Once
	release := func() { closeOnce.Do(func() { close(otherDone) }) }
	hook := func() {
		mu.Lock()
		inside++
		both := inside > 1
		mu.Unlock()
		if both {
			release()
		}
		<-otherDone
	}

	type result struct {
		code           int
		stdout, stderr string
	}
	results := make([]result, 2)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var stdout, stderr strings.Builder
			a := &base.App{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}
			code := a.Execute(base.NewRoot(a, "", "", New(a, hook)), scheduledRun)
			results[i] = result{code: code, stdout: stdout.String(), stderr: stderr.String()}
			if code != 0 {
				release() // the loser has ended: the winner goes on
			}
		}()
	}
	wg.Wait()

	var ok, failed []result
	for _, r := range results {
		if r.code == 0 {
			ok = append(ok, r)
		} else {
			failed = append(failed, r)
		}
	}
	require.Len(t, ok, 1, "exactly one run succeeds: %+v", results)
	require.Len(t, failed, 1)
	assert.Contains(t, ok[0].stdout, "done: create the next key")
	assert.Regexp(t, `^ksa: another ksa issuer rotate \(pid \d+ on host .*, since 2026-01-31T00:00:00Z\) holds the lock \S*ring\.yaml\.lock on ring file ring\.yaml: two runs would each rotate it \(nothing was written\); fix: wait for that run to end, then run again`, failed[0].stderr)

	// The ring file's next key is the one the store publishes.
	ring := ringAt(t, dir, time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC))
	data, err := os.ReadFile(filepath.Join(dir, "www", "openid", "v1", "jwks"))
	require.NoError(t, err)
	set, err := jwks.ParseSet(data, jwks.ParseOptions{})
	require.NoError(t, err)
	var inRing []string
	for _, k := range ring.KeySet().Keys {
		if !k.ExcludeFromDiscovery {
			inRing = append(inRing, k.KeyID)
		}
	}
	assert.ElementsMatch(t, inRing, kidsOf(set.Keys))
	assert.Len(t, set.Keys, 2)

	// The lock is released: the next run goes ahead (it waits: nothing
	// is due).
	code, stdout, stderr := runKSA(t, dir, "issuer", "rotate", "--ring", "ring.yaml", "--to", "www", "--next-key", "sa-{date}.key",
		"--every", "720h", "--propagation", "1h", "--now", "2026-01-31T00:10:00Z", "--insecure-now")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "nothing to do: waiting")
}

func kidsOf(keys []jwks.Key) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.KeyID
	}
	return out
}

// TestScheduledRotationStoreChanged: a store written by another writer
// between the run's read and its write (a ksa issuer publish, or a run
// on another copy of the ring file) is left as that writer left it: the
// run's write is conditional on what it read.
func TestScheduledRotationStoreChanged(t *testing.T) {
	dir := scheduledSetup(t)
	keySet := filepath.Join(dir, "www", "openid", "v1", "jwks")
	theirs := []byte(`{"keys":[]}`)
	var stdout, stderr strings.Builder
	a := &base.App{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}
	hook := func() {
		require.NoError(t, os.WriteFile(keySet, theirs, 0o644))
	}
	t.Chdir(dir)
	code := a.Execute(base.NewRoot(a, "", "", New(a, hook)), scheduledRun)
	require.Equal(t, base.ExitFailure, code, stdout.String())
	assert.Regexp(t, `^ksa: writing \S+/openid/v1/jwks: it changed since it was read \(the store was left as it is\); fix: find out what else writes www \(another ksa issuer rotate of the same issuer, a ksa issuer publish\), stop it, then run the same ksa issuer rotate again`, stderr.String())
	got, err := os.ReadFile(keySet)
	require.NoError(t, err)
	assert.Equal(t, string(theirs), string(got), "the other writer's key set stays")
}

// TestRingRotationInPlaceTakesTheLock: ksa issuer rotate --ring FILE
// --ring-out FILE rewrites the file a scheduled rotation locks: it fails
// while the lock is held, and writes nothing.
func TestRingRotationInPlaceTakesTheLock(t *testing.T) {
	dir := scheduledSetup(t)
	unlock, err := publish.NewFileRing(filepath.Join(dir, "ring.yaml"), publish.FileRingConfig{}).Lock("pid 1 on host cron")
	require.NoError(t, err)
	before, err := os.ReadFile(filepath.Join(dir, "ring.yaml"))
	require.NoError(t, err)

	code, _, stderr := runKSA(t, dir, "issuer", "rotate", "--ring", "ring.yaml", "--ring-out", "ring.yaml", "--next-key", "sa-2.key")
	require.Equal(t, base.ExitFailure, code)
	assert.Contains(t, stderr, "ksa: another ksa issuer rotate (pid 1 on host cron) holds the lock ring.yaml.lock on ring file ring.yaml")
	after, err := os.ReadFile(filepath.Join(dir, "ring.yaml"))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))
	assert.NoFileExists(t, filepath.Join(dir, "sa-2.key"))

	require.NoError(t, unlock())
	code, _, stderr = runKSA(t, dir, "issuer", "rotate", "--ring", "ring.yaml", "--ring-out", "ring.yaml", "--next-key", "sa-2.key")
	require.Equal(t, base.ExitOK, code, stderr)
}
