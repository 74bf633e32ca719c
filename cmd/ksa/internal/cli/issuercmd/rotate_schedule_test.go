package issuercmd

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/base"
	"github.com/ksa-go/ksa/cmd/ksa/internal/cli/keyflags"
	"github.com/ksa-go/ksa/extsigner"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/keystore"
	"github.com/ksa-go/ksa/publish"
	"github.com/ksa-go/ksa/rotation"
	"github.com/ksa-go/ksa/tokens"
)

// TestScheduledRotationTokens runs a scheduled rotation run by run, as a
// CronJob does, with the clock given by --now. At every step a token is
// signed through the ring the ring file makes at that time (what ksa
// signer serve signs with), and every token signed so far that has not
// expired verifies against the key set in the store: zero failures.
func TestScheduledRotationTokens(t *testing.T) {
	const issuer = "https://oidc.example.com/c1"
	dir := t.TempDir()
	key, err := os.ReadFile("../../../testdata/keys/ec.key")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ec.key"), key, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ring.yaml"), []byte("maxTokenLifetime: 1h\nkeys:\n- key: ec.key\n  primary: \"2026-01-01T00:00:00Z\"\n"), 0o644))
	run := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := runKSA(t, dir, args...)
		require.Equal(t, 0, code, "ksa %s: %s", strings.Join(args, " "), stderr)
		return stdout
	}
	run("issuer", "render", "--issuer", issuer, "--key", "ec.key", "--out", "site")
	run("issuer", "publish", "--from", "site", "--to", "www", "--no-check")
	keySetPath := filepath.Join(dir, "www", "openid", "v1", "jwks")

	type signed struct {
		token string
		exp   time.Time
	}
	var issued []signed
	steps := []struct {
		name string
		now  string
		// revertTo, when set, restores the store's key set as it was before
		// that step ran: a run interrupted between the ring file and the
		// store.
		revertTo string
		stage    string
		// action is the change the run makes; empty: it waits.
		action string
	}{
		{name: "steady, too young", now: "2026-01-20T00:00:00Z", stage: rotation.StageSteady.String()},
		{name: "steady, next key added", now: "2026-01-31T00:00:00Z", stage: rotation.StageSteady.String(), action: rotation.PublishNext.String()},
		{name: "next published, propagating", now: "2026-01-31T00:30:00Z", stage: rotation.StageNextPublished.String()},
		{name: "store reverted, repaired", now: "2026-01-31T00:40:00Z", revertTo: "steady, next key added", stage: rotation.StageNextPublished.String(), action: rotation.Repair.String()},
		{name: "wait restarted", now: "2026-01-31T01:00:00Z", stage: rotation.StageNextPublished.String()},
		// The switch is written --publish-delay (1m) ahead: every signer
		// reads the ring file before the next key signs.
		{name: "next key signs", now: "2026-01-31T01:40:00Z", stage: rotation.StageNextPublished.String(), action: rotation.SignNext.String()},
		{name: "switch written, signers reading it", now: "2026-01-31T01:40:59Z", stage: rotation.StageNextPublished.String()},
		{name: "next signs, old tokens alive", now: "2026-01-31T02:43:00Z", stage: rotation.StageNextSigns.String()},
		{name: "old key retired", now: "2026-01-31T02:43:01Z", stage: rotation.StageNextSigns.String(), action: rotation.RetireOld.String()},
		{name: "store reverted, withdrawn", now: "2026-01-31T02:50:00Z", revertTo: "old key retired", stage: rotation.StageSteady.String(), action: rotation.Repair.String()},
		{name: "steady again", now: "2026-01-31T03:30:00Z", stage: rotation.StageSteady.String()},
	}
	before := map[string][]byte{}
	for _, step := range steps {
		now, err := time.Parse(time.RFC3339, step.now)
		require.NoError(t, err)
		if step.revertTo != "" {
			require.NoError(t, os.WriteFile(keySetPath, before[step.revertTo], 0o644))
		}
		before[step.name], err = os.ReadFile(keySetPath)
		require.NoError(t, err)

		out := run("issuer", "rotate", "--ring", "ring.yaml", "--to", "www", "--next-key", "sa-{date}.key",
			"--every", "720h", "--propagation", "1h", "--now", step.now, "--insecure-now", "-o", "json")
		var res scheduledRotation
		require.NoError(t, json.Unmarshal([]byte(out), &res), out)
		assert.Equal(t, step.stage, res.Stage, step.name)
		assert.Equal(t, step.action, res.Action, step.name)
		assert.Equal(t, step.action == "", res.Waiting != "", "%s: waits exactly when it changes nothing: %s", step.name, out)
		assert.Equal(t, step.action == "", len(res.Changes) == 0, step.name)

		// A token signed through the ring, as the signers sign now.
		ring := ringAt(t, dir, now)
		issued = append(issued, signed{token: signThrough(t, ring, issuer, now), exp: now.Add(time.Hour)})

		// Every live token verifies against the store's key set.
		data, err := os.ReadFile(keySetPath)
		require.NoError(t, err)
		set, err := jwks.ParseSet(data, jwks.ParseOptions{})
		require.NoError(t, err)
		src, err := jwks.NewStaticSource(set.Keys...)
		require.NoError(t, err)
		v, err := tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{issuer}, Keys: src, Audiences: []string{"api"},
			SkipObjectCheck: true, Now: func() time.Time { return now }})
		require.NoError(t, err)
		live := 0
		for i, tok := range issued {
			if !tok.exp.After(now) {
				continue
			}
			live++
			_, err := v.Validate(context.Background(), tok.token)
			assert.NoError(t, err, "%s: token %d", step.name, i)
		}
		assert.Positive(t, live, step.name)
	}
	final, err := os.ReadFile(keySetPath)
	require.NoError(t, err)
	set, err := jwks.ParseSet(final, jwks.ParseOptions{})
	require.NoError(t, err)
	require.Len(t, set.Keys, 1, "only the new key is published")
	assert.Equal(t, ringAt(t, dir, time.Date(2026, 1, 31, 4, 0, 0, 0, time.UTC)).Primary().KeyID, set.Keys[0].KeyID)
}

