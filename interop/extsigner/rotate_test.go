package extsigner_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ksa-go/ksa/internal/testkeys"
	"github.com/ksa-go/ksa/interop/controlplane"
	"github.com/ksa-go/ksa/jwks"
	"github.com/ksa-go/ksa/oidc"
	"github.com/ksa-go/ksa/tokens"
)

// TestScheduledRotationPublished: a real kube-apiserver signs through "ksa
// signer serve --ring", and "ksa issuer rotate --ring --to DIR" rotates its
// key step by step as a CronJob does, DIR being the issuer's published
// directory, served over https. TokenRequest tokens issued before, during
// and after every stage verify against the key set served from DIR: zero
// failures.
//
// The waits are hours (--propagation is at least the store's max-age, an
// hour) while the test runs in about a minute, so the rotation's clock is
// given with --now, and the signer keeps real time: the first two stages
// run with --now in the past, so that the times they write (the next key
// published, then signing) are already due when the signer reads them;
// kube-apiserver's tokens live at least ten minutes, so the retire stage
// runs with --now past the expiry of every token the old key signed (plus
// clock skew and leeway), as a CronJob would run it ten minutes later. The
// ring file then retires the old key in the signer's future (the signer
// keeps it published as long as its tokens live), while the store
// withdraws it at once: from then on, the old key's tokens are checked at
// that --now, where they have expired.
func TestScheduledRotationPublished(t *testing.T) {
	controlplane.EachVersion(t, func(t *testing.T, version string) {
		bin := buildKSA(t, version)
		dir, err := os.MkdirTemp("", "ksa-rotate-")
		require.NoError(t, err)
		t.Cleanup(func() { os.RemoveAll(dir) })

		// The published directory, served over https.
		www := filepath.Join(dir, "www")
		srv := httptest.NewTLSServer(http.FileServer(http.Dir(www)))
		t.Cleanup(srv.Close)
		issuer := srv.URL + "/cluster-1"
		store := filepath.Join(www, "cluster-1")

		run := func(args ...string) string {
			t.Helper()
			cmd := exec.Command(bin, args...)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "ksa %s:\n%s", strings.Join(args, " "), out)
			return string(out)
		}

		real0 := time.Now().UTC().Truncate(time.Second)
		k1 := testkeys.Generated("p256-rotate-1")
		kid1 := mustKID(t, k1)
		f1 := writeKeyFile(t, dir, "sa-1.key", k1)
		ring := filepath.Join(dir, "ring.yaml")
		require.NoError(t, os.WriteFile(ring, fmt.Appendf(nil, "refreshHint: 1s\nmaxTokenLifetime: 10m\nkeys:\n- key: %s\n  primary: %q\n",
			f1, real0.Add(-4*time.Hour).Format(time.RFC3339)), 0o600))
		run("issuer", "render", "--issuer", issuer, "--key", f1, "--out", "rendered")
		run("issuer", "publish", "--from", "rendered", "--to", store, "--public-url", issuer, "--no-check")

		s := startKSASigner(t, bin, filepath.Join(dir, "signer.sock"), "--ring", ring, "--ring-check-interval", "200ms")
		cp := controlplane.StartForTest(t, controlplane.Config{Version: version, SigningEndpoint: s.sock, Issuers: []string{issuer}})
		ns := cp.Namespace(t)
		sa, pod := accountIn(t, cp.Clientset(), ns)

		rotate := func(at time.Time) string {
			t.Helper()
			return run("issuer", "rotate", "--ring", ring, "--to", store, "--next-key", filepath.Join(dir, "sa-{date}.key"),
				"--every", "2h", "--propagation", "1h", "--now", at.Format(time.RFC3339), "--insecure-now")
		}
		type issued struct {
			token, kid string
			exp        time.Time
		}
		var all []issued
		mint := func() issued {
			t.Helper()
			tok, err := requestToken(t.Context(), cp.Clientset(), ns, sa, pod)
			require.NoError(t, err)
			c, err := tokens.ParseUnverified(tok)
			require.NoError(t, err)
			i := issued{token: tok, kid: kidOf(t, tok), exp: c.Expiry}
			all = append(all, i)
			return i
		}
		// verifyAll checks every token unexpired at the rotation's clock
		// against the key set the published directory serves now.
		verifyAll := func(stage string, at time.Time) {
			t.Helper()
			v := publishedValidator(t, srv, issuer, at)
			for n, i := range all {
				if i.exp.Add(tokens.DefaultLeeway).Before(at) {
					continue // expired: no relying party accepts it
				}
				_, err := v.Validate(t.Context(), i.token)
				assert.NoError(t, err, "%s: token %d (kid %s)", stage, n, i.kid)
			}
		}
		// served waits until kube-apiserver serves exactly kids.
		served := func(kids ...string) {
			t.Helper()
			require.EventuallyWithT(t, func(c *assert.CollectT) {
				got := kidsOfJWKS(t, getDoc(t, cp, cp.URL, oidc.JWKSPath))
				assert.ElementsMatch(c, kids, got)
			}, 30*time.Second, 100*time.Millisecond)
		}

		// Before: the first key signs.
		require.Equal(t, kid1, mint().kid)
		verifyAll("before", time.Now())
		assert.Contains(t, rotate(real0.Add(-150*time.Minute)), "nothing to do: waiting until ")

		// Steady -> the next key published (in the store, then by the
		// signer and kube-apiserver), not signing.
		out := rotate(real0.Add(-2 * time.Hour))
		require.Contains(t, out, "done: create the next key")
		set := kidsOfJWKS(t, readFile(t, filepath.Join(store, "openid", "v1", "jwks")))
		require.Len(t, set, 2, out)
		kid2 := set[slices.IndexFunc(set, func(k string) bool { return k != kid1 })]
		served(kid1, kid2)
		require.Equal(t, kid1, mint().kid, "the next key does not sign yet")
		verifyAll("next published", time.Now())
		assert.Contains(t, rotate(real0.Add(-90*time.Minute)), "nothing to do: waiting until ")

		// The next key signs; the first stays published everywhere.
		require.Contains(t, rotate(real0.Add(-time.Hour)), "the signing key from")
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			tok, err := requestToken(t.Context(), cp.Clientset(), ns, sa, pod)
			if assert.NoError(c, err) {
				assert.Equal(c, kid2, kidOf(t, tok))
			}
		}, 30*time.Second, 100*time.Millisecond)
		require.Equal(t, kid2, mint().kid)
		verifyAll("next signs", time.Now())
		assert.Contains(t, rotate(real0.Add(-50*time.Minute)), "nothing to do: waiting until ")

		// The old key retired once every token it signed has expired: at
		// the latest exp of its tokens, plus skew, leeway and a second.
		var last time.Time
		for _, i := range all {
			if i.kid == kid1 && i.exp.After(last) {
				last = i.exp
			}
		}
		retire := last.Add(2*time.Minute + time.Second)
		out = rotate(retire)
		require.Contains(t, out, "done: retire kid "+kid1)
		require.Contains(t, out, "withdrawn as planned: kid "+kid1)
		assert.Equal(t, []string{kid2}, kidsOfJWKS(t, readFile(t, filepath.Join(store, "openid", "v1", "jwks"))))
		verifyAll("old key retired", retire)
		// After: tokens of the key that signs now verify in real time; the
		// signer keeps the old key published for kube-apiserver until the
		// retirement the ring file names.
		require.Equal(t, kid2, mint().kid)
		now := time.Now()
		v := publishedValidator(t, srv, issuer, now)
		for n, i := range all {
			if i.kid == kid2 {
				_, err := v.Validate(t.Context(), i.token)
				assert.NoError(t, err, "after: token %d", n)
			}
		}
		served(kid1, kid2)
		out = rotate(retire.Add(time.Minute))
		assert.Contains(t, out, "stage: steady: kid "+kid2+" signs")
		assert.Contains(t, out, "nothing to do: waiting until ")
	})
}

// publishedValidator validates tokens of issuer at at with the key set the
// published directory serves.
func publishedValidator(t *testing.T, srv *httptest.Server, issuer string, at time.Time) *tokens.Validator {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, issuer+oidc.JWKSPath, nil)
	require.NoError(t, err)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(io.LimitReader(resp.Body, jwks.DefaultMaxSetBytes))
	require.NoError(t, err)
	set, err := jwks.ParseSet(body, jwks.ParseOptions{})
	require.NoError(t, err)
	src, err := jwks.NewStaticSource(set.Keys...)
	require.NoError(t, err)
	v, err := tokens.NewValidator(tokens.ValidatorConfig{Issuers: []string{issuer}, Keys: src, Audiences: []string{vault},
		SkipObjectCheck: true, Now: func() time.Time { return at }})
	require.NoError(t, err)
	return v
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