// ringAt is the ring the ring file in dir makes at now.
func ringAt(t *testing.T, dir string, now time.Time) *extsigner.Ring {
	t.Helper()
	t.Chdir(dir) // the ring file names keys relative to dir
	data, err := os.ReadFile("ring.yaml")
	require.NoError(t, err)
	cfg, err := openRingFile(context.Background(), data, nil)
	require.NoError(t, err)
	cfg.Now = func() time.Time { return now }
	ring, err := extsigner.NewRing(cfg)
	require.NoError(t, err)
	return ring
}

// signThrough signs a service-account token through the ring.
func signThrough(t *testing.T, ring *extsigner.Ring, issuer string, now time.Time) string {
	t.Helper()
	claims := fmt.Sprintf(`{"aud":["api"],"exp":%d,"iat":%d,"nbf":%d,"iss":%q,"jti":"j-%d","sub":"system:serviceaccount:prod:app","kubernetes.io":{"namespace":"prod","serviceaccount":{"name":"app","uid":"7a3c1a8e-1c5e-4d55-9d0e-2f3b4c5d6e7f"}}}`,
		now.Add(time.Hour).Unix(), now.Unix(), now.Unix(), issuer, now.Unix())
	payload := base64.RawURLEncoding.EncodeToString([]byte(claims))
	s, err := ring.Sign(context.Background(), payload)
	require.NoError(t, err)
	return s.Header + "." + payload + "." + s.Signature
}

// TestScheduledRotationStages: what one run finds and does with ring files
// a scheduled rotation did not write itself, or cannot move on from.
func TestScheduledRotationStages(t *testing.T) {
	keys, err := filepath.Abs("../../../testdata/keys")
	require.NoError(t, err)
	kid := func(name string) string {
		pubs, err := keystore.LoadPublicKeysFile(filepath.Join(keys, name+".pub"))
		require.NoError(t, err)
		k, err := jwks.KeyID(pubs[0])
		require.NoError(t, err)
		return k
	}
	ec, rsa := kid("ec"), kid("rsa")
	for _, tc := range []struct {
		name  string
		ring  string
		store []string // key files published
		now   string
		// edit, when set, changes the store (www) before the run.
		edit func(t *testing.T, www string)
		// want are in the output; wantErr in the error, and then nothing
		// is written.
		want    []string
		wantErr string
	}{
		{
			name:  "a jwks.json copy lacking the next key is repaired, and the key's wait restarts",
			ring:  "keys:\n- key: K/ec.key\n  primary: \"2026-01-01T00:00:00Z\"\n- key: K/rsa.key\n  published: \"2026-01-30T00:00:00Z\"\n",
			store: []string{"ec.key", "rsa.key"}, now: "2026-02-01T00:00:00Z",
			edit: func(t *testing.T, www string) { writeStore(t, www, "jwks.json", `{"keys":[]}`) },
			want: []string{"done: restart the wait of kid " + rsa + ", missing from the store", "; jwks.json lacked kid " + ec + ", kid " + rsa + "\n"},
		},
		{
			name:  "a jwks.json copy that does not parse is repaired",
			ring:  "keys:\n- key: K/ec.key\n  primary: \"2026-01-01T00:00:00Z\"\n",
			store: []string{"ec.key"}, now: "2026-01-10T00:00:00Z",
			edit: func(t *testing.T, www string) { writeStore(t, www, "jwks.json", `{"keys":`) },
			want: []string{"; jwks.json did not parse\n"},
		},
		{
			name:  "a jwks.json copy the store cannot serve stops the run",
			ring:  "keys:\n- key: K/ec.key\n  primary: \"2026-01-01T00:00:00Z\"\n- key: K/rsa.key\n  published: \"2026-01-01T00:00:00Z\"\n",
			store: []string{"ec.key", "rsa.key"}, now: "2026-02-01T00:00:00Z",
			edit: func(t *testing.T, www string) {
				require.NoError(t, os.Remove(filepath.Join(www, "jwks.json")))
				require.NoError(t, os.Mkdir(filepath.Join(www, "jwks.json"), 0o755))
			},
			wantErr: "ksa: reading www/jwks.json (nothing was written): read www/jwks.json: is a directory; fix: check the store and its access, then run the same ksa issuer rotate again",
		},
		{
			name:  "a key set that does not parse is refused, saying how to repair it",
			ring:  "keys:\n- key: K/ec.key\n  primary: \"2026-01-01T00:00:00Z\"\n",
			store: []string{"ec.key"}, now: "2026-01-10T00:00:00Z",
			edit:    func(t *testing.T, www string) { writeStore(t, www, "openid/v1/jwks", `{"keys":`) },
			wantErr: "(nothing was written); fix: find out what wrote it, then delete it and run the same ksa issuer rotate again: it publishes the key set the ring file publishes",
		},
		{
			name:  "a deleted key set is repaired",
			ring:  "keys:\n- key: K/ec.key\n  primary: \"2026-01-01T00:00:00Z\"\n",
			store: []string{"ec.key"}, now: "2026-01-10T00:00:00Z",
			edit: func(t *testing.T, www string) {
				require.NoError(t, os.Remove(filepath.Join(www, "openid", "v1", "jwks")))
			},
			want: []string{"www publishes no key\n", "; the store lacked kid " + ec + "\n"},
		},
		{
			name:  "an empty key set is repaired",
			ring:  "keys:\n- key: K/ec.key\n  primary: \"2026-01-01T00:00:00Z\"\n",
			store: []string{"ec.key"}, now: "2026-01-10T00:00:00Z",
			edit: func(t *testing.T, www string) {
				writeStore(t, www, "openid/v1/jwks", `{"keys":[]}`)
				writeStore(t, www, "jwks.json", `{"keys":[]}`)
			},
			want: []string{"www publishes no key\n", "; the store lacked kid " + ec + "; jwks.json lacked kid " + ec + "\n"},
		},
		{
			name:  "kids of the ring file print terminal-safe",
			ring:  "keys:\n- key: K/ec.key\n  kid: \"ec\\u202Egpj\"\n  primary: \"2026-01-01T00:00:00Z\"\n",
			store: []string{"ec.key"}, now: "2026-01-10T00:00:00Z",
			edit: func(t *testing.T, www string) {
				writeStore(t, www, "openid/v1/jwks", `{"keys":[]}`)
				writeStore(t, www, "jwks.json", `{"keys":[]}`)
			},
			want: []string{"stage: steady: kid \"ec\\u202egpj\" signs\n", "\"create the next key and publish it beside kid ec\\u202egpj\"\n"},
		},
		{
			name:  "a switch the ring file schedules less than --propagation after the store gets the key",
			ring:  "keys:\n- key: K/ec.key\n  primary: \"2026-01-01T00:00:00Z\"\n- key: K/rsa.key\n  published: \"2026-01-30T00:00:00Z\"\n  primary: \"2026-02-01T06:00:00Z\"\n",
			store: []string{"ec.key"}, now: "2026-02-01T00:00:00Z",
			wantErr: "ksa: the ring file makes kid " + rsa + " the signing key at 2026-02-01T06:00:00Z, less than --propagation 1d after now, when this run publishes it (2026-02-01T00:00:00Z): relying parties could miss it (nothing was written); fix: move keys[1].primary to 2026-02-02T00:00:00Z or later",
		},
		{
			name:  "a switch the ring file schedules less than --propagation after the key's published time",
			ring:  "keys:\n- key: K/ec.key\n  primary: \"2026-01-01T00:00:00Z\"\n- key: K/rsa.key\n  published: \"2026-02-01T00:00:00Z\"\n  primary: \"2026-02-01T06:00:00Z\"\n",
			store: []string{"ec.key", "rsa.key"}, now: "2026-02-01T01:00:00Z",
			wantErr: "less than --propagation 1d after its published time (2026-02-01T00:00:00Z)",
		},
		{
			name:  "a rotation scheduled by --ring waits for its own times",
			ring:  "keys:\n- key: K/ec.key\n  primary: \"2026-01-01T00:00:00Z\"\n- key: K/rsa.key\n  published: \"2026-02-01T00:00:00Z\"\n  primary: \"2026-02-02T00:00:00Z\"\n",
			store: []string{"ec.key", "rsa.key"}, now: "2026-02-01T12:00:00Z",
			want: []string{"stage: next-published:", "nothing to do: waiting until 2026-02-02T00:00:00Z (in 12h): the ring file makes kid " + rsa + " the primary then"},
		},
		{
			name:  "an old key retired later by the ring file waits for it",
			ring:  "keys:\n- key: K/ec.key\n  primary: \"2026-01-01T00:00:00Z\"\n  retired: \"2026-03-01T00:00:00Z\"\n- key: K/rsa.key\n  published: \"2026-01-30T00:00:00Z\"\n  primary: \"2026-02-01T00:00:00Z\"\n",
			store: []string{"ec.key", "rsa.key"}, now: "2026-02-10T00:00:00Z",
			want: []string{"stage: next-signs:", "nothing to do: waiting until 2026-03-01T00:00:00Z"},
		},
		{
			name:  "a verify-only key out of discovery is withdrawn from the store",
			ring:  "keys:\n- key: K/ec.key\n  primary: \"2026-01-01T00:00:00Z\"\n- publicKeys: K/rsa.pub\n",
			store: []string{"ec.key", "rsa.key"}, now: "2026-01-10T00:00:00Z",
			want: []string{"done: publish the key set the ring file publishes (kids " + ec + ") to www; the ring file no longer publishes kid " + rsa, "withdrawn as planned: kid " + rsa},
		},
		{
			name:  "a verify-only key in discovery stays published",
			ring:  "keys:\n- key: K/ec.key\n  primary: \"2026-01-01T00:00:00Z\"\n- publicKeys: K/rsa.pub\n  publishInDiscovery: true\n",
			store: []string{"ec.key", "rsa.key"}, now: "2026-01-10T00:00:00Z",
			want: []string{"stage: steady:", "nothing to do: waiting until 2026-04-01T00:00:00Z (in 81d): kid " + ec + " has signed since 2026-01-01T00:00:00Z, less than --every 90d", // the default --every, 2160h
				"2026-04-02T00:00:00Z (in 82d): the next key signs"}, // the default --propagation, 24h,
		},
		{
			name:  "a next key while an old key is not retired",
			ring:  "keys:\n- key: K/ec.key\n  primary: \"2026-01-01T00:00:00Z\"\n- key: K/rsa.key\n  published: \"2026-01-30T00:00:00Z\"\n  primary: \"2026-02-01T00:00:00Z\"\n- key: K/rsa2.key\n  published: \"2026-02-05T00:00:00Z\"\n",
			store: []string{"ec.key", "rsa.key"}, now: "2026-02-06T00:00:00Z",
			wantErr: "ksa: the ring file names a next key (keys[2]) while an old key (keys[0]) is not retired yet; fix: wait until the old key is retired",
		},
		{
			name:  "a next key without a published time",
			ring:  "keys:\n- key: K/ec.key\n  primary: \"2026-01-01T00:00:00Z\"\n- key: K/rsa.key\n",
			store: []string{"ec.key", "rsa.key"}, now: "2026-01-10T00:00:00Z",
			wantErr: "ksa: the ring file's keys[1] has no published time: how long relying parties have had it is unknown; fix: give keys[1] a published time",
		},
		{
			name:  "two keys signing from the same time",
			ring:  "keys:\n- key: K/ec.key\n  primary: \"2026-01-01T00:00:00Z\"\n- key: K/rsa.key\n  primary: \"2026-01-01T00:00:00Z\"\n",
			store: []string{"ec.key", "rsa.key"}, now: "2026-01-10T00:00:00Z",
			wantErr: "ksa: ring.yaml: ring file keys[1].primary: 2026-01-01T00:00:00Z is also the primary time of keys[0]",
		},
		{
			name:  "no key signs now",
			ring:  "keys:\n- key: K/ec.key\n  primary: \"2027-01-01T00:00:00Z\"\n",
			store: []string{"ec.key"}, now: "2026-01-10T00:00:00Z",
			wantErr: "ksa: ring.yaml: ",
		},
		{
			name:  "a store missing the signing key is repaired",
			ring:  "keys:\n- key: K/ec.key\n  primary: \"2026-01-01T00:00:00Z\"\n- key: K/rsa.key\n  published: \"2026-01-30T00:00:00Z\"\n  primary: \"2026-02-01T00:00:00Z\"\n",
			store: []string{"ec.key"}, now: "2026-02-01T00:30:00Z",
			want: []string{"stage: next-signs:", "the store lacked kid " + rsa},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ring := []byte(strings.ReplaceAll(tc.ring, "K/", keys+"/"))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "ring.yaml"), ring, 0o644))
			args := []string{"issuer", "render", "--issuer", "https://oidc.example.com/c1", "--out", "site"}
			for _, k := range tc.store {
				args = append(args, "--key", filepath.Join(keys, k))
			}
			code, _, stderr := runKSA(t, dir, args...)
			require.Equal(t, 0, code, stderr)
			code, _, stderr = runKSA(t, dir, "issuer", "publish", "--from", "site", "--to", "www", "--no-check")
			require.Equal(t, 0, code, stderr)
			if tc.edit != nil {
				tc.edit(t, filepath.Join(dir, "www"))
			}
			keySet, err := os.ReadFile(filepath.Join(dir, "www", "openid", "v1", "jwks"))
			if tc.wantErr != "" {
				require.NoError(t, err)
			}

			code, stdout, stderr := runKSA(t, dir, "issuer", "rotate", "--ring", "ring.yaml", "--to", "www", "--next-key", "sa-{date}.key", "--now", tc.now, "--insecure-now")
			if tc.wantErr != "" {
				assert.Equal(t, base.ExitFailure, code, stdout)
				assert.Contains(t, stderr, tc.wantErr)
				after, err := os.ReadFile(filepath.Join(dir, "ring.yaml"))
				require.NoError(t, err)
				assert.Equal(t, string(ring), string(after), "the ring file is unchanged")
				after, err = os.ReadFile(filepath.Join(dir, "www", "openid", "v1", "jwks"))
				require.NoError(t, err)
				assert.Equal(t, string(keySet), string(after), "the store is unchanged")
				return
			}
			require.Equal(t, 0, code, stderr)
			for _, w := range tc.want {
				assert.Contains(t, stdout, w)
			}
		})
	}
}

// writeStore writes a document of a directory store.
func writeStore(t *testing.T, www, name, data string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(www, filepath.FromSlash(name)), []byte(data), 0o644))
}

// TestScheduledRotationRingFileWrite: the ring file is rewritten through a
// symbolic link, keeping its mode; a ring file changed since the run read
// it (another run at the same time) is refused, and left as it is.
func TestScheduledRotationRingFileWrite(t *testing.T) {
	keys, err := filepath.Abs("../../../testdata/keys")
	require.NoError(t, err)
	ring := "keys:\n- key: " + keys + "/ec.key\n  primary: \"2026-01-01T00:00:00Z\"\n"
	for _, tc := range []struct {
		name string
		// read are the ring file's bytes when the run read it.
		read    string
		wantErr string
	}{
		{name: "unchanged since read: written through the link, mode kept", read: ring},
		{name: "changed since read: refused", read: ring + "# another run\n",
			wantErr: "ring.yaml changed while this run read the store: another run or an edit wrote it (nothing was written); fix: run one ksa issuer rotate at a time (a CronJob with concurrencyPolicy: Forbid)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.Mkdir(filepath.Join(dir, "data"), 0o755))
			target := filepath.Join(dir, "data", "ring.yaml")
			require.NoError(t, os.WriteFile(target, []byte(ring), 0o600))
			require.NoError(t, os.Chmod(target, 0o640))
			link := filepath.Join(dir, "ring.yaml")
			require.NoError(t, os.Symlink(filepath.Join("data", "ring.yaml"), link))
			file, err := keyflags.ParseRingFile([]byte(ring))
			require.NoError(t, err)
			file.Keys[0].Retired = time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)

			// The version a FileRing reads is the SHA-256 of the bytes.
			sum := sha256.Sum256([]byte(tc.read))
			rs := &ringStore{path: link, file: publish.NewFileRing(link, publish.FileRingConfig{Parse: keyflags.ParseRingFile, Format: keyflags.RingFileBytes})}
			err = rs.Write(context.Background(), file, publish.Version(hex.EncodeToString(sum[:])))
			fi, lerr := os.Lstat(link)
			require.NoError(t, lerr)
			assert.NotZero(t, fi.Mode()&os.ModeSymlink, "still a symbolic link")
			got, rerr := os.ReadFile(target)
			require.NoError(t, rerr)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				assert.Equal(t, ring, string(got), "unchanged")
				return
			}
			require.NoError(t, err)
			assert.Contains(t, string(got), "retired: \"2026-02-01T00:00:00Z\"")
			fi, err = os.Stat(target)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
		})
	}
}

// openRingFile parses a ring file, YAML or JSON, and opens its keys.
func openRingFile(ctx context.Context, data []byte, opener keystore.Opener) (extsigner.RingConfig, error) {
	f, err := keyflags.ParseRingFile(data)
	if err != nil {
		return extsigner.RingConfig{}, err
	}
	return f.Open(ctx, opener)
}
